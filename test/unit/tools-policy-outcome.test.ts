// The pure rules of src/tools: a tool's default policy from its annotations (readOnlyHint true is
// allow, anything else ask; the owner's choice wins), annotations kept to MCP's own fields, a call's
// outcome text (text joined, the rest summarised, cut to 64 KB on a character boundary with the
// original size), and the clean environment holding only what a registration names.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { annotationsOf, defaultPolicy, effectivePolicy } from "../../src/tools/policy.ts";
import { cutToBytes, outcomeOf } from "../../src/tools/outcome.ts";
import { cleanEnvironment, INHERITED_NAMES } from "../../src/tools/env.ts";
import { MAX_OUTPUT_BYTES } from "../../src/tools/limits.ts";

test("defaults: readOnlyHint true is allow; false, missing, or a non-boolean is ask", () => {
  assert.is(defaultPolicy({ readOnlyHint: true }), "allow");
  assert.is(defaultPolicy({ readOnlyHint: false }), "ask");
  assert.is(defaultPolicy({}), "ask");
  assert.is(defaultPolicy(annotationsOf({ readOnlyHint: "true" })), "ask", "a string is not the hint");
  assert.is(defaultPolicy(annotationsOf({ destructiveHint: false, idempotentHint: true })), "ask");
  assert.is(effectivePolicy({ readOnlyHint: true }, "deny"), "deny");
  assert.is(effectivePolicy({}, "allow"), "allow");
  assert.is(effectivePolicy({}, undefined), "ask");
});

test("annotations keep MCP's fields only, of MCP's types", () => {
  assert.equal(annotationsOf({ readOnlyHint: true, title: "T", approve: true, openWorldHint: 1 }), {
    title: "T",
    readOnlyHint: true,
  });
  assert.equal(annotationsOf(null), {});
  assert.equal(annotationsOf("x"), {});
});

test("outcome: text joined, the rest summarised, isError kept", () => {
  const outcome = outcomeOf({
    content: [
      { type: "text", text: "one" },
      { type: "image", data: "AAAA", mimeType: "image/png" },
      { type: "audio", data: "AA==" },
      { type: "resource_link", uri: "file:///x", name: "x" },
      { type: "resource", resource: { uri: "file:///y", text: "embedded" } },
      { type: "resource", resource: { uri: "file:///z", blob: "AA" } },
      { type: "hologram" },
      { type: "text", text: "two" },
    ],
    isError: true,
  });
  const text =
    "one\n[image image/png, 3 bytes]\n[audio, 1 bytes]\n[resource link file:///x]\nembedded\n[resource file:///z]\n[hologram content]\ntwo";
  assert.equal(outcome, { ok: true, text, isError: true, bytes: text.length });
  assert.equal(outcomeOf({ content: [], structuredContent: { n: 1 } }), {
    ok: true,
    text: '{"n":1}',
    isError: false,
    bytes: 7,
  });
  assert.equal(outcomeOf({}), { ok: true, text: "", isError: false, bytes: 0 });
});

test("outcome: cut to 64 KB on a character boundary; bytes is the size sent", () => {
  const big = "é".repeat(MAX_OUTPUT_BYTES); // two bytes each
  const outcome = outcomeOf({ content: [{ type: "text", text: big }] });
  assert.ok(outcome.ok);
  if (!outcome.ok) return;
  assert.is(outcome.bytes, MAX_OUTPUT_BYTES * 2);
  assert.is(Buffer.byteLength(outcome.text), MAX_OUTPUT_BYTES);
  assert.not.ok(outcome.text.includes("\uFFFD"));
  assert.is(cutToBytes("a€", 3), "a", "a three-byte character is not split");
  assert.is(cutToBytes("a€", 4), "a€");
});

test("the clean environment: what the registration names, and the SDK's six, nothing of crows's own", () => {
  const previous = process.env.CROWS_TOKEN;
  process.env.CROWS_TOKEN = "should-not-pass";
  try {
    assert.equal(cleanEnvironment({ API_KEY: "k" }), { API_KEY: "k" });
    assert.ok(INHERITED_NAMES.every((n) => ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"].includes(n)));
  } finally {
    if (previous === undefined) delete process.env.CROWS_TOKEN;
    else process.env.CROWS_TOKEN = previous;
  }
});

test.run();

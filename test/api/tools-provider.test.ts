// Flights with tools against a scripted OpenAI-compatible provider on loopback (streaming SSE
// chunks, tool calls included, as hosted providers stream them) and a real MCP server (the
// filesystem server as a child process on a temporary folder). docs/tools.md.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { ownerFollows } from "../helpers/owner.ts";
import {
  defaultScript,
  roleOfSystemPrompt,
  startFakeOpenAI,
  type FakeCall,
  type FakeOpenAI,
  type FakeReply,
  type FakeScript,
} from "../helpers/fake-openai.ts";
import { startFilesystemCatalog, type TestCatalog } from "../helpers/mcp-catalog.ts";
import type { SseMessage } from "../helpers/sse.ts";

const of = (events: SseMessage[], name: string) => events.filter((e) => e.event === name);
const usage = { prompt_tokens: 40, completion_tokens: 10 };

/** What the crow's earlier calls returned, as the provider receives them (tool messages). */
export const toolResults = (call: FakeCall): string[] =>
  (call.body.messages as Array<{ role: string; content: unknown }>)
    .filter((m) => m.role === "tool")
    .map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)));

const crowCalls = (fake: FakeOpenAI) => fake.calls.filter((c) => roleOfSystemPrompt(c.system) === "crow");

/** A crow that reads notes.txt, then writes out.txt, then answers with what it heard. */
const readThenWrite: FakeScript = (call, i) => {
  if (roleOfSystemPrompt(call.system) !== "crow") return defaultScript(call, i);
  const done = toolResults(call).length;
  const ask = (id: string, name: string, args: object): FakeReply => ({
    toolCalls: [{ id, name, arguments: JSON.stringify(args) }],
    usage,
  });
  if (done === 0) return ask("call-read", "fs__read_text_file", { path: "notes.txt" });
  if (done === 1) return ask("call-write", "fs__write_file", { path: "out.txt", content: "Gaggia it is" });
  return { content: `done; the write said: ${toolResults(call)[1]}`, usage };
};

interface Rig {
  folder: string;
  catalog: TestCatalog;
  fake: FakeOpenAI;
  server: TestServer;
  close(): Promise<void>;
}

async function rig(script: FakeScript, env: Record<string, string> = {}): Promise<Rig> {
  const folder = mkdtempSync(path.join(os.tmpdir(), "crows-tools-"));
  writeFileSync(path.join(folder, "notes.txt"), "the espresso machine is the Gaggia");
  const catalog = await startFilesystemCatalog(folder);
  const fake = await startFakeOpenAI(script);
  const server = await startTestServer({
    deps: { tools: catalog },
    env: {
      CROWS_MODEL: "openai-compatible:fake-model",
      CROWS_MODEL_BASE_URL: fake.url,
      CROWS_APPROVAL_WINDOW_MS: "60000",
      ...env,
    },
  });
  return {
    folder,
    catalog,
    fake,
    server,
    close: async () => {
      await server.close();
      await fake.close();
      await catalog.close();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

test("a read runs at once; a write waits for its approval; approved, the file is written once", async () => {
  const r = await rig(readThenWrite);
  try {
    const res = await r.server.post("/api/lists", { text: "Pick an espresso machine", requester: "tools" });
    const owner = await ownerFollows(r.server.url, res.body.list_id);
    const asked = await owner.sse.waitFor((m) => m.event === "tool.asked", 20_000);
    assert.is(asked.data.tool, "write_file");
    assert.is(asked.data.server, "fs");
    assert.equal(JSON.parse(asked.data.args), { path: "out.txt", content: "Gaggia it is" });
    assert.is(existsSync(path.join(r.folder, "out.txt")), false, "not written while it waits");
    assert.equal(
      r.catalog.calls.map((c) => c.tool),
      ["read_text_file"],
      "the read ran, the write did not",
    );
    const decided = await r.server.post(`/api/tool-calls/${asked.data.call_id}/decision`, { approve: true });
    assert.is(decided.status, 200);
    const events = await owner.finished;
    owner.sse.close();
    assert.is(readFileSync(path.join(r.folder, "out.txt"), "utf8"), "Gaggia it is");
    assert.equal(
      r.catalog.calls.map((c) => c.tool),
      ["read_text_file", "write_file"],
      "each call made once",
    );
    // The model heard each result: the read's text on step 2, the write's on step 3.
    const crows = crowCalls(r.fake);
    assert.is(crows.length, 3);
    assert.ok(
      crows.every((c) => c.body.stream === true),
      "every step streams",
    );
    assert.ok(Array.isArray(crows[0]!.body.tools) && crows[0]!.body.tools.length > 0, "the tools are offered");
    const offered = crows[0]!.body.tools.map((t: { function: { name: string } }) => t.function.name);
    assert.ok(offered.includes("fs__read_text_file") && offered.includes("fs__write_file"));
    assert.ok(toolResults(crows[1]!)[0]!.includes("Gaggia"));
    assert.ok(toolResults(crows[2]!)[1]!.includes("Successfully wrote"));
    const names = events.map((e) => e.event).filter((n) => n.startsWith("tool."));
    assert.equal(names, ["tool.called", "tool.returned", "tool.asked", "tool.decided", "tool.called", "tool.returned"]);
    const [readCall, writeCall] = of(events, "tool.called").map((e) => e.data);
    assert.is(readCall.allowed_by, "allow");
    assert.is(writeCall.allowed_by, "approved");
    assert.equal(writeCall.approved_by, { kind: "owner" });
    const landed = of(events, "crow.landed").filter((e) => e.data.crow !== "Sentry");
    assert.is(landed.length, 1, "one flight, however many steps");
    assert.is(landed[0]!.data.tokens, 150, "its tokens are every step's");
    assert.ok(of(events, "item.answered")[0]!.data.answer.includes("Successfully wrote"));
    const returned = of(events, "tool.returned").map((e) => e.data);
    assert.ok(returned.every((e) => typeof e.duration_ms === "number" && e.ok === true));
  } finally {
    await r.close();
  }
});

test("refused with a reason: not written, and the crow's next model call carries the reason", async () => {
  const r = await rig(readThenWrite);
  try {
    const res = await r.server.post("/api/lists", { text: "Pick an espresso machine", requester: "tools" });
    const owner = await ownerFollows(r.server.url, res.body.list_id);
    const asked = await owner.sse.waitFor((m) => m.event === "tool.asked", 20_000);
    const decided = await r.server.post(`/api/tool-calls/${asked.data.call_id}/decision`, {
      approve: false,
      reason: "keep the folder clean",
    });
    assert.equal(decided.body, { call_id: asked.data.call_id, decision: "refused" });
    const events = await owner.finished;
    owner.sse.close();
    assert.is(existsSync(path.join(r.folder, "out.txt")), false, "not written");
    assert.equal(
      r.catalog.calls.map((c) => c.tool),
      ["read_text_file"],
    );
    const last = crowCalls(r.fake).at(-1)!;
    assert.ok(toolResults(last)[1]!.includes("keep the folder clean"), "the reason reaches the model");
    assert.ok(toolResults(last)[1]!.includes("refused"));
    const decidedEvent = of(events, "tool.decided")[0]!.data;
    assert.is(decidedEvent.decision, "refused");
    assert.is(decidedEvent.reason, "keep the folder clean");
    assert.equal(decidedEvent.actor, { kind: "owner" });
    assert.is(of(events, "tool.called").length, 1, "only the read went out");
    assert.is(of(events, "item.answered").length, 1, "the crow went on without it");
    // A refused call moves no trust: every trust.changed follows a verdict (docs/tools.md).
    events.forEach((e, i) => {
      if (e.event === "trust.changed")
        assert.ok(["verdict", "trust.changed"].includes(events[i - 1]!.event), "trust moves on verdicts only");
    });
  } finally {
    await r.close();
  }
});

test("unanswered: refused at the window's end (timeout), never written", async () => {
  const r = await rig(readThenWrite, { CROWS_APPROVAL_WINDOW_MS: "3000" });
  try {
    const res = await r.server.post("/api/lists", { text: "Pick an espresso machine", requester: "tools" });
    const owner = await ownerFollows(r.server.url, res.body.list_id);
    const events = await owner.finished;
    owner.sse.close();
    const asked = of(events, "tool.asked")[0]!.data;
    const decided = of(events, "tool.decided")[0]!.data;
    assert.is(decided.decision, "timeout");
    assert.equal(decided.actor, { kind: "system" });
    assert.ok(Date.parse(decided.ts) >= Date.parse(asked.deadline), "not before its deadline");
    assert.is(existsSync(path.join(r.folder, "out.txt")), false);
    assert.ok(toolResults(crowCalls(r.fake).at(-1)!)[1]!.includes("did not approve this call in time"));
    const late = await r.server.post(`/api/tool-calls/${asked.call_id}/decision`, { approve: true });
    assert.is(late.status, 404, "an answer after the deadline decides nothing");
  } finally {
    await r.close();
  }
});

test("the budget stops a tool loop: checked before every model call, the item is skipped with budget", async () => {
  // Each call costs 250 tokens: the Sentry's leaves 350 of 600; the crow's first step leaves 100
  // (still under), its second spends past it, so no third model call goes out.
  const alwaysRead: FakeScript = (call, i) => {
    const fixed = { prompt_tokens: 200, completion_tokens: 50 };
    if (roleOfSystemPrompt(call.system) !== "crow") return { ...(defaultScript(call, i) as FakeReply), usage: fixed };
    const n = toolResults(call).length;
    return {
      toolCalls: [{ id: `read-${n}`, name: "fs__read_text_file", arguments: JSON.stringify({ path: "notes.txt" }) }],
      usage: fixed,
    };
  };
  const r = await rig(alwaysRead, { CROWS_TOKEN_BUDGET: "600" });
  try {
    const res = await r.server.post("/api/lists", { text: "Pick an espresso machine", requester: "tools" });
    const owner = await ownerFollows(r.server.url, res.body.list_id);
    const events = await owner.finished;
    owner.sse.close();
    assert.is(crowCalls(r.fake).length, 2, "the budget was checked before the third model call");
    const landed = of(events, "crow.landed").filter((e) => e.data.crow !== "Sentry");
    assert.is(landed.length, 1);
    assert.is(landed[0]!.data.ok, false);
    assert.is(landed[0]!.data.tokens, 500);
    assert.equal(
      of(events, "item.skipped").map((e) => e.data.reason),
      ["budget"],
    );
    assert.is(of(events, "list.finished")[0]!.data.tokens_used, 750);
    assert.is(of(events, "tool.called").length, 2);
  } finally {
    await r.close();
  }
});

test("the step limit stops a tool loop: the last step offers no calls, and the crow answers in words", async () => {
  const readUntilTold: FakeScript = (call, i) => {
    if (roleOfSystemPrompt(call.system) !== "crow") return defaultScript(call, i);
    if (call.body.tool_choice === "none") return { content: "enough reading", usage };
    const n = toolResults(call).length;
    return {
      toolCalls: [{ id: `read-${n}`, name: "fs__read_text_file", arguments: JSON.stringify({ path: "notes.txt" }) }],
      usage,
    };
  };
  const r = await rig(readUntilTold, { CROWS_TOOL_STEPS: "3" });
  try {
    const res = await r.server.post("/api/lists", { text: "Pick an espresso machine", requester: "tools" });
    const owner = await ownerFollows(r.server.url, res.body.list_id);
    const events = await owner.finished;
    owner.sse.close();
    const crows = crowCalls(r.fake);
    assert.is(crows.length, 3, "three model calls, no more");
    assert.is(crows[2]!.body.tool_choice, "none");
    assert.is(of(events, "tool.called").length, 2);
    assert.is(of(events, "item.answered")[0]!.data.answer, "enough reading");
  } finally {
    await r.close();
  }
});

test("provider weather inside the loop: a 429 between steps is waited out; the call already made is not made again", async () => {
  let limited = false;
  const readThen429: FakeScript = (call, i) => {
    if (roleOfSystemPrompt(call.system) !== "crow") return defaultScript(call, i);
    const done = toolResults(call).length;
    if (done === 0)
      return {
        toolCalls: [{ id: "read-0", name: "fs__read_text_file", arguments: JSON.stringify({ path: "notes.txt" }) }],
        usage,
      };
    if (!limited) {
      limited = true;
      return { status: 429, headers: { "retry-after": "0" } };
    }
    return { content: `read it: ${toolResults(call)[0]}`, usage };
  };
  const r = await rig(readThen429, { CROWS_MODEL_BACKOFF_MS: "20" });
  try {
    const res = await r.server.post("/api/lists", { text: "Pick an espresso machine", requester: "tools" });
    const owner = await ownerFollows(r.server.url, res.body.list_id);
    const events = await owner.finished;
    owner.sse.close();
    assert.is(limited, true);
    assert.is(crowCalls(r.fake).length, 3, "step 1, the 429, step 2 again");
    assert.is(r.catalog.calls.length, 1, "the read was made once");
    const landed = of(events, "crow.landed").filter((e) => e.data.crow !== "Sentry");
    assert.equal(
      landed.map((e) => e.data.ok),
      [true],
      "one flight, landed once",
    );
    assert.ok(of(events, "item.answered")[0]!.data.answer.includes("Gaggia"));
  } finally {
    await r.close();
  }
});

test.run();

// The small rules of flights with tools (docs/tools.md): a tool's output cut to its size before
// the model sees it, a call's end as the model reads it, the offline brain's tool rule, and which
// tool events fan out as webhooks.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cutToBytes, endOf } from "../../src/flock/tool-results.ts";
import { MAX_READS, offlineToolCalls, offlineToolSummary } from "../../src/models/offline-tools.ts";
import { webhookTypeOf } from "../../src/webhooks/event-types.ts";
import type { ToolOffer, ToolTurn } from "../../src/models/model.ts";

const offer = (tool: string, readOnly: boolean): ToolOffer => ({
  name: `fs__${tool}`,
  tool,
  description: "",
  inputSchema: { type: "object" },
  readOnly,
});
const offered = [offer("read_text_file", true), offer("write_file", false)];
const turn = (steps: ToolTurn["steps"] = [], final = false): ToolTurn => ({ offered, steps, final });

test("output is cut to its size in bytes, never inside a character, and says so", () => {
  assert.is(cutToBytes("hello", 10), "hello");
  assert.is(cutToBytes("héllo", 2), "h", "é is two bytes: not split");
  const end = endOf({ ok: true, text: "x".repeat(1000), isError: false, bytes: 1000 }, 256);
  assert.ok(end.ok);
  assert.ok(end.result.startsWith("x".repeat(256)));
  assert.ok(end.result.includes("[cut: the tool gave 1000 bytes; the first 256 are shown]"));
  assert.equal(endOf({ ok: false, error: { code: "tool_timeout", message: "no answer" } }, 256), {
    ok: false,
    result: "error tool_timeout: no answer",
    error: "tool_timeout",
  });
  assert.is(endOf({ ok: true, text: "denied", isError: true, bytes: 6 }, 256).ok, false, "a tool's own error");
});

test("offline: a named file is read with a read-only tool; a write asks write_file; anything else calls nothing", () => {
  assert.equal(offlineToolCalls("read notes.txt", turn()), [
    { id: "offline-call-1", name: "fs__read_text_file", args: { path: "notes.txt" } },
  ]);
  assert.equal(offlineToolCalls("summarize ./todo.md please", turn())[0]!.args, { path: "./todo.md" });
  assert.equal(offlineToolCalls("write hello to out.txt", turn()), [
    { id: "offline-call-1", name: "fs__write_file", args: { path: "out.txt", content: "hello" } },
  ]);
  assert.equal(offlineToolCalls('write "two words" into b.md', turn())[0]!.args, {
    path: "b.md",
    content: "two words",
  });
  assert.equal(offlineToolCalls("buy milk", turn()), []);
  assert.equal(offlineToolCalls("learn Node.js, e.g. its streams, for v1.2", turn()), [], "no text file named");
  assert.equal(offlineToolCalls("check data.CSV.", turn())[0]!.args, { path: "data.CSV" });
  assert.equal(offlineToolCalls("compare a.txt and ./b.md, then a.txt again", turn()), [
    { id: "offline-call-1", name: "fs__read_text_file", args: { path: "a.txt" } },
    { id: "offline-call-2", name: "fs__read_text_file", args: { path: "./b.md" } },
  ]);
  assert.is(offlineToolCalls("read a.txt b.txt c.txt d.txt e.txt", turn()).length, MAX_READS, "at most MAX_READS");
  assert.equal(offlineToolCalls("read notes.txt", turn([], true)), [], "the last step calls nothing");
  const after = turn([
    { text: "", calls: [{ id: "1", name: "fs__read_text_file", args: { path: "n.txt" }, result: "hi" }] },
  ]);
  assert.equal(offlineToolCalls("read n.txt", after), [], "one round of calls, then words");
  assert.is(offlineToolSummary(after), "fs__read_text_file n.txt: hi");
  const readOnlyElsewhere = { offered: [offer("read_text_file", false)], steps: [], final: false };
  assert.equal(offlineToolCalls("read notes.txt", readOnlyElsewhere), [], "a read goes only to a read-only tool");
});

test("tool.asked and tool.decided fan out as tool_call.requested and tool_call.decided; called/returned do not", () => {
  assert.is(webhookTypeOf("tool.asked", "{}"), "tool_call.requested");
  assert.is(webhookTypeOf("tool.decided", "{}"), "tool_call.decided");
  assert.is(webhookTypeOf("tool.called", "{}"), null);
  assert.is(webhookTypeOf("tool.returned", "{}"), null);
});

test.run();

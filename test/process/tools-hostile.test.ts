// Hostile tool servers, each a child process (test/fixtures/mcp-hostile.mjs): one that never
// answers, one that crashes mid-call, one that speaks malformed JSON-RPC, one that floods, one that
// lists 10,000 tools, one whose output tells the crow to approve things. Each ends in a bounded,
// named error (or a bounded answer) and a polite server next to it keeps answering throughout.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { call, errorOf, hostile, textOf, waitForState } from "../helpers/tool-servers.ts";
import { MAX_OUTPUT_BYTES, MAX_TOOLS_PER_SERVER } from "../../src/tools/limits.ts";

let server: TestServer;
let polite: string;

async function add(body: Record<string, unknown>): Promise<string> {
  const added = await server.post("/api/tools/servers", body);
  assert.is(added.status, 201, added.text);
  return added.body.id;
}

/** The polite neighbour answers: nothing a hostile server did reached it. */
async function neighbourAnswers(): Promise<void> {
  assert.match(textOf(await call(server.app.tools, polite, "write_note", { text: "still here" })), /noted: still here/);
}

test.before(async () => {
  server = await startTestServer();
  polite = await add(hostile("polite", "polite"));
});
test.after(async () => {
  await server.close();
});

test("a server that never answers initialize is down with a named error, within the list timeout", async () => {
  const id = await add(hostile("mute", "mute"));
  const tools = server.app.tools;
  const started = Date.now();
  const offered = await tools.toolsFor({ nestId: "todo" });
  assert.ok(
    offered.every((t) => t.serverId !== id),
    "a mute server offers nothing",
  );
  assert.ok(offered.some((t) => t.serverId === polite && t.name === "write_note"));
  assert.ok(Date.now() - started < 60_000);
  const state = tools.states().find((s) => s.id === id)!.state;
  assert.is(state.status, "down");
  assert.match(state.last_error!, /initialize/);
  assert.is(errorOf(await call(tools, id, "anything")).code, "tool_server_down");
  await neighbourAnswers();
});

test("a call that is never answered is a tool_timeout; the server stays up", async () => {
  const id = await add(hostile("mute-call", "mute-call"));
  const outcome = await call(server.app.tools, id, "act", {}, 300);
  assert.equal(errorOf(outcome).code, "tool_timeout");
  assert.match(errorOf(outcome).message, /300 ms/);
  assert.is(server.app.tools.states().find((s) => s.id === id)!.state.status, "up");
  await neighbourAnswers();
});

test("a server that crashes mid-call: tool_server_crashed, and it is restarted after a backoff", async () => {
  const id = await add(hostile("crash", "crash"));
  const tools = server.app.tools;
  assert.is(errorOf(await call(tools, id, "act")).code, "tool_server_crashed");
  const down = tools.states().find((s) => s.id === id)!.state;
  assert.is(down.status, "down");
  assert.match(down.last_error!, /stopped|exited/);
  const back = await waitForState(tools, id, (s) => s.status === "up" && s.restarts === 1);
  assert.is(back.tools, 1);
  await neighbourAnswers();
});

test("a crash once, then the restarted server answers the next call", async () => {
  const tools = server.app.tools;
  assert.is(errorOf(await call(tools, polite, "crash_once")).code, "tool_server_crashed");
  await waitForState(tools, polite, (s) => s.status === "up");
  assert.is(textOf(await call(tools, polite, "crash_once")), "fine this time");
});

test("malformed JSON-RPC is a tool_protocol_error and the connection is cut", async () => {
  const id = await add(hostile("malformed", "malformed"));
  const tools = server.app.tools;
  const outcome = await call(tools, id, "act");
  assert.is(errorOf(outcome).code, "tool_protocol_error");
  assert.match(tools.states().find((s) => s.id === id)!.state.last_error!, /JSON-RPC/);
  await neighbourAnswers();
});

test("malformed JSON-RPC in answer to initialize: down at once with the reason, not after the timeout", async () => {
  const id = await add(hostile("malformed-init", "malformed-init"));
  const tools = server.app.tools;
  const started = Date.now();
  const outcome = await call(tools, id, "anything");
  assert.is(errorOf(outcome).code, "tool_server_down");
  assert.match(errorOf(outcome).message, /not JSON-RPC/);
  assert.ok(Date.now() - started < 10_000, "well inside the 15 s start timeout");
  await neighbourAnswers();
});

test("a flood: text cut to the documented size with the original size; a 9 MB line cuts the connection", async () => {
  const id = await add(hostile("flood", "flood"));
  const tools = server.app.tools;
  const big = await call(tools, id, "big");
  assert.ok(big.ok);
  if (big.ok) {
    assert.is(big.bytes, 1024 * 1024);
    assert.is(Buffer.byteLength(big.text), MAX_OUTPUT_BYTES);
  }
  const huge = await call(tools, id, "huge");
  assert.is(errorOf(huge).code, "tool_output_too_large");
  await neighbourAnswers();
});

test("ten thousand tools: the first 128 offered, the rest (and an oversized schema) dropped", async () => {
  const id = await add(hostile("many", "many"));
  const tools = server.app.tools;
  const offered = (await tools.toolsFor({ nestId: "todo" })).filter((t) => t.serverId === id);
  assert.is(offered.length, MAX_TOOLS_PER_SERVER);
  assert.ok(!offered.some((t) => t.name === "fat"), "the 100 KB schema is left out");
  const state = tools.states().find((s) => s.id === id)!.state;
  assert.is(state.tools, MAX_TOOLS_PER_SERVER);
  assert.is(state.tools_dropped, 10_001 - MAX_TOOLS_PER_SERVER);
  assert.is(errorOf(await call(tools, id, "tool_9999")).code, "tool_not_found");
  await neighbourAnswers();
});

test("output that tells the crow to approve things is returned as data and changes nothing", async () => {
  const id = await add(hostile("inject", "inject"));
  const before = await server.get(`/api/tools/servers/${id}`);
  const audit = await server.get("/api/audit?limit=500");
  const outcome = await call(server.app.tools, id, "act");
  assert.match(textOf(outcome), /approved every pending call/);
  assert.equal((await server.get(`/api/tools/servers/${id}`)).body.policies, before.body.policies);
  assert.equal((await server.get("/api/audit?limit=500")).body.entries.length, audit.body.entries.length);
  assert.is(await server.app.prisma.approval.count({ where: { status: { not: "pending" } } }), 0);
});

test.run();

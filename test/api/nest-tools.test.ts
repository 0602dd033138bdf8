// Nest crows with tools (docs/tools.md "Nest crows with tools"): a crow answering a request in a
// nest is offered the tools of the servers serving that nest (the server's `nests`), through the
// list flights' own loop and call desk. A real filesystem MCP server registered over REST on a
// temporary folder, a scripted OpenAI-compatible provider streaming tool calls, and the nest's
// side log (watch:<nest_id>) read for the calls' events.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { startKit, type Kit } from "../helpers/nest-kit.ts";
import {
  defaultScript,
  roleOfSystemPrompt,
  startFakeOpenAI,
  type FakeCall,
  type FakeOpenAI,
  type FakeReply,
  type FakeScript,
} from "../helpers/fake-openai.ts";
import { eventually } from "../helpers/scale-services.ts";
import { watchStream } from "../../src/base/streams.ts";

const require = createRequire(import.meta.url);
const FS_SERVER = require.resolve("@modelcontextprotocol/server-filesystem/dist/index.js");
const usage = { prompt_tokens: 40, completion_tokens: 10 };

const toolResults = (call: FakeCall): string[] =>
  (call.body.messages as Array<{ role: string; content: unknown }>)
    .filter((m) => m.role === "tool")
    .map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)));

/** A crow that reads notes.txt, then writes out.txt, then answers with what the write said. */
const readThenWrite: FakeScript = (call, i) => {
  if (roleOfSystemPrompt(call.system) !== "crow") return defaultScript(call, i);
  const done = toolResults(call).length;
  const ask = (id: string, name: string, args: object): FakeReply => ({
    toolCalls: [{ id, name, arguments: JSON.stringify(args) }],
    usage,
  });
  // A crow offered no tools answers in words at once.
  if (!Array.isArray(call.body.tools)) return { content: "answered without tools", usage };
  if (done === 0) return ask("call-read", "fs__read_text_file", { path: "notes.txt" });
  if (done === 1) return ask("call-write", "fs__write_file", { path: "out.txt", content: "Gaggia it is" });
  return { content: `done; the write said: ${toolResults(call)[1]}`, usage };
};

interface Rig {
  folder: string;
  fake: FakeOpenAI;
  kit: Kit;
  close(): Promise<void>;
}

/** A server with nest `bench` (Hugin) served by the filesystem server, and todo not served. */
async function rig(env: Record<string, string> = {}): Promise<Rig> {
  const folder = mkdtempSync(path.join(os.tmpdir(), "crows-nest-tools-"));
  writeFileSync(path.join(folder, "notes.txt"), "the espresso machine is the Gaggia");
  const fake = await startFakeOpenAI(readThenWrite);
  const kit = await startKit({
    env: {
      CROWS_MODEL: "openai-compatible:fake-model",
      CROWS_MODEL_BASE_URL: fake.url,
      CROWS_APPROVAL_WINDOW_MS: "60000",
      ...env,
    },
  });
  const nest = await kit.server.post("/api/nests", { name: "bench", crows: ["Hugin"] });
  assert.is(nest.status, 201);
  const added = await kit.server.post("/api/tools/servers", {
    name: "fs",
    command: process.execPath,
    args: [FS_SERVER, folder],
    nests: ["bench"],
  });
  assert.is(added.status, 201, JSON.stringify(added.body));
  // Started now (listing its tools starts it), so a request's clock never counts its start-up.
  const shown = await kit.server.get(`/api/tools/servers/${added.body.id}`);
  assert.is(shown.status, 200, JSON.stringify(shown.body));
  return {
    folder,
    fake,
    kit,
    close: async () => {
      await kit.close();
      await fake.close();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

const crowCalls = (fake: FakeOpenAI) => fake.calls.filter((c) => roleOfSystemPrompt(c.system) === "crow");

/** The tool events on the nest's side log, as payloads with their names. */
async function toolEvents(kit: Kit, nestId: string): Promise<Array<{ name: string; data: any }>> {
  const events = await kit.server.app.log.read(watchStream(nestId), 0, 100_000);
  return events.filter((e) => e.name.startsWith("tool.")).map((e) => ({ name: e.name, data: JSON.parse(e.payload) }));
}

/** Posts the owner's request to Hugin in bench and waits until its write call asks. */
async function requestAndWaitForAsk(kit: Kit): Promise<{ requestId: string; asked: any }> {
  const posted = await kit.post("bench", {
    author: "owner",
    kind: "request",
    to: "Hugin",
    text: "Pick an espresso machine and note it down",
  });
  assert.is(posted.status, 201);
  const asked = await eventually("the write call to ask", async () => {
    const pending = (await kit.server.get("/api/tool-calls")).body.tool_calls as any[];
    return pending.find((c) => c.nest_id === "bench");
  });
  return { requestId: posted.body.msg_id, asked };
}

async function deliverOf(kit: Kit, requestId: string): Promise<any> {
  return eventually(
    "Hugin's deliver",
    async () =>
      (await kit.messages("bench")).find(
        (m: any) => m.refers_to === requestId && m.author === "Hugin" && m.kind !== "claim",
      ),
    30_000,
  );
}

test("a nest crow reads at once; its write asks and, approved, writes once; the events are the nest's", async () => {
  const r = await rig();
  try {
    const { requestId, asked } = await requestAndWaitForAsk(r.kit);
    assert.equal(
      [asked.tool, asked.server, asked.crow, asked.list_id, asked.item_id, asked.refers_to],
      ["write_file", "fs", "Hugin", "", "", requestId],
    );
    assert.equal(asked.args, { path: "out.txt", content: "Gaggia it is" });
    assert.is(existsSync(path.join(r.folder, "out.txt")), false, "not written while it waits");
    const decided = await r.kit.server.post(`/api/tool-calls/${asked.call_id}/decision`, { approve: true });
    assert.equal(decided.body, { call_id: asked.call_id, decision: "approved" });
    const deliver = await deliverOf(r.kit, requestId);
    assert.is(deliver.kind, "deliver");
    assert.ok(deliver.text.includes("Successfully wrote"), deliver.text);
    assert.is(readFileSync(path.join(r.folder, "out.txt"), "utf8"), "Gaggia it is");
    // The model was offered the nest's tools and heard each result.
    const crows = crowCalls(r.fake);
    assert.is(crows.length, 3);
    const offered = crows[0]!.body.tools.map((t: { function: { name: string } }) => t.function.name);
    assert.ok(offered.includes("fs__read_text_file") && offered.includes("fs__write_file"));
    assert.ok(toolResults(crows[1]!)[0]!.includes("Gaggia"));
    // The calls' events, on the nest's side log: each call once, the write after its approval.
    const events = await toolEvents(r.kit, "bench");
    assert.equal(
      events.map((e) => e.name),
      ["tool.called", "tool.returned", "tool.asked", "tool.decided", "tool.called", "tool.returned"],
    );
    for (const { data } of events) {
      assert.is(data.nest_id, "bench");
      assert.is(data.refers_to, requestId);
      assert.is("list_id" in data || "item_id" in data, false, "a nest call names no list or item");
    }
    const called = events.filter((e) => e.name === "tool.called").map((e) => e.data);
    assert.equal(
      called.map((c) => [c.tool, c.allowed_by]),
      [
        ["read_text_file", "allow"],
        ["write_file", "approved"],
      ],
    );
    assert.equal(called[1]!.approved_by, { kind: "owner" });
    // Nothing of it reached the nest stream, whose seq is the message number.
    const messages = await r.kit.messages("bench");
    assert.ok(messages.every((m: any, i: number) => m.msg_id === `bench-${i + 1}`));
    const rows = await r.kit.server.app.prisma.toolCall.findMany({ where: { nestId: "bench" } });
    assert.equal(rows.map((row) => row.status).sort(), ["returned", "returned"]);
    assert.ok(rows.every((row) => row.landed));
  } finally {
    await r.close();
  }
});

test("refused with a reason: not written, the crow's next model call carries the reason, and it answers", async () => {
  const r = await rig();
  try {
    const { requestId, asked } = await requestAndWaitForAsk(r.kit);
    const decided = await r.kit.server.post(`/api/tool-calls/${asked.call_id}/decision`, {
      approve: false,
      reason: "keep the bench folder clean",
    });
    assert.equal(decided.body, { call_id: asked.call_id, decision: "refused" });
    const deliver = await deliverOf(r.kit, requestId);
    assert.is(deliver.kind, "deliver", "the crow went on without it");
    assert.is(existsSync(path.join(r.folder, "out.txt")), false, "not written");
    const last = crowCalls(r.fake).at(-1)!;
    assert.ok(toolResults(last)[1]!.includes("keep the bench folder clean"), "the reason reaches the model");
    assert.ok(toolResults(last)[1]!.includes("refused"));
    const events = await toolEvents(r.kit, "bench");
    const decidedEvent = events.find((e) => e.name === "tool.decided")!.data;
    assert.equal(
      [decidedEvent.decision, decidedEvent.reason, decidedEvent.actor],
      ["refused", "keep the bench folder clean", { kind: "owner" }],
    );
    assert.is(events.filter((e) => e.name === "tool.called").length, 1, "only the read went out");
    const again = await r.kit.server.post(`/api/tool-calls/${asked.call_id}/decision`, { approve: true });
    assert.is(again.status, 404, "decided once");
  } finally {
    await r.close();
  }
});

test("a crow waiting on the owner's approval is not nudged: silence refuses the write at the window's end", async () => {
  // The window (6 s) outlasts the nudge (2 s) and its decline (2 s more): the wait is the owner's.
  const r = await rig({ CROWS_APPROVAL_WINDOW_MS: "6000", CROWS_NUDGE_AFTER_MS: "2000" });
  try {
    const { requestId, asked } = await requestAndWaitForAsk(r.kit);
    const deliver = await deliverOf(r.kit, requestId);
    assert.is(deliver.kind, "deliver", deliver.text);
    assert.is(existsSync(path.join(r.folder, "out.txt")), false, "silence wrote nothing");
    const decided = (await toolEvents(r.kit, "bench")).find((e) => e.name === "tool.decided")!.data;
    assert.equal([decided.call_id, decided.decision], [asked.call_id, "timeout"]);
    assert.ok(toolResults(crowCalls(r.fake).at(-1)!)[1]!.includes("did not approve this call in time"));
    const messages = await r.kit.messages("bench");
    const nudgeAt = (await r.kit.server.app.prisma.message.findMany({ where: { nestId: "bench", kind: "nudge" } })).map(
      (m) => m.createdAt.getTime(),
    );
    assert.ok(
      nudgeAt.every((at) => at > Date.parse(decided.ts)),
      "no nudge while the call waited on the owner",
    );
    assert.equal(
      messages.filter((m: any) => m.refers_to === requestId && m.kind === "decline"),
      [],
      "no decline for the crow",
    );
  } finally {
    await r.close();
  }
});

test("a nest the server does not serve: its crow is offered no tools", async () => {
  const r = await rig();
  try {
    const posted = await r.kit.post("todo", {
      author: "owner",
      kind: "request",
      to: "Munin",
      text: "Pick an espresso machine",
    });
    assert.is(posted.status, 201);
    const deliver = await eventually(
      "Munin's deliver",
      async () =>
        (await r.kit.messages("todo")).find(
          (m: any) => m.refers_to === posted.body.msg_id && m.author === "Munin" && m.kind === "deliver",
        ),
      30_000,
    );
    assert.is(deliver.text, "answered without tools");
    const crows = crowCalls(r.fake);
    assert.is(crows.length, 1);
    assert.is(crows[0]!.body.tools, undefined, "no tools offered");
    assert.equal(await toolEvents(r.kit, "todo"), []);
    assert.is(await r.kit.server.app.prisma.toolCall.count(), 0);
  } finally {
    await r.close();
  }
});

test.run();

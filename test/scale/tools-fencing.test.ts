// At most once across instances (docs/tools.md "At most once"): two real instances on one
// PostgreSQL + Redis, a scripted streaming provider on loopback whose crow asks for a write, and
// real MCP servers (the filesystem server, connected by the owner over REST; a Streamable HTTP
// server built with the SDK in this process that counts every call, whichever instance sent it,
// and holds calls or tool listings in place). The instance running the list (A) is killed -9, or
// frozen with SIGSTOP past its lease and thawed, while a call waits for approval, is approved but
// not yet started, or is in the air; B takes the list over. The call waits to its original
// deadline, is never sent twice, a call in the air ends as `tool_outcome_unknown`, and the thawed
// instance writes no event and sends no call.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import {
  defaultScript,
  roleOfSystemPrompt,
  startFakeOpenAI,
  type FakeOpenAI,
  type FakeScript,
} from "../helpers/fake-openai.ts";
import { crash } from "../helpers/process.ts";
import { processPair, steppedDownLines, type ProcessPair } from "../helpers/process-pair.ts";
import { json } from "../helpers/json-http.ts";
import { serviceTests } from "../helpers/scale-services.ts";
import { ownerFollows, type OwnerRun } from "../helpers/owner.ts";
import { assertOneStory, replayFromLog, type LoggedEvent } from "../helpers/one-story.ts";
import { startGatedMcpServer } from "../helpers/mcp-gated.ts";
import { FILESYSTEM } from "../helpers/tool-servers.ts";
import type { SseMessage } from "../helpers/sse.ts";

const { svc, it } = serviceTests("tools-fencing");

const LEASE_MS = 3000;
const usage = { prompt_tokens: 40, completion_tokens: 10 };

/** The crow asks for one call of `tool`, then answers with what it was told. */
function crowCalls(tool: string, args: object): FakeScript {
  return (call, i) => {
    if (roleOfSystemPrompt(call.system) !== "crow") return defaultScript(call, i);
    const told = (call.body.messages as Array<{ role: string; content: unknown }>)
      .filter((m) => m.role === "tool")
      .map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)));
    if (told.length === 0) return { toolCalls: [{ id: "call-1", name: tool, arguments: JSON.stringify(args) }], usage };
    return { content: `done; the tool said: ${told.join(" | ")}`, usage };
  };
}

const pair = (fake: FakeOpenAI): Promise<ProcessPair> =>
  processPair(svc!, fake, {
    dirPrefix: "crows-toolfence",
    leaseMs: LEASE_MS,
    env: { CROWS_TOOL_TIMEOUT_MS: "600000" },
  });

/** The owner connects a tool server on A (stored in PostgreSQL: B finds it when it first needs it). */
async function connect(p: ProcessPair, server: object): Promise<void> {
  const added = await json(`${p.a.url}/api/tools/servers`, "POST", server);
  assert.is(added.status, 201, JSON.stringify(added.body));
}

/** A one-item list posted to A, so A claims and runs it; the owner follows (and answers verdicts) on B. */
async function listOnA(p: ProcessPair, text: string): Promise<{ listId: string; owner: OwnerRun }> {
  const posted = await json(`${p.a.url}/api/lists`, "POST", { text, requester: "tool-fencing" });
  assert.is(posted.status, 202);
  const listId = posted.body.list_id as string;
  const owner = await ownerFollows(p.b.url, listId, {}, 240_000);
  owner.finished.catch(() => {}); // a test that fails first stops B under it: its own failure is the one to see
  return { listId, owner };
}

async function approveOnB(p: ProcessPair, asked: SseMessage): Promise<void> {
  const decided = await json(`${p.b.url}/api/tool-calls/${asked.data.call_id}/decision`, "POST", { approve: true });
  assert.is(decided.status, 200, JSON.stringify(decided.body));
}

/** B took the list over: the flight A left in the air is landed as lost, by B, at epoch 2. */
const lostLanding = (m: SseMessage) => m.event === "crow.landed" && /instance lost/.test(m.data.error ?? "");

async function within<T>(what: string, promise: Promise<T>, ms = 90_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The event that proves the thawed A is done with the list: its one line saying it stepped down. */
async function steppedDown(p: ProcessPair, listId: string): Promise<void> {
  const lines = await steppedDownLines(p.a, `list ${listId}`, 60_000);
  assert.is(lines.length, 1, lines.join("\n"));
  assert.match(lines[0]!, /this instance held epoch 1, the list is at epoch 2/);
}

/** A failure, with the tail of each instance's log lines (what a loaded machine did meanwhile). */
function withLogs(p: ProcessPair, error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const tail = (text: string) => text.split("\n").slice(-15).join("\n");
  error.message += `\n--- A:\n${tail(p.a.output().stderr)}\n--- B:\n${tail(p.b.output().stderr)}`;
  return error;
}

const named = (events: LoggedEvent[], name: string) => events.filter((e) => e.name === name);

async function finish(p: ProcessPair, listId: string, owner: OwnerRun): Promise<LoggedEvent[]> {
  try {
    await owner.finished;
  } finally {
    owner.sse.close();
  }
  const events = await replayFromLog(p.dbUrl, `list:${listId}`);
  assertOneStory(events, 1);
  return events;
}

it("kill -9 while a write waits for approval: B takes over, the call still waits to its deadline; approved, written once", async () => {
  const folder = mkdtempSync(path.join(os.tmpdir(), "crows-toolfence-files-"));
  const out = path.join(folder, "out.txt");
  const fake = await startFakeOpenAI(crowCalls("fs__write_file", { path: out, content: "written once" }));
  const p = await pair(fake);
  try {
    await connect(p, { name: "fs", command: process.execPath, args: [FILESYSTEM, folder], cwd: folder });
    const { listId, owner } = await listOnA(p, "Write the note to out.txt");
    const asked = await owner.sse.waitFor((m) => m.event === "tool.asked", 120_000);
    await crash(p.a);
    const lost = await owner.sse.waitFor(lostLanding, 60_000);
    // B flies the item again: its flight resumes from the stored call and waits on it.
    await owner.sse.waitFor(
      (m) => m.event === "crow.flying" && m.data.crow !== "Sentry" && Number(m.id) > Number(lost.id),
      60_000,
    );
    const pending = (await json(`${p.b.url}/api/tool-calls`)).body.tool_calls as Array<{
      call_id: string;
      deadline: string;
    }>;
    assert.equal(
      pending.map((c) => [c.call_id, c.deadline]),
      [[asked.data.call_id, asked.data.deadline]],
      "the same call waits, to its original deadline",
    );
    assert.ok(Date.now() < Date.parse(asked.data.deadline), "still inside its window");
    assert.not.ok(existsSync(out), "not written while it waits");
    await approveOnB(p, asked);
    const events = await finish(p, listId, owner);
    assert.is(readFileSync(out, "utf8"), "written once");
    assert.is(named(events, "tool.asked").length, 1, "asked once, across the takeover");
    assert.equal(
      named(events, "tool.decided").map((e) => e.data.decision),
      ["approved"],
    );
    assert.is(named(events, "tool.called").length, 1, "sent once");
    assert.equal(
      named(events, "tool.returned").map((e) => e.data.ok),
      [true],
    );
  } catch (error) {
    throw withLogs(p, error);
  } finally {
    await p.done();
    rmSync(folder, { recursive: true, force: true });
  }
});

it("kill -9 while a write is in the air: B does not send it again; the crow is told its outcome is unknown", async () => {
  const mail = await startGatedMcpServer();
  mail.holdCalls();
  const fake = await startFakeOpenAI(crowCalls("mail__post_letter", {}));
  const p = await pair(fake);
  try {
    await connect(p, { name: "mail", url: mail.url });
    const { listId, owner } = await listOnA(p, "Post the letter to the bakery");
    await approveOnB(p, await owner.sse.waitFor((m) => m.event === "tool.asked", 120_000));
    await within("A's call to reach the tool", mail.called(1));
    await crash(p.a);
    const returned = await owner.sse.waitFor((m) => m.event === "tool.returned", 90_000);
    assert.equal([returned.data.ok, returned.data.error], [false, "tool_outcome_unknown"]);
    const events = await finish(p, listId, owner);
    assert.is(mail.calls(), 1, "the tool was called once, by A, never again");
    assert.is(named(events, "tool.called").length, 1);
    assert.is(named(events, "tool.returned").length, 1);
    const answer = named(events, "item.answered")[0]!.data.answer as string;
    assert.ok(answer.includes("tool_outcome_unknown"), `the crow was told: ${answer}`);
  } catch (error) {
    throw withLogs(p, error);
  } finally {
    await p.done();
    await mail.close();
  }
});

it("frozen past its lease with the call approved but not started: the thawed A sends nothing and writes nothing; B sends it once", async () => {
  const mail = await startGatedMcpServer();
  const fake = await startFakeOpenAI(crowCalls("mail__post_letter", {}));
  const p = await pair(fake);
  try {
    await connect(p, { name: "mail", url: mail.url });
    const { listId, owner } = await listOnA(p, "Post the letter to the bakery");
    const asked = await owner.sse.waitFor((m) => m.event === "tool.asked", 120_000);
    // B's first tool listing (inside its flight's preparation, before it starts the call) waits.
    mail.holdListing();
    p.a.child.kill("SIGSTOP");
    await approveOnB(p, asked); // the owner's answer, through any instance; A cannot see it frozen
    const lost = await owner.sse.waitFor(lostLanding, 60_000);
    await within("B's flight to prepare, the call approved and unstarted", mail.listingHeld());
    // A thaws with the decision waiting for it, the call's row `approved`, and the list at epoch 2.
    p.a.child.kill("SIGCONT");
    await steppedDown(p, listId);
    assert.is(mail.calls(), 0, "the thawed instance sent no call");
    mail.releaseListing();
    const events = await finish(p, listId, owner);
    assert.is(mail.calls(), 1, "B sent it, once");
    const called = named(events, "tool.called");
    assert.is(called.length, 1);
    assert.ok(called[0]!.seq > Number(lost.id), "sent by B, after the takeover");
    assert.equal(
      named(events, "tool.returned").map((e) => e.data.ok),
      [true],
    );
  } catch (error) {
    throw withLogs(p, error);
  } finally {
    await p.done();
    await mail.close();
  }
});

it("frozen past its lease with the call in the air: B records it unknown; the thawed A's late answer writes nothing", async () => {
  const mail = await startGatedMcpServer();
  mail.holdCalls();
  const fake = await startFakeOpenAI(crowCalls("mail__post_letter", {}));
  const p = await pair(fake);
  try {
    await connect(p, { name: "mail", url: mail.url });
    const { listId, owner } = await listOnA(p, "Post the letter to the bakery");
    await approveOnB(p, await owner.sse.waitFor((m) => m.event === "tool.asked", 120_000));
    await within("A's call to reach the tool", mail.called(1));
    p.a.child.kill("SIGSTOP");
    const returned = await owner.sse.waitFor((m) => m.event === "tool.returned", 90_000);
    assert.equal([returned.data.ok, returned.data.error], [false, "tool_outcome_unknown"]);
    // The tool answers A's call now: A reads the answer when it thaws, on a list at epoch 2.
    mail.releaseCalls();
    p.a.child.kill("SIGCONT");
    await steppedDown(p, listId);
    const events = await finish(p, listId, owner);
    assert.is(mail.calls(), 1, "the tool ran once in all");
    assert.is(named(events, "tool.called").length, 1);
    assert.equal(
      named(events, "tool.returned").map((e) => e.data.error),
      ["tool_outcome_unknown"],
      "A's late answer never landed",
    );
  } catch (error) {
    throw withLogs(p, error);
  } finally {
    await p.done();
    await mail.close();
  }
});

test.run();

// The list rules one by one: fail-safe timeouts (also across a restart), retries and failures,
// the budget, pranks, trust promotion, demotion and auto verdicts, banter that never blocks.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { ownerFollows, type OwnerScript } from "../helpers/owner.ts";
import { openSse, type SseMessage } from "../helpers/sse.ts";
import { failingWhen } from "../helpers/models.ts";

const of = (events: SseMessage[], name: string, itemId?: string) =>
  events.filter((e) => e.event === name && (itemId === undefined || e.data.item_id === itemId));

async function walk(server: TestServer, text: string, requester: string, script: OwnerScript = {}) {
  const res = await server.post("/api/lists", { text, requester });
  assert.is(res.status, 202, JSON.stringify(res.body));
  const owner = await ownerFollows(server.url, res.body.list_id, script);
  const events = await owner.finished;
  owner.sse.close();
  return { listId: res.body.list_id as string, events };
}

test("an unanswered approval times out as a rejection and skips the item", async () => {
  const server = await startTestServer({ env: { CROWS_APPROVAL_WINDOW_MS: "300" } });
  try {
    const { listId, events } = await walk(server, "Buy milk", "silent", { decide: () => undefined });
    assert.equal(
      of(events, "verdict").map((e) => `${e.data.target}:${e.data.verdict}`),
      ["triage:timeout"],
    );
    assert.equal(
      of(events, "item.skipped").map((e) => [e.data.item_id, e.data.reason]),
      [[`${listId}-1`, "timeout"]],
    );
    assert.is(events[events.length - 1]!.event, "list.finished");
    const late = await server.post("/api/verdicts", { item_id: `${listId}-1`, target: "triage", approve: true });
    assert.is(late.status, 404, "a timed-out approval cannot be answered");
  } finally {
    await server.close();
  }
});

test("a pending approval survives a restart and still times out at its original deadline", async () => {
  let server = await startTestServer({ env: { CROWS_APPROVAL_WINDOW_MS: "1500" } });
  try {
    const { body } = await server.post("/api/lists", { text: "Buy milk", requester: "restarter" });
    const listId = body.list_id as string;
    const sse = await openSse(`${server.url}/api/events?list_id=${listId}`);
    await sse.waitFor((m) => m.event === "item.triaged");
    sse.close();
    const { deadline } = await server.app.prisma.approval.findFirstOrThrow({
      where: { itemId: `${listId}-1`, target: "triage" },
    });
    // The new process has a ten-minute window; the stored deadline must still rule.
    server = await server.restart({ env: { CROWS_APPROVAL_WINDOW_MS: "600000" } });
    const after = await openSse(`${server.url}/api/events?list_id=${listId}`);
    const verdict = await after.waitFor((m) => m.event === "verdict", 10_000);
    after.close();
    assert.is(verdict.data.verdict, "timeout");
    const late = new Date(verdict.data.ts).getTime() - deadline.getTime();
    assert.ok(late >= 0 && late < 1500, `timed out ${late} ms after the stored deadline`);
  } finally {
    await server.close();
  }
});

test("a failed flight is retried once by another crow", async () => {
  const model = failingWhen((r) => r.role === "crow" && r.speaker === "Hugin");
  const server = await startTestServer({ deps: { model } });
  try {
    const { listId, events } = await walk(server, "Buy milk", "retry");
    const landed = of(events, "crow.landed", `${listId}-1`)
      .filter((e) => e.data.crow !== "Sentry")
      .map((e) => e.data);
    assert.is(landed.length, 2);
    assert.equal(
      [landed[0]!.crow, landed[0]!.ok, landed[0]!.tokens, landed[0]!.error],
      ["Hugin", false, 0, "provider answered 503"],
    );
    assert.is(landed[1]!.ok, true);
    assert.is.not(landed[1]!.crow, "Hugin");
    assert.equal(of(events, "item.answered")[0]!.data.crows, [landed[1]!.crow]);
  } finally {
    await server.close();
  }
});

test("when the retry fails too the item is skipped with reason failure", async () => {
  const model = failingWhen((r) => r.role === "crow");
  const server = await startTestServer({ deps: { model } });
  try {
    const { listId, events } = await walk(server, "Buy milk", "doomed");
    const workers = of(events, "crow.flying", `${listId}-1`).filter((e) => e.data.crow !== "Sentry");
    assert.is(workers.length, 2, "one flight and one retry, no more");
    assert.equal(
      of(events, "item.skipped").map((e) => e.data.reason),
      ["failure"],
    );
    assert.is(of(events, "item.answered").length, 0);
  } finally {
    await server.close();
  }
});

test("a Sentry that fails falls back to solo/other with the reason stated", async () => {
  const model = failingWhen((r) => r.role === "sentry");
  const server = await startTestServer({ deps: { model } });
  try {
    const { events } = await walk(server, "Brainstorm names for a bakery", "fallback");
    const triaged = of(events, "item.triaged")[0]!.data;
    assert.equal([triaged.mode, triaged.task_type, triaged.subtasks], ["solo", "other", []]);
    assert.match(triaged.reason, /could not triage/);
    assert.is(of(events, "item.answered").length, 1);
  } finally {
    await server.close();
  }
});

test("a flight that would start with the budget spent does not start: skipped with reason budget", async () => {
  const server = await startTestServer({ env: { CROWS_TOKEN_BUDGET: "1", CROWS_ITEM_CONCURRENCY: "1" } });
  try {
    const { listId, events } = await walk(server, "Buy milk\nBuy eggs", "thrifty");
    // Item 1: the Sentry flies on an unspent budget, then no crow may start.
    assert.equal(
      of(events, "crow.flying", `${listId}-1`).map((e) => e.data.crow),
      ["Sentry"],
    );
    assert.equal(
      of(events, "item.skipped").map((e) => [e.data.item_id, e.data.reason]),
      [
        [`${listId}-1`, "budget"],
        [`${listId}-2`, "budget"],
      ],
    );
    assert.is(of(events, "crow.flying", `${listId}-2`).length, 0);
    const finished = events[events.length - 1]!.data;
    assert.is(finished.token_budget, 1);
    assert.ok(finished.tokens_used > 1);
  } finally {
    await server.close();
  }
});

test("more than 5 lists a minute earns strikes; the third strike pranks: 429 and requester.pranked", async () => {
  const server = await startTestServer({ env: { CROWS_APPROVAL_WINDOW_MS: "60000" } });
  try {
    const accepted: string[] = [];
    for (let i = 0; i < 7; i++) {
      const res = await server.post("/api/lists", { text: `Buy milk ${i}`, requester: "spammer" });
      assert.is(res.status, 202, `list ${i + 1} is accepted (strikes ${Math.max(0, i - 4)})`);
      accepted.push(res.body.list_id);
    }
    const first = await openSse(`${server.url}/api/events?list_id=${accepted[0]}`);
    const pranked = await server.post("/api/lists", { text: "Buy milk again", requester: "spammer" });
    assert.is(pranked.status, 429);
    assert.equal(Object.keys(pranked.body), ["message", "cooldown_s"]);
    assert.is(pranked.body.cooldown_s, 60);
    const event = await first.waitFor((m) => m.event === "requester.pranked");
    // The refused submission caused it: its actor is appended after the contract's fields.
    assert.equal(Object.keys(event.data), ["list_id", "message", "cooldown_s", "ts", "actor"]);
    assert.equal(event.data.actor, { kind: "owner" });
    assert.equal([event.data.message, event.data.cooldown_s], [pranked.body.message, 60]);
    first.close();
    const during = await server.post("/api/lists", { text: "Buy milk", requester: "spammer" });
    assert.is(during.status, 429);
    assert.ok(during.body.cooldown_s > 0 && during.body.cooldown_s <= 60);
    const other = await server.post("/api/lists", { text: "Buy milk", requester: "someone-else" });
    assert.is(other.status, 202, "strikes are per requester");
    assert.is(
      await server.app.prisma.todoList.count({ where: { requester: "spammer" } }),
      7,
      "refused lists are not stored",
    );
  } finally {
    await server.close();
  }
});

test("three approved triages promote the flock; a rejection demotes it; trusted work is auto-approved", async () => {
  const server = await startTestServer();
  try {
    const first = await walk(server, "Buy milk\nBuy eggs\nBuy bread", "promoter");
    const types = new Set(of(first.events, "item.triaged").map((e) => e.data.task_type));
    assert.is(types.size, 1, "the three items share a task type");
    const [taskType] = [...types];
    const promoted = of(first.events, "trust.changed").filter((e) => e.data.holder === "flock");
    assert.equal(
      promoted.map((e) => [e.data.task_type, e.data.from, e.data.to]),
      [[taskType, 0, 1]],
    );

    const second = await walk(server, "Buy butter", "promoter", { decide: (target) => target !== "triage" });
    const demoted = of(second.events, "trust.changed").map((e) => [
      e.data.holder,
      e.data.task_type,
      e.data.from,
      e.data.to,
    ]);
    assert.equal(demoted, [["flock", taskType, 1, 0]]);

    // Everyone trusted for the task type: both approvals are skipped and recorded as auto.
    for (const holder of ["flock", "Hugin", "Munin", "Pepper", "Inky", "Sable", "Rook", "Jackdaw", "Corvina"]) {
      await server.app.prisma.trust.upsert({
        where: { holder_taskType: { holder, taskType: taskType! } },
        create: { holder, taskType: taskType!, level: 2 },
        update: { level: 2 },
      });
    }
    const third = await walk(server, "Buy cheese", "promoter", { decide: () => false });
    assert.is(of(third.events, "item.triaged")[0]!.data.needs_approval, false);
    assert.is(of(third.events, "item.answered")[0]!.data.needs_approval, false);
    assert.equal(
      of(third.events, "verdict").map((e) => `${e.data.target}:${e.data.verdict}`),
      ["triage:auto", "output:auto"],
    );
    assert.is(of(third.events, "trust.changed").length, 0, "auto changes nothing");

    const ledger = (await server.get("/api/trust")).body.ledger as Array<{
      holder: string;
      task_type: string;
      history: unknown[];
      approvals: number;
      rejections: number;
    }>;
    const flock = ledger.find((r) => r.holder === "flock" && r.task_type === taskType)!;
    assert.is(flock.approvals, 3);
    assert.is(flock.rejections, 1);
    assert.is(flock.history.length, 5, "three approvals, a rejection and an auto");
  } finally {
    await server.close();
  }
});

test("banter is at most two lines a list, and a failed line never blocks the list", async () => {
  const server = await startTestServer();
  try {
    const chatty = await walk(
      server,
      "Brainstorm names for a bakery\nBrainstorm ideas for a party\nBrainstorm options for a holiday",
      "chatty",
    );
    const banter = of(chatty.events, "crow.banter");
    assert.ok(banter.length >= 1 && banter.length <= 2, `saw ${banter.length} banter lines`);
    const workers = new Set(of(chatty.events, "item.answered").flatMap((e) => e.data.crows));
    for (const line of banter)
      assert.ok(workers.has(line.data.crow) && workers.has(line.data.to), "between crows that worked the list");
    assert.ok(chatty.events.indexOf(banter[0]!) < chatty.events.length - 1, "banter lands before list.finished");
  } finally {
    await server.close();
  }
  const mute = await startTestServer({ deps: { model: failingWhen((r) => r.role === "banter") } });
  try {
    const quiet = await walk(mute, "Brainstorm names for a bakery", "quiet");
    assert.is(of(quiet.events, "crow.banter").length, 0);
    assert.is(quiet.events[quiet.events.length - 1]!.event, "list.finished");
  } finally {
    await mute.close();
  }
});

test.run();

// A list from list.started to list.finished on the offline brain, as a client sees it over SSE:
// every event of the contract's table with every field, every mode, approvals, retries and skips.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { ownerFollows, type OwnerScript } from "../helpers/owner.ts";
import type { SseMessage } from "../helpers/sse.ts";

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const FIELDS: Record<string, string[]> = {
  "list.started": ["list_id", "items", "requester", "nest_id", "ts"],
  "item.triaged": ["list_id", "item_id", "mode", "task_type", "subtasks", "reason", "needs_approval", "ts"],
  "crow.flying": ["list_id", "item_id", "crow", "borrowed", "ts"],
  "crow.landed": ["list_id", "item_id", "crow", "ok", "tokens", "ts"],
  "item.answered": ["list_id", "item_id", "answer", "crows", "needs_approval", "ts"],
  verdict: ["list_id", "item_id", "target", "verdict", "ts"],
  "trust.changed": ["list_id", "holder", "task_type", "from", "to", "ts"],
  "item.skipped": ["list_id", "item_id", "reason", "ts"],
  "crow.banter": ["list_id", "item_id", "crow", "to", "text", "ts"],
  "list.finished": ["list_id", "tokens_used", "token_budget", "ts"],
};

let server: TestServer;
test.before(async () => {
  server = await startTestServer();
});
test.after(async () => {
  await server.close();
});

async function runList(text: string, requester: string, decide?: OwnerScript["decide"]) {
  const res = await server.post("/api/lists", { text, requester });
  assert.is(res.status, 202);
  const owner = await ownerFollows(server.url, res.body.list_id, decide ? { decide } : {});
  const events = await owner.finished;
  owner.sse.close();
  return { listId: res.body.list_id as string, events, answers: owner.answers };
}

const of = (events: SseMessage[], name: string, itemId?: string) =>
  events.filter((e) => e.event === name && (itemId === undefined || e.data.item_id === itemId));

test("a three-item list walks solo, split and murder to list.finished with every field", async () => {
  const text = "- Buy milk\n- Research espresso machines and write a short summary\n- Brainstorm names for a bakery";
  const { listId, events, answers } = await runList(text, "walker");
  // Framing and common fields.
  events.forEach((e, i) => {
    assert.is(e.id, String(i + 1), "ids count 1, 2, 3 ... in order");
    const fields = FIELDS[e.event];
    assert.ok(fields, `unexpected event ${e.event}`);
    const optional = e.event === "crow.landed" && !e.data.ok ? ["error"] : [];
    // What a request or a decision caused carries its actor, appended after the contract's fields.
    const caused = ["list.started", "verdict", "trust.changed"].includes(e.event) ? ["actor"] : [];
    assert.equal(Object.keys(e.data).sort(), [...fields!, ...optional, ...caused].sort(), `${e.event} fields`);
    if (caused.length) assert.is(Object.keys(e.data).at(-1), "actor", `${e.event}: actor comes last`);
    assert.is(e.data.list_id, listId);
    assert.match(e.data.ts, RFC3339);
  });
  assert.is(events[0]!.event, "list.started");
  assert.equal(events[0]!.data.items, [
    { item_id: `${listId}-1`, text: "Buy milk" },
    { item_id: `${listId}-2`, text: "Research espresso machines and write a short summary" },
    { item_id: `${listId}-3`, text: "Brainstorm names for a bakery" },
  ]);
  assert.is(events[0]!.data.requester, "walker");
  assert.is(events[0]!.data.nest_id, "todo");
  const last = events[events.length - 1]!;
  assert.is(last.event, "list.finished");
  assert.is(last.data.token_budget, 20000);
  const landedTokens = of(events, "crow.landed").reduce((sum, e) => sum + e.data.tokens, 0);
  assert.ok(last.data.tokens_used >= landedTokens && landedTokens > 0, "tokens_used counts every flight");

  const modes = [1, 2, 3].map((n) => of(events, "item.triaged", `${listId}-${n}`)[0]!.data);
  assert.equal(
    modes.map((m) => m.mode),
    ["solo", "split", "murder"],
  );
  assert.equal(modes[0]!.subtasks, []);
  assert.ok(modes[1]!.subtasks.length >= 2 && modes[1]!.subtasks.length <= 4);
  assert.equal(modes[2]!.subtasks, []);

  for (const n of [1, 2, 3]) {
    const itemId = `${listId}-${n}`;
    const mine = events.filter((e) => e.data.item_id === itemId);
    // The Sentry flies first, and lands before the triage is announced.
    assert.equal(
      mine.slice(0, 3).map((e) => `${e.event}:${e.data.crow ?? ""}`),
      ["crow.flying:Sentry", "crow.landed:Sentry", "item.triaged:"],
    );
    const verdicts = of(events, "verdict", itemId).map((e) => `${e.data.target}:${e.data.verdict}`);
    assert.equal(verdicts, ["triage:approved", "output:approved"], "exactly one verdict per target");
    const answered = of(events, "item.answered", itemId)[0]!.data;
    assert.ok(answered.answer.length > 0);
    assert.ok(answered.needs_approval);
    const flights = of(events, "crow.flying", itemId).map((e) => e.data);
    for (const f of flights) assert.is(f.borrowed, false, "nothing is borrowed in todo");
    const elder = flights.filter((f) => f.crow === "Elder");
    const workers = flights.filter((f) => f.crow !== "Elder" && f.crow !== "Sentry");
    if (n === 1) {
      assert.is(elder.length, 0, "a solo item needs no Elder");
      assert.is(workers.length, 1);
      assert.equal(answered.crows, [workers[0]!.crow]);
    } else {
      assert.is(elder.length, 1, "the Elder merges split and murder");
      const expected = n === 2 ? modes[1]!.subtasks.length : 3;
      assert.is(new Set(workers.map((w) => w.crow)).size, expected);
      assert.is(answered.crows.length, expected);
      assert.not.ok(answered.crows.includes("Elder"), "the Elder is not credited");
    }
  }
  assert.ok(
    answers.every((a) => a.status === 204),
    "every verdict POST is 204",
  );
  assert.is(answers.length, 6);
  const banter = of(events, "crow.banter");
  assert.ok(banter.length <= 2);
  for (const b of banter) assert.ok(b.data.crow !== b.data.to && !b.data.text.includes("\n"));
});

test("a second answer to the same approval is 404", async () => {
  const { listId } = await runList("Buy milk", "twice");
  const again = await server.post("/api/verdicts", { item_id: `${listId}-1`, target: "triage", approve: true });
  assert.is(again.status, 404);
});

test("a rejected triage skips the item with reason rejected and never flies a crow", async () => {
  const { listId, events } = await runList(
    "Buy bread\nCall the bank",
    "rejecter",
    (target, m) => !(target === "triage" && m.data.item_id.endsWith("-1")),
  );
  const first = `${listId}-1`;
  assert.equal(
    of(events, "verdict", first).map((e) => e.data.verdict),
    ["rejected"],
  );
  assert.equal(
    of(events, "item.skipped", first).map((e) => e.data.reason),
    ["rejected"],
  );
  assert.equal(
    of(events, "crow.flying", first).map((e) => e.data.crow),
    ["Sentry"],
  );
  assert.is(of(events, "item.answered", `${listId}-2`).length, 1, "the other item goes on");
});

test.run();

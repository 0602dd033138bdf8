// Cancelling across two instances on one PostgreSQL and one Redis (docs/rules.md "Cancelling a
// list"): the list runs on A and is cancelled on B, which does not own it. B records the cancel in
// the row and nudges the list's stream; A, the owner, ends every item, so no two instances race
// over one. A fresh replay (read on B) shows each item ending once and nothing after list.finished.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { instancePair, serviceTests } from "../helpers/scale-services.ts";
import { openSse } from "../helpers/sse.ts";
import { assertCancelledReplay, CANCEL_LIST_TEXT, hangingCrows } from "../helpers/cancel-checks.ts";
import { listStream } from "../../src/base/streams.ts";

const { svc, it } = serviceTests("scale-cancel");

const pair = svc
  ? instancePair(svc, { CROWS_APPROVAL_WINDOW_MS: "600000", CROWS_ITEM_CONCURRENCY: "4" }, () => ({
      model: hangingCrows(),
    }))
  : undefined;

it("a list running on A, cancelled on B: A ends every item once, list.finished says cancelled, nothing follows", async () => {
  const { a, b } = pair!;
  const text = CANCEL_LIST_TEXT;
  const posted = await a.post("/api/lists", { text, requester: "cancel-two" });
  assert.is(posted.status, 202, posted.text);
  const listId = posted.body.list_id as string;
  const id = (n: number) => `${listId}-${n}`;
  const onB = await openSse(`${b.url}/api/events?list_id=${listId}`);
  try {
    const seen = (name: string, n: number, extra: (d: any) => boolean = () => true) =>
      onB.waitFor((m) => m.event === name && m.data.item_id === id(n) && extra(m.data), 60_000);
    for (const n of [1, 2, 3, 4]) await seen("item.triaged", n);
    for (const n of [1, 3]) {
      const verdict = await b.post("/api/verdicts", { item_id: id(n), target: "triage", approve: true });
      assert.is(verdict.status, 204, verdict.text);
    }
    await seen("crow.flying", 1, (d) => d.crow !== "Sentry");
    await seen("item.answered", 3);
    assert.ok(a.app.flock.heldLists().includes(listId), "A runs the list");
    assert.not.ok(b.app.flock.heldLists().includes(listId), "B does not run it");

    const cancelled = await b.post(`/api/lists/${listId}/cancel`);
    assert.is(cancelled.status, 202, cancelled.text);
    await onB.waitFor((m) => m.event === "list.finished", 60_000);
  } finally {
    onB.close();
  }
  await a.app.flock.settled(listId);

  const rows = await b.app.log.read(listStream(listId), 0, 10_000);
  const events = rows.map((r) => ({ name: r.name, payload: JSON.parse(r.payload) as Record<string, any> }));
  const ends = assertCancelledReplay(events, [1, 2, 3, 4, 5, 6].map(id));
  assert.equal(Object.fromEntries(ends), {
    [id(1)]: "skipped:rejected",
    [id(2)]: "skipped:rejected",
    [id(3)]: "output:rejected",
    [id(4)]: "skipped:rejected",
    [id(5)]: "skipped:rejected",
    [id(6)]: "skipped:rejected",
  });
  assert.equal(events[events.length - 1]!.payload.actor, { kind: "owner" });
  const late = await a.post(`/api/lists/${listId}/cancel`);
  assert.is(late.status, 409);
  const list = await b.app.prisma.todoList.findUniqueOrThrow({ where: { id: listId } });
  assert.equal([list.status, list.ownerId], ["finished", null]);
});

test.run();

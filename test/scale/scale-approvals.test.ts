// approvalChanges across two instances on one PostgreSQL and one Redis: approvals opened and
// closed by A's run and verdicts reach a follower on B live (the several event names it follows
// each ride their own Redis topic), and B resumes from a cursor with nothing repeated.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { openSse, type SseClient } from "../helpers/sse.ts";
import { instancePair, serviceTests } from "../helpers/scale-services.ts";

const { svc, it } = serviceTests("scale-approvals");

const APPROVALS = `subscription($after: Int) { approvalChanges(after: $after) { id change itemId target verdict approval { status } } }`;

// A and B: two instances on one PostgreSQL database and one Redis.
const pair = svc ? instancePair(svc, { CROWS_APPROVAL_WINDOW_MS: "60000" }) : undefined;

const changes = (sse: SseClient) =>
  sse
    .messages()
    .filter((m) => m.event === "next" && m.data?.data)
    .map((m) => m.data.data.approvalChanges);

it("a list posted on A opens its approvals on B's feed; a verdict on A closes them there, live", async () => {
  const onB = await openSse(`${pair!.b.url}/graphql/stream`, { json: { query: APPROVALS, variables: {} } });
  try {
    const { status, body } = await pair!.a.post("/api/lists", {
      text: "Buy milk\nWrite a haiku about crows",
      requester: "two-instances",
    });
    assert.is(status, 202);
    const listId = body.list_id as string;
    await onB.waitFor(() => changes(onB).filter((c) => c.change === "opened").length === 2, 15_000);
    const opened = changes(onB);
    assert.equal(opened.map((c) => [c.itemId, c.target]).sort(), [
      [`${listId}-1`, "triage"],
      [`${listId}-2`, "triage"],
    ]);
    assert.ok(opened.every((c) => c.approval.status === "pending"));
    const cursor = opened[opened.length - 1].id as number;

    const verdict = await pair!.a.post("/api/verdicts", { item_id: `${listId}-1`, target: "triage", approve: false });
    assert.is(verdict.status, 204, verdict.text);
    await onB.waitFor(() => changes(onB).some((c) => c.change === "closed"), 15_000);
    assert.equal(
      changes(onB)
        .filter((c) => c.change === "closed")
        .map((c) => [c.itemId, c.verdict]),
      [[`${listId}-1`, "rejected"]],
    );

    // Resuming on A from B's cursor sends only what came after it.
    const resumed = await openSse(`${pair!.a.url}/graphql/stream`, {
      json: { query: APPROVALS, variables: { after: cursor } },
    });
    try {
      await resumed.waitFor(() => changes(resumed).length >= 1, 15_000);
      const got = changes(resumed);
      assert.ok(got.every((c) => c.id > cursor));
      assert.equal([got[0].itemId, got[0].change, got[0].verdict], [`${listId}-1`, "closed", "rejected"]);
    } finally {
      resumed.close();
    }
    await pair!.a.post("/api/verdicts", { item_id: `${listId}-2`, target: "triage", approve: false });
    await pair!.a.app.flock.settled(listId);
  } finally {
    onB.close();
  }
});

test.run();

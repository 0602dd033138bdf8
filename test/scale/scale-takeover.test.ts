// Leases with two instances on one PostgreSQL and one Redis: a running list has exactly one owner,
// which renews its lease while it runs; when the owner stops, another instance takes the list over
// once the lease lapses, and the pending approval still times out at its stored deadline (or at
// once, if that deadline passed while nobody held the list). Finished lists hold no lease.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { openSse } from "../helpers/sse.ts";
import { eventually, freshDatabase, serviceTests } from "../helpers/scale-services.ts";

const { svc, it } = serviceTests("scale-takeover");

async function pair(env: Record<string, string>) {
  const db = await freshDatabase(svc!.pgUrl);
  const shared = { DATABASE_URL: db.url, REDIS_URL: svc!.redisUrl, ...env };
  const a = await startTestServer({ env: shared });
  const b = await startTestServer({ env: shared });
  const done = async () => {
    await Promise.allSettled([a.close(), b.close()]);
    await db.drop();
  };
  return { a, b, done };
}

const listRow = (server: TestServer, id: string) => server.app.prisma.todoList.findUniqueOrThrow({ where: { id } });

/**
 * Counts the lease sweeps an instance has finished, so a test that says "nothing else happened"
 * waits for sweeps that prove it rather than for a time.
 */
function sweepsOf(server: TestServer): () => number {
  return () => server.app.flock.leaseSweepsDone();
}

async function moreSweeps(counters: Array<() => number>, more: number): Promise<void> {
  const targets = counters.map((count) => count() + more);
  await eventually(
    `${more} more lease sweeps on each instance`,
    async () => (counters.every((count, i) => count() >= targets[i]!) ? true : undefined),
    20_000,
    20,
  );
}

it("one owner renews while it runs; after it stops, B takes over when the lease lapses and the approval times out at its deadline", async () => {
  // Both instances share this process's event loop: the lease is generous so a busy loop cannot
  // let it lapse while A is alive, and the window is long enough to cover the takeover after A stops.
  const leaseMs = 1500;
  const { a, b, done } = await pair({ CROWS_LEASE_MS: String(leaseMs), CROWS_APPROVAL_WINDOW_MS: "12000" });
  const bSweeps = sweepsOf(b);
  try {
    const { body } = await a.post("/api/lists", { text: "Buy milk", requester: "lease-holder" });
    const listId = body.list_id as string;
    const watch = await openSse(`${b.url}/api/events?list_id=${listId}`);
    await watch.waitFor((m) => m.event === "item.triaged" && m.data.needs_approval === true);
    const approval = await b.app.prisma.approval.findUniqueOrThrow({
      where: { itemId_target: { itemId: `${listId}-1`, target: "triage" } },
    });

    // While A runs it, A holds it: B's sweeps see a live lease and leave it alone; A renews.
    const first = await listRow(b, listId);
    assert.is(first.ownerId, a.app.flock.instanceId);
    // Two renewals by A, and B sweeping past a whole lease meanwhile: B had every chance to steal.
    const renewed = await eventually(
      "A to renew twice",
      async () => {
        const row = await listRow(b, listId);
        return row.leaseUntil!.getTime() > first.leaseUntil!.getTime() + leaseMs / 2 ? row : undefined;
      },
      20_000,
      50,
    );
    await moreSweeps([bSweeps], 3);
    assert.ok(renewed.ownerId === a.app.flock.instanceId);
    const later = await listRow(b, listId);
    assert.is(later.ownerId, a.app.flock.instanceId, "B did not steal a live lease");
    assert.ok(later.leaseUntil!.getTime() > first.leaseUntil!.getTime(), "A renewed its lease");

    // A stops (its deadline timer goes with it). B takes over only after the lease lapses.
    await a.close();
    const held = (await listRow(b, listId)).leaseUntil!.getTime();
    const takenAt = await eventually(
      "B to take the list over",
      async () => {
        const row = await listRow(b, listId);
        return row.ownerId === b.app.flock.instanceId ? Date.now() : undefined;
      },
      10_000,
      20,
    );
    assert.ok(takenAt >= held, `taken over at ${takenAt}, before the lease ran out at ${held}`);
    assert.ok(takenAt < approval.deadline.getTime(), "taken over before the approval's deadline");

    // The approval times out at its stored deadline, on B, and the list finishes there.
    const verdict = await watch.waitFor((m) => m.event === "verdict", 40_000);
    assert.is(verdict.data.verdict, "timeout");
    const at = Date.parse(verdict.data.ts);
    assert.ok(at >= approval.deadline.getTime(), "not before the deadline");
    assert.ok(
      at - approval.deadline.getTime() < 5000,
      `timed out ${at - approval.deadline.getTime()} ms after the deadline`,
    );
    const skipped = await watch.waitFor((m) => m.event === "item.skipped");
    assert.is(skipped.data.reason, "timeout");
    await watch.waitFor((m) => m.event === "list.finished", 10_000);
    watch.close();
    const ids = watch.messages().map((m) => m.id);
    assert.equal(
      ids,
      ids.map((_, i) => String(i + 1)),
      "one gapless sequence across the takeover",
    );

    await b.app.flock.settled(listId);
    const finished = await listRow(b, listId);
    assert.is(finished.status, "finished");
    assert.is(finished.ownerId, null, "a finished list holds no lease");
  } finally {
    await done();
  }
});

it("a deadline that passed while nobody held the list times out at takeover", async () => {
  // The window covers A's stopping (a Redis hop, a read and a close) on a loaded machine; the lease
  // is longer still, so the deadline falls while nobody may take the list.
  const { a, b, done } = await pair({ CROWS_LEASE_MS: "12000", CROWS_APPROVAL_WINDOW_MS: "4000" });
  try {
    const { body } = await a.post("/api/lists", { text: "Buy milk", requester: "late-owner" });
    const listId = body.list_id as string;
    const watch = await openSse(`${b.url}/api/events?list_id=${listId}`);
    await watch.waitFor((m) => m.event === "item.triaged" && m.data.needs_approval === true);
    const approval = await b.app.prisma.approval.findUniqueOrThrow({
      where: { itemId_target: { itemId: `${listId}-1`, target: "triage" } },
    });
    await a.close();
    assert.ok(
      Date.now() < approval.deadline.getTime(),
      "A stopped before the deadline (raise the window if this machine is slow)",
    );
    const lapses = (await listRow(b, listId)).leaseUntil!.getTime();
    assert.ok(lapses > approval.deadline.getTime(), "the deadline falls while A's lease still blocks B");
    const verdict = await watch.waitFor((m) => m.event === "verdict", 40_000);
    const at = Date.parse(verdict.data.ts);
    assert.is(verdict.data.verdict, "timeout");
    assert.ok(at >= lapses, "recorded by the instance that took over, after the lease lapsed");
    assert.ok(at - lapses < 6000, `timed out ${at - lapses} ms after takeover became possible`);
    const taken = await listRow(b, listId);
    assert.ok(taken.ownerId === b.app.flock.instanceId || taken.ownerId === null, "B ran it to the end");
    await watch.waitFor((m) => m.event === "list.finished", 10_000);
    watch.close();
  } finally {
    await done();
  }
});

it("two instances racing to claim lapsed lists: each list gets exactly one owner", async () => {
  const { a, b, done } = await pair({ CROWS_LEASE_MS: "300", CROWS_APPROVAL_WINDOW_MS: "60000" });
  const sweeps = [sweepsOf(a), sweepsOf(b)];
  try {
    const lists: string[] = [];
    for (let i = 0; i < 4; i++)
      lists.push((await a.post("/api/lists", { text: `Errand ${i}`, requester: `racer${i}` })).body.list_id);
    // Orphan them all: a third instance's name on a lease that already ran out.
    await a.app.prisma.todoList.updateMany({
      where: { id: { in: lists } },
      data: { ownerId: "gone", leaseUntil: new Date(Date.now() - 1000) },
    });
    await eventually("every list reclaimed", async () => {
      const rows = await a.app.prisma.todoList.findMany({ where: { id: { in: lists } } });
      return rows.every((r) => r.ownerId !== "gone") ? true : undefined;
    });
    await moreSweeps(sweeps, 3); // both had their chance to claim a list twice
    for (const id of lists) {
      const row = await listRow(a, id);
      const runners = [a, b].filter((s) => s.app.flock.heldLists().includes(id));
      assert.is(runners.length, 1, `list ${id} runs on ${runners.length} instances`);
      assert.is(row.ownerId, runners[0]!.app.flock.instanceId);
    }
  } finally {
    await done();
  }
});

test.run();

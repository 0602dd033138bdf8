// trust.changed is followed across every stream in the log's global-id order (GraphQL
// trustChanges). On PostgreSQL a sequence hands out ids at insert time, so two writers can commit
// out of id order; a follower that already passed the larger id would then skip the smaller one
// for good. The commit-order lock (storage/db.ts) makes those ids commit order: these tests hold
// one writer's transaction open after its insert and check the other waits, and that a follower
// sees every event exactly once, in id order, under many concurrent writers.
import { test } from "uvu";
import * as assert from "uvu/assert";
import pg from "pg";
import { startTestServer } from "../helpers/server.ts";
import { eventually, freshDatabase, serviceTests } from "../helpers/scale-services.ts";
import { commitOrderLock } from "../../src/storage/db.ts";
import type { StoredEvent } from "../../src/log/event-log.ts";

const { svc, it } = serviceTests("scale-trust-order");

async function server() {
  const db = await freshDatabase(svc!.pgUrl);
  const app = await startTestServer({ env: { DATABASE_URL: db.url, REDIS_URL: svc!.redisUrl } });
  return { app, done: async () => (await app.close(), await db.drop()) };
}

const change = (holder: string) => ({
  nest_id: "todo",
  holder,
  task_type: "writing",
  from: 0,
  to: 1,
  ts: new Date().toISOString(),
});

function collect(iterator: AsyncGenerator<StoredEvent>): StoredEvent[] {
  const seen: StoredEvent[] = [];
  void (async () => {
    for await (const event of iterator) seen.push(event);
  })();
  return seen;
}

it("a writer that took its id first but commits late holds the next one back: the follower misses neither", async () => {
  const { app, done } = await server();
  const stop = new AbortController();
  try {
    const log = app.app.log;
    const seen = collect(log.followNamed("trust.changed", 0, stop.signal));
    const lock = commitOrderLock(app.app.config)!;
    assert.ok(lock, "PostgreSQL takes the commit-order lock");
    let firstCommitted = 0;
    let holding!: () => void;
    const lockHeld = new Promise<void>((resolve) => (holding = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const slow = app.app.prisma
      .$transaction(
        async (tx) => {
          await lock(tx);
          await tx.event.create({
            data: { stream: "watch:slow", seq: 1, name: "trust.changed", payload: JSON.stringify(change("Slow")) },
          });
          holding();
          await released; // its id is taken; its commit waits until the second writer is seen waiting
        },
        { timeout: 60_000 },
      )
      .then(() => (firstCommitted = Date.now()));
    await lockHeld;
    const fastAppend = log.append("watch:fast", "trust.changed", change("Fast"));
    const watcher = new pg.Client({ connectionString: app.app.config.databaseUrl });
    await watcher.connect();
    try {
      await eventually(
        "the second writer waiting on the commit-order lock",
        async () => {
          const { rows } = await watcher.query(
            "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted",
          );
          return rows[0].n > 0 ? true : undefined;
        },
        20_000,
        20,
      );
    } finally {
      await watcher.end();
    }
    release();
    const fast = await fastAppend;
    const fastDone = Date.now();
    await slow;
    assert.ok(fastDone >= firstCommitted, "the second writer waited for the first to commit");
    await eventually("both changes followed", async () => (seen.length === 2 ? true : undefined), 5000);
    assert.equal(
      seen.map((e) => JSON.parse(e.payload).holder),
      ["Slow", "Fast"],
    );
    assert.ok(seen[0]!.id < fast.id);
  } finally {
    stop.abort();
    await done();
  }
});

it("many writers at once: a follower (and a reader resuming from any id it was sent) sees every change exactly once, in order", async () => {
  const { app, done } = await server();
  const stop = new AbortController();
  try {
    const log = app.app.log;
    const seen = collect(log.followNamed("trust.changed", 0, stop.signal));
    const writers = 6;
    const each = 15;
    await Promise.all(
      Array.from({ length: writers }, (_, w) =>
        (async () => {
          for (let i = 0; i < each; i++) {
            // Other events interleave in the same id sequence.
            await Promise.all([
              log.append(`watch:w${w}`, "trust.changed", change(`w${w}-${i}`)),
              log.append(`list:w${w}`, "item.started", { i }),
            ]);
          }
        })(),
      ),
    );
    // A marker appended after every writer: once the follower has it, a duplicate would have shown.
    const marker = await log.append("watch:marker", "trust.changed", change("marker"));
    await eventually(
      "every change and the marker followed",
      async () => (seen.some((e) => e.id === marker.id) ? true : undefined),
      30_000,
    );
    assert.is(seen.pop()!.id, marker.id, "the marker comes last");
    assert.is(seen.length, writers * each, "no duplicate");
    const ids = seen.map((e) => e.id);
    assert.equal(
      ids,
      [...ids].sort((a, b) => a - b),
      "in id order",
    );
    assert.is(new Set(seen.map((e) => JSON.parse(e.payload).holder)).size, writers * each, "none lost");
    // Resuming after any id it was sent reads exactly the rest.
    for (const cut of [0, 7, 44, writers * each - 1]) {
      const rest = await log.readNamed("trust.changed", ids[cut]!, 10_000);
      assert.equal(
        rest.map((e) => e.id),
        [...ids.slice(cut + 1), marker.id],
      );
    }
  } finally {
    stop.abort();
    await done();
  }
});

test.run();

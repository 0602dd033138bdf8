// Durable waiting: a server restarted while its flights wait on the provider resumes them with the
// same stored patience deadline. When the provider comes back every item is answered once; when it
// does not, the items fail at the deadline set before the restart, not a fresh one.
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { TestServer } from "../helpers/server.ts";
import {
  assertAllAnswered,
  assertOneLandingPerFlight,
  finish,
  ITEMS,
  of,
  postList,
  weatherServer,
  withWeather,
} from "../helpers/weather.ts";

async function until<T>(
  what: string,
  probe: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** The stored deadlines of a list's waiting items, once every item waits. */
async function storedDeadlines(server: TestServer, listId: string, count: number): Promise<Map<string, number>> {
  return until("every item to wait on the provider", async () => {
    const rows = await server.app.prisma.providerWait.findMany({ where: { itemId: { startsWith: `${listId}-` } } });
    const waiting = new Set(server.app.board.waiting(listId).map((w) => w.itemId));
    if (rows.length < count || waiting.size < count) return undefined;
    return new Map(rows.map((r) => [r.itemId, r.deadline.getTime()]));
  });
}

test("a restart while flights wait: same stored deadline after it, and every item answered once when the provider returns", async () => {
  for (const items of [ITEMS.slice(0, 3), ITEMS.slice(2, 6)]) {
    let down = true;
    const run = await weatherServer(
      withWeather(() => (down ? { status: 503 } : undefined)),
      { CROWS_MODEL_PATIENCE_MS: "60000" },
    );
    let server = run.server;
    try {
      const listId = await postList(server, items);
      const before = await storedDeadlines(server, listId, items.length);
      server = await server.restart();
      // The resumed flights wait again, on the deadlines stored before the restart.
      const after = await until("the resumed flights to wait", () => {
        const waits = server.app.board.waiting(listId);
        return new Set(waits.map((w) => w.itemId)).size >= items.length ? waits : undefined;
      });
      for (const wait of after) assert.is(wait.deadline, before.get(wait.itemId), `${wait.itemId} kept its deadline`);
      down = false;
      const events = await finish(server, listId);
      assertAllAnswered(events);
      assertOneLandingPerFlight(events);
      for (const itemId of before.keys()) {
        const sentry = of(events, "crow.landed").filter(
          (e) => e.data.item_id === itemId && e.data.crow === "Sentry" && e.data.ok,
        );
        assert.is(sentry.length, 1, `${itemId}: triaged once`);
      }
      assert.is(await server.app.prisma.providerWait.count(), 0, "a landing clears the stored wait");
    } finally {
      await server.close();
      await run.fake.close();
    }
  }
});

test("a restart while flights wait on a provider that stays down: the items fail at the deadline stored before the restart", async () => {
  const patienceMs = 4_000;
  const run = await weatherServer(
    withWeather(() => ({ status: 503 })),
    { CROWS_MODEL_PATIENCE_MS: String(patienceMs) },
  );
  let server = run.server;
  try {
    const items = ITEMS.slice(1, 4);
    const listId = await postList(server, items);
    const before = await storedDeadlines(server, listId, items.length);
    await new Promise((resolve) => setTimeout(resolve, 1_000)); // part of the patience spent before the restart
    server = await server.restart();
    const restartedAt = Date.now();
    const events = await finish(server, listId);
    assertOneLandingPerFlight(events);
    const skipped = of(events, "item.skipped");
    assert.is(skipped.length, items.length);
    for (const skip of skipped) {
      const at = Date.parse(skip.data.ts);
      const deadline = before.get(skip.data.item_id)!;
      assert.ok(at >= deadline - 50, `${skip.data.item_id} failed ${deadline - at} ms before its deadline`);
      assert.ok(
        at < restartedAt + patienceMs - 500,
        `${skip.data.item_id} failed on the old deadline, not a fresh patience`,
      );
      const landed = of(events, "crow.landed").filter((e) => e.data.item_id === skip.data.item_id);
      assert.match(landed[landed.length - 1]!.data.error, /model provider unavailable/);
    }
    assert.is(await server.app.prisma.providerWait.count(), 0, "a failed item keeps no stored wait");
  } finally {
    await server.close();
    await run.fake.close();
  }
});

test.run();

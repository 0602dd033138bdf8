// The durable log's follower, in-process: replay then live with no gap and no duplicate, events
// handed on from the bus without a read, and recovery when an announcement never arrives.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { topicOf, NUDGE, type BusEvent } from "../../src/log/bus.ts";

let server: TestServer;
/** Log reads finished, per stream: a follower that has read once is waiting on the bus. */
const readsDone = new Map<string, number>();
test.before(async () => {
  server = await startTestServer();
  const log = server.app.log;
  const read = log.read.bind(log);
  log.read = async (stream, afterSeq, limit) => {
    const events = await read(stream, afterSeq, limit);
    readsDone.set(stream, (readsDone.get(stream) ?? 0) + 1);
    return events;
  };
});

/** Resolves once a follower of `stream` has finished its first read of the log and gone to wait. */
async function waiting(stream: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!readsDone.get(stream)) {
    if (Date.now() > deadline) throw new Error(`no follower of ${stream} read the log`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await new Promise((resolve) => setImmediate(resolve)); // past the yield, into the wait
}
test.after(async () => {
  await server.close();
});

/** Collects what a follower yields until it has `count` events; fails after 5 s with what it saw. */
function collect(stream: string, after: number, count: number) {
  const abort = new AbortController();
  const seen: number[] = [];
  const following = (async () => {
    for await (const event of server.app.log.follow(stream, after, abort.signal)) {
      seen.push(event.seq);
      if (seen.length >= count) break;
    }
    return seen;
  })();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      abort.abort();
      reject(new Error(`follower saw only [${seen.join(", ")}]`));
    }, 5000);
  });
  const done = Promise.race([following, timeout]).finally(() => clearTimeout(timer));
  return { seen, done, abort };
}

const tick = (stream: string, i: number) => server.app.log.append(stream, "tick", { i });

test("replays what is stored after the cursor, then follows live appends, in order, once each", async () => {
  for (let i = 1; i <= 3; i++) await tick("t:replay", i);
  const follower = collect("t:replay", 1, 5);
  for (let i = 4; i <= 6; i++) await tick("t:replay", i);
  assert.equal(await follower.done, [2, 3, 4, 5, 6]);
});

test("a committed event whose announcement was lost is read from the log when the next one shows the gap", async () => {
  await tick("t:gap", 1);
  const follower = collect("t:gap", 0, 3);
  await waiting("t:gap");
  // Committed straight to the table: no announcement, as if a Redis message were lost.
  await server.app.prisma.event.create({ data: { stream: "t:gap", seq: 2, name: "tick", payload: "{}" } });
  await tick("t:gap", 3);
  assert.equal(await follower.done, [1, 2, 3]);
});

test("a nudge makes a waiting follower re-read the log", async () => {
  const follower = collect("t:nudge", 0, 1);
  await waiting("t:nudge");
  await server.app.prisma.event.create({ data: { stream: "t:nudge", seq: 1, name: "tick", payload: "{}" } });
  assert.equal(follower.seen, []);
  server.app.bus.dispatchEvent(new CustomEvent(topicOf("t:nudge"), { detail: NUDGE }) as BusEvent);
  assert.equal(await follower.done, [1]);
});

test("an abort ends a follower that is waiting for the next event", async () => {
  const follower = collect("t:abort", 0, 1);
  await waiting("t:abort");
  follower.abort.abort();
  assert.equal(await follower.done, []);
});

test("an event's stored ts is its payload's ts, to the millisecond, on both append paths", async () => {
  const moments = [
    "2026-01-02T03:04:05.678Z",
    new Date().toISOString(),
    "2030-12-31T23:59:59.999Z",
    "1999-06-01T00:00:00.001Z",
  ];
  for (const ts of moments) await server.app.log.append("t:ts", "tick", { ts });
  for (const ts of moments)
    await server.app.log.appendWith("t:ts", async () => [{ name: "tick", payload: { ts, in: "tx" } }]);
  const stored = await server.app.log.read("t:ts");
  assert.equal(
    stored.map((e) => e.ts),
    [...moments, ...moments],
  );
  assert.equal(
    stored.map((e) => JSON.parse(e.payload).ts),
    stored.map((e) => e.ts),
  );
  const rows = await server.app.prisma.event.findMany({ where: { stream: "t:ts" }, orderBy: { seq: "asc" } });
  assert.equal(
    rows.map((r) => r.ts.toISOString()),
    [...moments, ...moments],
    "Prisma reads the same moment",
  );
  // A payload without a usable ts is stamped now.
  const before = Date.now();
  for (const payload of [{}, { ts: "not a date" }, { ts: 42 }]) {
    const event = await server.app.log.append("t:ts-none", "tick", payload);
    assert.ok(Math.abs(new Date(event.ts).getTime() - before) < 5000);
  }
});

test.run();

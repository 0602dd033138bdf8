// Sends wait while the flock works (src/webhooks/sender.ts "yieldToFlock", flock-work.ts): a
// delivery never goes out while the flock has been appending with no rest of FLOCK_QUIET_MS for
// less than CROWS_WEBHOOK_YIELD_S, and always goes out once that bound has passed, even if the
// flock never rests; a new stretch of work after a rest holds sends again. With
// CROWS_WEBHOOK_YIELD_S=0 sends never wait. Both senders (the thread's, reading the flock's work
// from shared memory, and the in-process one) keep the same rule.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { startReceiver, type Receiver } from "../helpers/webhook-receiver.ts";
import { loadConfig, ConfigError } from "../../src/base/config.ts";
import { FLOCK_QUIET_MS, FlockWork } from "../../src/webhooks/flock-work.ts";

const ENV = { CROWS_WEBHOOK_ALLOW_PRIVATE: "1", CROWS_WEBHOOK_POLL_S: "0.05", CROWS_WEBHOOK_TIMEOUT_S: "2" };
const SENDERS = [
  { name: "the sender's thread", env: {}, runsIn: "own-thread" },
  { name: "the in-process sender", env: { CROWS_WEBHOOK_SENDER: "server" }, runsIn: "server-thread" },
] as const;

/** A flock at work: appends an event (one that fans out to no webhook) every few ms until stopped; records every pause. */
function workingFlock(server: TestServer) {
  const stamps: number[] = [];
  // The server's stretch of work cannot begin before this (the caller let the flock rest first).
  const startedAt = Date.now();
  let running = true;
  const done = (async () => {
    let n = 0;
    while (running) {
      await server.app.log.append("yield-test:busy", "note", { n: n++ });
      stamps.push(Date.now());
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  })();
  return {
    startedAt,
    stamps,
    /** Rests of the work long enough that a sender may have found the flock resting. */
    pauses: () =>
      stamps.slice(1).flatMap((at, i) => (at - stamps[i]! >= FLOCK_QUIET_MS - 2 ? [{ from: stamps[i]!, to: at }] : [])),
    stop: async () => {
      running = false;
      await done;
    },
  };
}

const trustChange = (server: TestServer, i: number) =>
  server.app.log.append(`yield-test:${i}`, "trust.changed", {
    list_id: `yield-${i}`,
    holder: "flock",
    task_type: `type-${i}`,
    from: 0,
    to: 1,
    ts: new Date().toISOString(),
  });

async function withEndpoint(
  env: Record<string, string>,
  run: (server: TestServer, receiver: Receiver) => Promise<void>,
) {
  const receiver = await startReceiver();
  const server = await startTestServer({ env: { ...ENV, ...env } });
  try {
    receiver.secrets.push((await server.app.webhooks.endpoints.add({ url: receiver.url })).secret);
    await new Promise((resolve) => setTimeout(resolve, FLOCK_QUIET_MS * 5)); // a rest: what came before is not the flock's work
    await run(server, receiver);
    assert.equal(receiver.unverified, []);
  } finally {
    await server.close();
    await receiver.close();
  }
}

for (const sender of SENDERS) {
  test(`${sender.name}: while the flock works, deliveries wait for a pause or for CROWS_WEBHOOK_YIELD_S, never longer`, async () => {
    for (const yieldS of [0.4, 0.8]) {
      await withEndpoint({ ...sender.env, CROWS_WEBHOOK_YIELD_S: String(yieldS) }, async (server, receiver) => {
        assert.is(server.app.webhooks.sender.runsIn, sender.runsIn);
        const flock = workingFlock(server);
        try {
          await new Promise((resolve) => setTimeout(resolve, 50)); // at work before anything fans out
          const appendedAt: number[] = [];
          for (let i = 0; i < 5; i++) {
            await trustChange(server, i);
            appendedAt.push(Date.now());
          }
          // The bound holds though the flock never rests: every delivery arrives while it still works.
          await receiver.waitFor((r) => r.length >= 5, 10_000, "5 deliveries while the flock works");
          const pauses = flock.pauses();
          for (const [i, got] of receiver.received.entries()) {
            // The flock's stretch of work began at its first append, after startedAt; earlier than the
            // bound only in a rest of its work (a loaded machine makes some).
            const working = got.at - flock.startedAt;
            const inRest = pauses.some((p) => p.from < got.at);
            assert.ok(
              working >= yieldS * 1000 - 2 || inRest,
              `delivery ${i} went out ${working} ms into the flock's work (appended ${got.at - appendedAt[0]!} ms before; rests: ${JSON.stringify(pauses)})`,
            );
          }
        } finally {
          await flock.stop();
        }
        assert.is(new Set(receiver.received.map((r) => r.id)).size, 5, "each delivery once");
      });
    }
  });
}

test("a flock that worked past the bound, rested, and works again holds sends again for the bound", async () => {
  // A long poll: nothing but the flock's own work and the appends' wakes move the sender.
  await withEndpoint({ CROWS_WEBHOOK_YIELD_S: "0.4", CROWS_WEBHOOK_POLL_S: "5" }, async (server, receiver) => {
    const first = workingFlock(server);
    await new Promise((resolve) => setTimeout(resolve, 500)); // past the bound
    await trustChange(server, 0);
    await receiver.waitFor((r) => r.length >= 1, 10_000, "the delivery past the bound");
    await first.stop();
    await new Promise((resolve) => setTimeout(resolve, 300)); // a rest, with nothing to send
    const second = workingFlock(server);
    try {
      await new Promise((resolve) => setTimeout(resolve, 50));
      await trustChange(server, 1);
      await receiver.waitFor((r) => r.length >= 2, 10_000, "the delivery of the second stretch");
      const got = receiver.received[1]!;
      const working = got.at - second.startedAt;
      assert.ok(
        working >= 400 - 2 || second.pauses().some((p) => p.from < got.at),
        `went out ${working} ms into the second stretch of work`,
      );
    } finally {
      await second.stop();
    }
  });
});

test("the flock's work as the sender sees it: a rest of FLOCK_QUIET_MS ends a stretch, a stretch is timed from its first append", () => {
  const cases: Array<{ appends: number[]; at: number; resting: number; working: number }> = [
    { appends: [], at: 5_000, resting: Number.POSITIVE_INFINITY, working: 0 },
    { appends: [1_000], at: 1_000, resting: 0, working: 0 },
    { appends: [1_000], at: 1_015, resting: 15, working: 15 },
    { appends: [1_000, 1_010, 1_025, 1_040], at: 1_045, resting: 5, working: 45 },
    // a rest of exactly FLOCK_QUIET_MS starts a new stretch; one ms less does not
    { appends: [1_000, 1_000 + FLOCK_QUIET_MS], at: 1_000 + FLOCK_QUIET_MS + 1, resting: 1, working: 1 },
    { appends: [1_000, 1_000 + FLOCK_QUIET_MS - 1], at: 1_000 + FLOCK_QUIET_MS, resting: 1, working: FLOCK_QUIET_MS },
    { appends: [1_000, 1_005, 2_000, 2_010], at: 2_012, resting: 2, working: 12 },
    {
      appends: Array.from({ length: 200 }, (_, i) => 10_000 + i * 19),
      at: 10_000 + 199 * 19 + 3,
      resting: 3,
      working: 199 * 19 + 3,
    },
    {
      appends: Array.from({ length: 200 }, (_, i) => 10_000 + i * 21),
      at: 10_000 + 199 * 21 + 3,
      resting: 3,
      working: 3,
    },
  ];
  for (const c of cases) {
    const work = new FlockWork();
    for (const at of c.appends) work.worked(at);
    const seen = work.seen(c.at);
    assert.equal(seen, { restingMs: c.resting, workingMs: c.working }, JSON.stringify(c).slice(0, 80));
    // The thread reads the same memory the server writes.
    assert.equal(new FlockWork(work.buffer).seen(c.at), seen);
  }
});

test("with CROWS_WEBHOOK_YIELD_S=0 deliveries go out while the flock works", async () => {
  await withEndpoint({ CROWS_WEBHOOK_YIELD_S: "0" }, async (server, receiver) => {
    // A flock that never rests, whatever the machine's load: the shared memory the sender's thread
    // reads says "appended just now, working since a minute from now" (never past any bound), kept
    // so every millisecond. A sender that yielded would hold every delivery; with 0 none waits.
    const work = (server.app.webhooks.sender as unknown as { flockWork: FlockWork }).flockWork;
    assert.instance(work, FlockWork);
    const times = new Float64Array(work.buffer, 0, 2);
    const busy = () => {
      times[0] = Date.now() + 60_000;
      times[1] = Date.now() + 60_000;
    };
    busy();
    const keepBusy = setInterval(busy, 1);
    try {
      for (let i = 0; i < 5; i++) {
        await trustChange(server, i);
        busy();
      }
      await receiver.waitFor((r) => r.length >= 5, 10_000, "5 deliveries while the flock works");
      assert.ok(work.seen(Date.now()).workingMs < 0, "the flock counted as working throughout");
    } finally {
      clearInterval(keepBusy);
    }
  });
});

test("a flock that rests (it waits on an owner or a model) has its deliveries sent in the pause", async () => {
  await withEndpoint({ CROWS_WEBHOOK_YIELD_S: "30" }, async (server, receiver) => {
    for (let i = 0; i < 3; i++) await trustChange(server, i);
    // A bound of 30 s, never reached: the flock appended nothing more, so it is quiet.
    await receiver.waitFor((r) => r.length >= 3, 10_000, "3 deliveries in the pause");
  });
});

test("CROWS_WEBHOOK_YIELD_S takes seconds, 0 or more, and refuses anything else", () => {
  assert.is(loadConfig({}).webhooks.yieldMs, 1000);
  for (const [raw, ms] of [
    ["0", 0],
    ["0.25", 250],
    ["2", 2000],
    [" 1.5 ", 1500],
    ["", 1000],
  ] as const)
    assert.is(loadConfig({ CROWS_WEBHOOK_YIELD_S: raw }).webhooks.yieldMs, ms, raw);
  for (const bad of ["-1", "abc", "1s", "NaN", "Infinity"]) {
    assert.throws(
      () => loadConfig({ CROWS_WEBHOOK_YIELD_S: bad }),
      (e: unknown) => e instanceof ConfigError && /CROWS_WEBHOOK_YIELD_S/.test((e as Error).message),
      bad,
    );
  }
});

test.run();

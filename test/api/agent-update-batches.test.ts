// How the agent doors batch a list's events (src/server/agents/event-batches.ts, docs/integrations.md
// "Updates"), on a real log: the first batch at once; after it, events held until one must go now
// or the interval is up; every event once, in order; the caller's abort ends it at once.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { eventBatches } from "../../src/server/agents/event-batches.ts";
import type { StoredEvent } from "../../src/log/event-log.ts";

let server: TestServer;
test.before(async () => {
  server = await startTestServer();
});
test.after(async () => {
  await server.close();
});

let streams = 0;
const freshStream = () => `agents-batches:${++streams}`;
const urgent = (e: StoredEvent) => e.name === "urgent.note";
const note = (stream: string, n: number) => server.app.log.append(stream, "note", { n });
const urgentNote = (stream: string, n: number) => server.app.log.append(stream, "urgent.note", { n });
const numbers = (batch: StoredEvent[]) => batch.map((e) => (JSON.parse(e.payload) as { n: number }).n);

test("the first batch goes at once; then plain events wait for one that must go now, and go with it, in order", async () => {
  const stream = freshStream();
  await note(stream, 1);
  // An interval no run reaches: only an urgent event can send what is held.
  const batches = eventBatches(server.app.log, stream, 0, { everyMs: 600_000, urgent });
  try {
    assert.equal(numbers((await batches.next()).value!), [1], "the first batch is not held");
    const next = batches.next();
    await note(stream, 2);
    await note(stream, 3);
    await urgentNote(stream, 4);
    assert.equal(numbers((await next).value!), [2, 3, 4], "held until the urgent one, then sent with it");
    const after = batches.next();
    await urgentNote(stream, 5);
    assert.equal(numbers((await after).value!), [5], "an urgent event alone goes alone");
  } finally {
    await batches.return(undefined);
  }
});

test("held events go when the interval is up, with no urgent event", async () => {
  const stream = freshStream();
  await note(stream, 1);
  const everyMs = 150;
  const batches = eventBatches(server.app.log, stream, 0, { everyMs, urgent });
  try {
    await batches.next();
    const firstSent = performance.now();
    // One commit, so one page: both are in hand at once, long before the interval is up.
    await server.app.log.appendWith(stream, async () => [
      { name: "note", payload: { n: 2 } },
      { name: "note", payload: { n: 3 } },
    ]);
    const held = await batches.next();
    assert.equal(numbers(held.value!), [2, 3]);
    // A lower bound only (a loaded machine may be late, never early): they were held, not sent at once.
    assert.ok(performance.now() - firstSent >= everyMs - 20, `sent after ${performance.now() - firstSent} ms`);
  } finally {
    await batches.return(undefined);
  }
});

test("an interval of 0 hands on each page as it comes; a cursor starts after it", async () => {
  const stream = freshStream();
  for (const n of [1, 2, 3]) await note(stream, n);
  const batches = eventBatches(server.app.log, stream, 2, { everyMs: 0, urgent });
  try {
    assert.equal(numbers((await batches.next()).value!), [3], "after seq 2");
    const next = batches.next();
    await note(stream, 4);
    assert.equal(numbers((await next).value!), [4]);
    const then = batches.next();
    await note(stream, 5);
    assert.equal(numbers((await then).value!), [5], "not held for more");
  } finally {
    await batches.return(undefined);
  }
});

test("varied appends, urgent and plain, in groups and alone: every event once, in order, no empty batch", async () => {
  for (const everyMs of [0, 5, 40]) {
    const stream = freshStream();
    const batches = eventBatches(server.app.log, stream, 0, { everyMs, urgent });
    const seen: number[] = [];
    const reading = (async () => {
      for await (const batch of batches) {
        assert.ok(batch.length > 0, "no empty batch");
        seen.push(...numbers(batch));
        if (seen.includes(300)) return;
      }
    })();
    let n = 0;
    let seed = 7 + everyMs;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    while (n < 300) {
      const group = Math.min(300 - n, 1 + Math.floor(random() * 6));
      const drafts = Array.from({ length: group }, () => ({
        name: random() < 0.15 ? "urgent.note" : "note",
        payload: { n: ++n },
      }));
      if (group === 1) await server.app.log.append(stream, drafts[0]!.name, drafts[0]!.payload);
      else await server.app.log.appendWith(stream, async () => drafts);
      if (random() < 0.3) await new Promise((r) => setTimeout(r, Math.floor(random() * 8)));
    }
    await urgentNote(stream, 301); // the end: sent at once, whatever is held
    await reading;
    assert.equal(
      seen.slice(0, 300),
      Array.from({ length: 300 }, (_, i) => i + 1),
      `every ${everyMs} ms: all, once, in order`,
    );
  }
});

test("the caller's abort ends the batches at once, held events or not", async () => {
  const stream = freshStream();
  await note(stream, 1);
  const leave = new AbortController();
  const batches = eventBatches(server.app.log, stream, 0, { everyMs: 600_000, urgent, signal: leave.signal });
  await batches.next();
  const next = batches.next();
  await note(stream, 2); // held: the interval is far off
  leave.abort();
  assert.ok((await next).done, "ended, what was held not sent to a caller who left");
});

test.run();

// No reader ever sees an uncommitted append (a client must never be told of
// an event a rollback can take back): a read, a follower's replay and
// an SSE client that connects while a transaction holding an appended event is still open see
// nothing of it, and nothing at all once it rolls back. Appends that arrive meanwhile wait for it.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { openSse } from "../helpers/sse.ts";

let server: TestServer;
test.before(async () => {
  // A quick heartbeat: a live SSE subscriber's next one proves it has read up to the stream's end.
  server = await startTestServer({ env: { CROWS_HEARTBEAT_MS: "50" } });
});
test.after(async () => {
  await server.close();
});

class Rollback extends Error {}

/**
 * Writes `count` event rows (seqs after `after`) straight through Prisma in a transaction held
 * open until `release()`, then rolled back: rows a reader outside it must never see.
 */
async function openRolledBackWrite(
  stream: string,
  after: number,
  count: number,
  name: string,
): Promise<{ release(): void; done: Promise<void> }> {
  let release!: () => void;
  const holding = new Promise<void>((resolve) => (release = resolve));
  let written!: () => void;
  const wrote = new Promise<void>((resolve) => (written = resolve));
  const done = server.app.prisma
    .$transaction(
      async (tx) => {
        for (let i = 1; i <= count; i++)
          await tx.event.create({ data: { stream, seq: after + i, name, payload: JSON.stringify({ i }) } });
        written();
        await holding;
        throw new Rollback("rolled back on purpose");
      },
      { timeout: 20_000 },
    )
    .catch((error) => {
      if (!(error instanceof Rollback)) throw error;
    });
  await wrote;
  return { release, done };
}

/** Opens a transaction that appends `count` events to `stream`, runs `during`, then rolls back or commits. */
async function inTransaction(
  stream: string,
  count: number,
  during: () => Promise<void>,
  outcome: "rollback" | "commit",
) {
  let reached!: () => void;
  const opened = new Promise<void>((resolve) => (reached = resolve));
  let finish!: () => void;
  const finishing = new Promise<void>((resolve) => (finish = resolve));
  const tx = server.app.log
    .appendWith(stream, async (tx) => {
      // A state change and, in this same transaction, the events: written, not yet committed.
      await tx.requester.upsert({ where: { name: `iso-${stream}` }, create: { name: `iso-${stream}` }, update: {} });
      reached();
      await finishing;
      if (outcome === "rollback") throw new Rollback("rolled back on purpose");
      return Array.from({ length: count }, (_, i) => ({ name: "iso.tick", payload: { i } }));
    })
    .catch((error) => {
      if (!(error instanceof Rollback)) throw error;
      return null;
    });
  await opened;
  await during();
  finish();
  return tx;
}

for (const [label, before, count] of [
  ["an empty stream", 0, 1],
  ["a stream with history", 3, 4],
  ["a batch", 2, 10],
] as const) {
  test(`mid-transaction reads of ${label} see only committed events; a rollback leaves no trace`, async () => {
    const stream = `iso:${label.replace(/\W+/g, "-")}`;
    for (let i = 0; i < before; i++) await server.app.log.append(stream, "iso.before", { i });
    // Rows written inside an open transaction on the one write connection, read from outside it.
    const readsDuring: number[][] = [];
    let lastDuring = -1;
    const open = await openRolledBackWrite(stream, before, count, "iso.uncommitted");
    readsDuring.push((await server.app.log.read(stream)).map((e) => e.seq));
    lastDuring = await server.app.log.lastSeq(stream);
    const follower = (async () => {
      const seen: string[] = [];
      const abort = new AbortController();
      setTimeout(() => abort.abort(), 300);
      for await (const event of server.app.log.follow(stream, 0, abort.signal)) seen.push(event.name);
      return seen;
    })();
    const seenByFollower = await follower;
    open.release();
    await open.done;
    assert.equal(
      readsDuring[0],
      Array.from({ length: before }, (_, i) => i + 1),
      "a read during the transaction saw only committed events",
    );
    assert.is(lastDuring, before);
    assert.ok(
      !seenByFollower.includes("iso.uncommitted"),
      `a follower saw an uncommitted event: ${seenByFollower.join(",")}`,
    );
    assert.is(seenByFollower.length, before);
    // Afterwards the stream goes on from the committed end, with no gap.
    const next = await server.app.log.append(stream, "iso.after", { ok: true });
    assert.is(next.seq, before + 1);
    assert.equal(
      (await server.app.log.read(stream)).map((e) => e.name),
      [...Array(before).fill("iso.before"), "iso.after"],
    );
  });
}

test("an SSE client that connects while events are uncommitted never receives them after a rollback", async () => {
  const { body } = await server.post("/api/lists", { text: "Buy milk", requester: "isolation" });
  const listId = body.list_id as string;
  const stream = `list:${listId}`;
  const watcher = await openSse(`${server.url}/api/events?list_id=${listId}`);
  await watcher.waitFor((m) => m.event === "item.triaged");
  await server.app.flock.stop(); // the list stands still: only this test writes to it now
  const last = await server.app.log.lastSeq(stream);
  const open = await openRolledBackWrite(stream, last, 3, "iso.tick");
  const client = await openSse(`${server.url}/api/events?list_id=${listId}`);
  await client.waitForCount(last, 5000);
  // Only a subscriber that has caught up beats: its next heartbeat, while the write is still open,
  // proves its replay read to the end and is done.
  await client.waitForNextComment(10_000);
  await watcher.waitForNextComment(10_000);
  assert.ok(
    !client.messages().some((m) => m.event === "iso.tick"),
    "the late client saw an uncommitted event while it was open",
  );
  open.release();
  await open.done;
  // A committed marker after the rollback: events arrive in order, so anything of the rolled-back
  // write that reached a client would have come before it.
  const marker = await server.app.log.append(stream, "iso.marker", { after: "rollback" });
  assert.is(marker.seq, last + 1, "the rollback left no seq taken");
  await client.waitFor((m) => m.event === "iso.marker", 10_000);
  await watcher.waitFor((m) => m.event === "iso.marker", 10_000);
  assert.ok(!client.messages().some((m) => m.event === "iso.tick"), "the late client saw an uncommitted event");
  assert.ok(!watcher.messages().some((m) => m.event === "iso.tick"), "the live client saw an uncommitted event");
  assert.equal(
    client
      .messages()
      .map((m) => m.event)
      .slice(last),
    ["iso.marker"],
  );
  assert.is(client.messages().length, last + 1);
  client.close();
  watcher.close();
});

test("a committed batch reaches a follower that connected while it was open, once, in order", async () => {
  const stream = "iso:commit";
  const seen: number[] = [];
  const abort = new AbortController();
  const following = (async () => {
    for await (const event of server.app.log.follow(stream, 0, abort.signal)) {
      seen.push(event.seq);
      if (seen.length === 5) break;
    }
  })();
  const other = await inTransaction(
    stream,
    5,
    async () => {
      // Appends elsewhere wait for the open transaction and then commit.
      const elsewhere = server.app.log.append("iso:elsewhere", "iso.tick", { i: 0 });
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.is(seen.length, 0);
      void elsewhere;
    },
    "commit",
  );
  assert.is(other!.length, 5);
  await following;
  abort.abort();
  assert.equal(seen, [1, 2, 3, 4, 5]);
  assert.is((await server.app.log.read("iso:elsewhere")).length, 1);
});

test.run();

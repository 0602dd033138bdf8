// The SQLite file's writer lock shared by the server's thread (its gate) and the webhook sender's
// thread (src/storage/writer-lock.ts): with it, the two threads' write transactions never meet
// SQLite's lock held by the other, even with SQLite's busy wait off; without it, they do.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Worker } from "node:worker_threads";
import Database from "better-sqlite3";
import { WriteConnectionLock } from "../../src/storage/write-connection-lock.ts";
import { SENDER_THREAD, SERVER_THREAD, WriterLock } from "../../src/storage/writer-lock.ts";

const ROWS = 400;

/** Both threads insert ROWS rows, one per transaction; `lock` given, both take it first. */
async function race(withLock: boolean): Promise<{ serverBusy: number; senderBusy: number; rows: number }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "crows-writer-lock-"));
  const file = path.join(dir, "db.sqlite");
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.pragma("busy_timeout = 0");
  db.exec(`CREATE TABLE "t" ("who" TEXT, "n" INTEGER)`);
  const lock = new WriterLock();
  // Without the lock the sender's side takes a lock of its own that nobody else takes.
  const senderSide = withLock ? lock : new WriterLock();
  const gate = new WriteConnectionLock(withLock ? lock : undefined);
  const worker = new Worker(new URL("../fixtures/writer-lock-writer.mjs", import.meta.url), {
    workerData: { file, buffer: senderSide.buffer, rows: ROWS },
    execArgv: [],
  });
  const insert = db.prepare(`INSERT INTO "t" ("who", "n") VALUES ('server', ?)`);
  let serverBusy = 0;
  try {
    await once(worker, "message"); // ready
    const done = once(worker, "message"); // listened for before the race: the thread may finish first
    worker.postMessage("go");
    for (let n = 0; n < ROWS; n++) {
      const release = await gate.acquire();
      try {
        db.prepare("BEGIN IMMEDIATE").run();
        insert.run(n);
        // A transaction that spans a turn of the event loop, as a Prisma one does.
        await new Promise((r) => setImmediate(r));
        db.prepare("COMMIT").run();
      } catch (error) {
        if ((error as { code?: string }).code !== "SQLITE_BUSY") throw error;
        serverBusy++;
        if (db.inTransaction) db.prepare("ROLLBACK").run();
      } finally {
        release();
      }
    }
    const [{ busy }] = (await done) as [{ busy: number }];
    const rows = db.prepare(`SELECT count(*) FROM "t"`).pluck().get() as number;
    return { serverBusy, senderBusy: busy, rows };
  } finally {
    await worker.terminate();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

test("with the shared lock, neither thread ever meets the other's write lock, and every row is stored", async () => {
  const { serverBusy, senderBusy, rows } = await race(true);
  assert.is(serverBusy, 0);
  assert.is(senderBusy, 0);
  assert.is(rows, 2 * ROWS);
});

test("without it, the same two writers do meet (the test can tell the difference)", async () => {
  const { serverBusy, senderBusy } = await race(false);
  assert.ok(serverBusy + senderBusy > 0, "two unsynchronised writers collided at least once");
});

test("releaseIfHeldBy frees a lock only for the holder named", async () => {
  const lock = new WriterLock();
  await lock.take(2);
  lock.releaseIfHeldBy(1);
  let taken = false;
  const waiting = lock.take(1).then(() => (taken = true));
  await new Promise((r) => setTimeout(r, 20));
  assert.is(taken, false, "still held by the sender");
  lock.releaseIfHeldBy(2);
  await waiting;
  assert.is(taken, true);
  lock.release();
});

test("the server's wait is counted, in the buffer both threads share, only while the other holds the lock", async () => {
  const lock = new WriterLock();
  const seenFromSender = new WriterLock(lock.buffer); // as the sender's thread builds it
  for (let i = 0; i < 20; i++) {
    await lock.take(SERVER_THREAD);
    lock.release();
  }
  assert.is(lock.serverWaitMs, 0, "a free lock costs no wait");
  for (const holdMs of [15, 40, 5]) {
    const before = lock.serverWaitMs;
    await seenFromSender.takeWhenFree(SENDER_THREAD);
    setTimeout(() => seenFromSender.release(), holdMs);
    const started = performance.now();
    await lock.take(SERVER_THREAD);
    const waited = performance.now() - started;
    lock.release();
    const counted = lock.serverWaitMs - before;
    assert.ok(
      counted >= holdMs - 2 && counted <= waited + 0.5,
      `held ${holdMs} ms, waited ${waited.toFixed(1)}, counted ${counted.toFixed(1)}`,
    );
    assert.is(seenFromSender.serverWaitMs, lock.serverWaitMs);
  }
});

test.run();

// WAL checkpoints leave the server's thread (src/storage/checkpointer.ts): with the default
// CROWS_SQLITE_CHECKPOINTS=thread, no commit on the server's connection checkpoints
// (wal_autocheckpoint = 0), and the database file still takes the WAL's pages in while the server
// runs, copied by the checkpoint thread; with `inline`, SQLite's own rule stays. A thread that cannot
// start or that ends hands checkpoints back to the server's connection, and says so.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { eventually } from "../helpers/scale-services.ts";
import { Checkpointer, SQLITE_AUTOCHECKPOINT_PAGES } from "../../src/storage/checkpointer.ts";
import { loadConfig } from "../../src/base/config.ts";
import { openDatabase } from "../../src/storage/db.ts";

const autocheckpoint = async (server: TestServer) =>
  Number(
    ((await server.app.prisma.$queryRawUnsafe("PRAGMA wal_autocheckpoint")) as Array<Record<string, unknown>>)[0]!
      .wal_autocheckpoint,
  );
const dbFile = (server: TestServer) => path.join(server.dataDir, "crows.db");

/** Appends `count` events of ~1 KB on a few streams: several times SQLite's 1,000-page threshold of WAL. */
async function appendMany(server: TestServer, count: number): Promise<void> {
  for (let i = 0; i < count; i += 50) {
    await Promise.all(
      Array.from({ length: 50 }, (_, j) =>
        server.app.log.append(`bench:${(i + j) % 7}`, "note", { n: i + j, text: `${"x".repeat(1000)} ${i + j}` }),
      ),
    );
  }
}

test("by default the server's connection never checkpoints, and the thread copies the WAL into the file while the server runs", async () => {
  const server = await startTestServer();
  try {
    const checkpointer = server.app.database.checkpointer!;
    await checkpointer.started; // the server serves meanwhile: nobody waits for it
    assert.is(await autocheckpoint(server), 0);
    assert.ok(checkpointer.running);
    const sizeBefore = statSync(dbFile(server)).size;
    await appendMany(server, 4000);
    // ~4 MB of payloads: they reach the database file itself, not only the -wal beside it.
    await eventually(
      "the checkpoint thread copying the WAL",
      async () => (statSync(dbFile(server)).size - sizeBefore > 3_000_000 ? true : undefined),
      10_000,
    );
    assert.ok(checkpointer.rounds > 0);
    const stored = await server.app.log.read("bench:3", 0, 10_000);
    assert.is(stored.length, Math.ceil((4000 - 3) / 7));
  } finally {
    await server.close();
  }
});

test("a server writing flat out keeps its WAL bounded: the thread's copies under the writer lock let it start over", async () => {
  const server = await startTestServer();
  try {
    const checkpointer = server.app.database.checkpointer!;
    await checkpointer.started;
    const wal = path.join(server.dataDir, "crows.db-wal");
    // The thread looks every 250 ms while the server is idle and every 10 ms while the WAL grows:
    // the writes go on until it has started the WAL over once, so what follows meets a thread at work.
    for (let warmup = 0; checkpointer.restarts === 0; warmup++) {
      assert.ok(warmup < 120, "the WAL never started over while the server kept writing");
      await appendMany(server, 250);
    }
    const restartsBefore = checkpointer.restarts;
    const walBefore = statSync(wal).size;
    const sizes: number[] = [];
    // 20 bursts of ~7 MB of WAL frames each (~145 MB in all), written as fast as the log goes. The
    // -wal file keeps its largest size (SQLite writes over it from the start, it does not shrink it),
    // so it grows only when the frames between two starts-over are more than ever before: how long
    // a copy takes on this machine's disk sets that mark, what the server wrote does not.
    const bursts = 20;
    for (let burst = 0; burst < bursts; burst++) {
      await appendMany(server, 2500);
      sizes.push(statSync(wal).size);
    }
    const shown = sizes.map((s) => Math.round(s / 1e6)).join(", ");
    assert.ok(
      checkpointer.restarts - restartsBefore >= 3,
      `the WAL started over ${checkpointer.restarts - restartsBefore} times in ${bursts} bursts; the -wal file: ${shown} MB`,
    );
    // Without the locked copies the file takes every burst's frames for good and grows by each
    // (7 MB a burst here, 150 MB at the end); with them it stays under half of that.
    const perBurst = 7_000_000;
    assert.ok(Math.max(...sizes) < walBefore + (bursts * perBurst) / 2, `the -wal file: ${shown} MB`);
    assert.ok(
      sizes.at(-1)! - sizes[bursts / 2 - 1]! < ((bursts / 2) * perBurst) / 2,
      `the -wal file still grows: ${shown} MB`,
    );
  } finally {
    await server.close();
  }
});

test("CROWS_SQLITE_CHECKPOINTS=inline keeps SQLite's own rule and starts no thread; anything else is refused", async () => {
  const server = await startTestServer({ env: { CROWS_SQLITE_CHECKPOINTS: "inline" } });
  try {
    assert.is(await autocheckpoint(server), SQLITE_AUTOCHECKPOINT_PAGES);
    assert.is(server.app.database.checkpointer, undefined);
    await appendMany(server, 500);
    assert.is((await server.app.log.read("bench:0", 0, 10_000)).length, Math.ceil(500 / 7));
  } finally {
    await server.close();
  }
  for (const bad of ["Thread", "off", "1", "server"]) {
    await startTestServer({ env: { CROWS_SQLITE_CHECKPOINTS: bad } }).then(
      async (s) => {
        await s.close();
        assert.unreachable(`${bad} was accepted`);
      },
      (error: Error) => assert.match(error.message, /CROWS_SQLITE_CHECKPOINTS must be thread or inline/),
    );
  }
});

test("an open database never holds the process open: a script that opens one and stops exits by itself", async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "crows-checkpoints-exit-"));
  try {
    const fixture = fileURLToPath(new URL("../fixtures/open-database-and-leave.ts", import.meta.url));
    const started = Date.now();
    const { code, stdout } = await new Promise<{ code: number | null; stdout: string }>((resolve, reject) => {
      const child = execFile(process.execPath, ["--import", "tsx", fixture, dir], { timeout: 20_000 }, (error, out) => {
        if (error && error.killed) reject(new Error(`still running after 20 s: the checkpoint thread held it open`));
        else resolve({ code: error ? (error.code as number) : 0, stdout: out });
      });
      child.stdin?.end();
    });
    assert.is(code, 0);
    assert.is(stdout.trim(), "thread");
    assert.ok(Date.now() - started < 20_000);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a thread that cannot start leaves checkpoints to the server's connection, and says why", async () => {
  for (const file of ["/nonexistent/crows.db", path.join(os.tmpdir(), "crows-no-such-db", "x.db")]) {
    const set: number[] = [];
    const lines: string[] = [];
    const checkpointer = new Checkpointer({
      file,
      autocheckpoint: (pages) => set.push(pages),
      logLine: (line) => lines.push(line),
    });
    await checkpointer.start();
    assert.is(checkpointer.running, false);
    assert.equal(set, [], "the server's connection keeps SQLite's default");
    assert.match(
      lines.join("\n"),
      /checkpoint thread could not start .*the server's connection checkpoints the WAL itself/,
    );
    await checkpointer.stop();
  }
});

test("a thread that ends hands checkpoints back to the server's connection; a stop hands them back quietly", async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "crows-checkpoints-"));
  const file = path.join(dir, "x.db");
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  try {
    for (const how of ["ends", "stopped"] as const) {
      const set: number[] = [];
      const lines: string[] = [];
      const checkpointer = new Checkpointer({
        file,
        autocheckpoint: (pages) => set.push(pages),
        logLine: (line) => lines.push(line),
        everyMs: 10,
      });
      await checkpointer.start();
      assert.ok(checkpointer.running);
      assert.equal(set, [0]);
      db.exec(`CREATE TABLE IF NOT EXISTS t (v TEXT)`);
      for (let i = 0; i < 300; i++) db.prepare("INSERT INTO t VALUES (?)").run("y".repeat(4000));
      await eventually("a round that copied pages", async () => (checkpointer.rounds > 0 ? true : undefined), 5_000);
      if (how === "ends") {
        await (checkpointer as unknown as { worker: { terminate(): Promise<number> } }).worker.terminate();
        await eventually("the hand-back", async () => (set.length === 2 ? true : undefined), 5_000);
        assert.match(lines.join("\n"), /checkpoint thread ended .*checkpoints the WAL itself from now on/);
      } else {
        await checkpointer.stop();
        assert.equal(lines, []);
      }
      assert.equal(set, [0, SQLITE_AUTOCHECKPOINT_PAGES]);
      assert.is(checkpointer.running, false);
      await checkpointer.stop();
    }
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("closing the database at any moment of the thread's start, by close() or by prisma.$disconnect(), stops the thread and never throws", async () => {
  const failures: unknown[] = [];
  const onFailure = (error: unknown) => failures.push(error);
  process.on("unhandledRejection", onFailure);
  process.on("uncaughtExceptionMonitor", onFailure);
  try {
    for (const how of ["close", "disconnect"] as const) {
      for (const afterMs of [-1, 0, 1, 3, 10, 30, 80]) {
        const dir = mkdtempSync(path.join(os.tmpdir(), "crows-checkpoints-close-"));
        try {
          const lines: string[] = [];
          const database = await openDatabase(loadConfig({ CROWS_DATA_DIR: dir }), (line) => lines.push(line));
          const checkpointer = database.checkpointer!;
          if (afterMs < 0) await checkpointer.started;
          else if (afterMs > 0) await new Promise((resolve) => setTimeout(resolve, afterMs));
          if (how === "close") await database.close();
          else await database.prisma.$disconnect();
          await checkpointer.started;
          await new Promise((resolve) => setTimeout(resolve, 20)); // a late hand-back would run now
          assert.is(checkpointer.alive, false, `${how} after ${afterMs} ms left the thread running`);
          assert.is(checkpointer.running, false);
          assert.equal(
            lines.filter((line) => /could not|failed/.test(line)),
            [],
            `${how} after ${afterMs} ms`,
          );
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      }
    }
    assert.equal(failures.map(String), []);
  } finally {
    process.off("unhandledRejection", onFailure);
    process.off("uncaughtExceptionMonitor", onFailure);
  }
});

test.run();

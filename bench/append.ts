// Benchmark: durable appends to the event log against raw drivers doing the same work, measured in
// the same run. One transaction per event on both sides: the raw side reads the
// stream's last seq and inserts, on the same schema and pragmas (WAL; synchronous as crows opens
// it, which on better-sqlite3's build means a sync at checkpoints, not per commit: see
// docs/performance.md).
//   sequential:  await log.append(...) one after another, vs raw BEGIN/SELECT/INSERT/COMMIT
//   concurrent:  100 streams appending at once (group commit shares their transactions)
//   with state:  appendWith with a state write in Prisma's transaction (nests, rare flock paths)
//   log state:   appendState with a state write through the log's own statements (the flock's
//                hot path: a token count beside crow.landed, src/storage/flock-state.ts)
// PostgreSQL too when BENCH_PG_URL (an admin URL; a fresh database is made) or CROWS_TEST_PG_URL
// is set. Run: npm run bench:append   (BENCH_EVENTS, BENCH_ROUNDS)
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { loadConfig } from "../src/base/config.ts";
import { openDatabase, type DatabaseHandle } from "../src/storage/db.ts";
import { EventLog } from "../src/log/event-log.ts";
import { createLocalBus } from "../src/log/bus.ts";
import { freshDatabase } from "../harness/pg-database.ts";

const EVENTS = Number(process.env.BENCH_EVENTS ?? 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const STREAMS = 100;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const rate = (n: number, ms: number) => n / (ms / 1000);
const payload = (i: number) => ({
  list_id: "bench",
  i,
  note: "an ordinary event payload of modest size",
  ts: new Date().toISOString(),
});

async function timed(run: () => Promise<void> | void): Promise<number> {
  const t0 = performance.now();
  await run();
  return performance.now() - t0;
}

interface Figures {
  raw: number;
  /** Raw, with the same state write as appendState's row (an UPDATE of a list's token counter) in each transaction. */
  rawState: number;
  log: number;
  concurrent: number;
  withState: number;
  withLogState: number;
}

async function measureLog(database: DatabaseHandle, tag: string): Promise<Omit<Figures, "raw" | "rawState">> {
  const log = new EventLog(database, createLocalBus());
  const seq = await timed(async () => {
    for (let i = 0; i < EVENTS; i++) await log.append(`bench:${tag}:seq`, "bench.tick", payload(i));
  });
  const concurrent = await timed(async () => {
    const perStream = Math.ceil(EVENTS / STREAMS);
    await Promise.all(
      Array.from({ length: STREAMS }, async (_, s) => {
        for (let i = 0; i < perStream; i++) await log.append(`bench:${tag}:c${s}`, "bench.tick", payload(i));
      }),
    );
  });
  const state = Math.min(EVENTS, 1000);
  const withState = await timed(async () => {
    for (let i = 0; i < state; i++) {
      await log.appendWith(`bench:${tag}:state`, async (tx) => {
        await tx.requester.upsert({
          where: { name: `bench-${tag}` },
          create: { name: `bench-${tag}` },
          update: { pranks: i },
        });
        return [{ name: "bench.tick", payload: payload(i) }];
      });
    }
  });
  const listId = `bench-${tag}`;
  await database.prisma.todoList.create({
    data: { id: listId, requester: "bench", text: "x", tokenBudget: 1_000_000 },
  });
  const withLogState = await timed(async () => {
    for (let i = 0; i < state; i++) {
      await log.appendState(`bench:${tag}:logstate`, async (tx) => {
        await tx.addTokens(listId, 3);
        return [{ name: "bench.tick", payload: payload(i) }];
      });
    }
  });
  return {
    log: rate(EVENTS, seq),
    concurrent: rate(Math.ceil(EVENTS / STREAMS) * STREAMS, concurrent),
    withState: rate(state, withState),
    withLogState: rate(state, withLogState),
  };
}

async function sqliteRound(round: number): Promise<Figures & { synchronous: number }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "crows-bench-append-"));
  try {
    const database = await openDatabase(loadConfig({ CROWS_DATA_DIR: dir }));
    const prisma = database.prisma;
    const synchronous = Number(
      ((await prisma.$queryRawUnsafe("PRAGMA synchronous")) as Array<{ synchronous: bigint }>)[0]!.synchronous,
    );
    // Raw: its own file with the same schema (copied from the migrated one) and pragmas.
    const rawDir = mkdtempSync(path.join(os.tmpdir(), "crows-bench-raw-"));
    await (await openDatabase(loadConfig({ CROWS_DATA_DIR: rawDir }))).close();
    const db = new Database(path.join(rawDir, "crows.db"));
    db.pragma("journal_mode = WAL");
    db.pragma("busy_timeout = 5000");
    // synchronous left as crows leaves it: better-sqlite3's build default, which in WAL mode syncs
    // at checkpoints, not at every commit (strace shows the same fsync pattern on both sides).
    const last = db.prepare(`SELECT MAX("seq") AS seq FROM "Event" WHERE "stream" = ?`);
    const insert = db.prepare(`INSERT INTO "Event" ("stream", "seq", "name", "payload", "ts") VALUES (?, ?, ?, ?, ?)`);
    const once = db.transaction((stream: string, i: number) => {
      const seq = ((last.get(stream) as { seq: number | null }).seq ?? 0) + 1;
      const now = new Date();
      insert.run(stream, seq, "bench.tick", JSON.stringify(payload(i)), now.toISOString().replace("Z", "+00:00"));
    });
    const raw = await timed(() => {
      for (let i = 0; i < EVENTS; i++) once("bench:raw", i);
    });
    db.prepare(
      `INSERT INTO "TodoList" ("id", "requester", "text", "tokenBudget") VALUES ('raw', 'bench', 'x', 1000000)`,
    ).run();
    const addTokens = db.prepare(`UPDATE "TodoList" SET "tokensUsed" = "tokensUsed" + ? WHERE "id" = ?`);
    const onceWithState = db.transaction((stream: string, i: number) => {
      addTokens.run(3, "raw");
      once(stream, i); // nested: runs inside this transaction
    });
    const states = Math.min(EVENTS, 1000);
    const rawState = await timed(() => {
      for (let i = 0; i < states; i++) onceWithState("bench:raw-state", i);
    });
    db.close();
    rmSync(rawDir, { recursive: true, force: true });
    const figures = await measureLog(database, `sqlite${round}`);
    await database.close();
    return { raw: rate(EVENTS, raw), rawState: rate(states, rawState), synchronous, ...figures };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function pgRound(adminUrl: string, round: number): Promise<Figures> {
  const database = await freshDatabase(adminUrl);
  try {
    const opened = await openDatabase(loadConfig({ DATABASE_URL: database.url }));
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    const raw = await timed(async () => {
      for (let i = 0; i < EVENTS; i++) {
        await client.query("BEGIN");
        const { rows } = await client.query({
          name: "last",
          text: `SELECT MAX("seq") AS seq FROM "Event" WHERE "stream" = $1`,
          values: ["bench:raw"],
        });
        await client.query({
          name: "insert",
          text: `INSERT INTO "Event" ("stream", "seq", "name", "payload", "ts") VALUES ($1, $2, $3, $4, $5)`,
          values: [
            "bench:raw",
            (rows[0]?.seq ?? 0) + 1,
            "bench.tick",
            JSON.stringify(payload(i)),
            new Date().toISOString(),
          ],
        });
        await client.query("COMMIT");
      }
    });
    await client.query(
      `INSERT INTO "TodoList" ("id", "requester", "text", "tokenBudget") VALUES ('raw', 'bench', 'x', 1000000)`,
    );
    const states = Math.min(EVENTS, 1000);
    const rawState = await timed(async () => {
      for (let i = 0; i < states; i++) {
        await client.query("BEGIN");
        await client.query({
          name: "tokens",
          text: `UPDATE "TodoList" SET "tokensUsed" = "tokensUsed" + $1 WHERE "id" = $2`,
          values: [3, "raw"],
        });
        const { rows } = await client.query({
          name: "last",
          text: `SELECT MAX("seq") AS seq FROM "Event" WHERE "stream" = $1`,
          values: ["bench:raw-state"],
        });
        await client.query({
          name: "insert",
          text: `INSERT INTO "Event" ("stream", "seq", "name", "payload", "ts") VALUES ($1, $2, $3, $4, $5)`,
          values: [
            "bench:raw-state",
            (rows[0]?.seq ?? 0) + 1,
            "bench.tick",
            JSON.stringify(payload(i)),
            new Date().toISOString(),
          ],
        });
        await client.query("COMMIT");
      }
    });
    await client.end();
    const figures = await measureLog(opened, `pg${round}`);
    await opened.close();
    return { raw: rate(EVENTS, raw), rawState: rate(states, rawState), ...figures };
  } finally {
    await database.drop();
  }
}

function report(title: string, rounds: Figures[]) {
  const m = (pick: (f: Figures) => number) => median(rounds.map(pick));
  const fmt = (n: number) => n.toFixed(0).padStart(7);
  console.log(title);
  console.log(`  raw driver, one tx per event:        ${fmt(m((f) => f.raw))} events/s  (baseline)`);
  console.log(
    `  EventLog.append, sequential:         ${fmt(m((f) => f.log))} events/s  ${m((f) => f.log / f.raw).toFixed(2)}x raw  (goal >= 0.5x)`,
  );
  console.log(
    `  EventLog.append, ${STREAMS} streams at once: ${fmt(m((f) => f.concurrent))} events/s  ${m((f) => f.concurrent / f.raw).toFixed(2)}x raw  (group commit)`,
  );
  console.log(
    `  appendWith + a state write (Prisma tx): ${fmt(m((f) => f.withState))} events/s  ${m((f) => f.withState / f.raw).toFixed(2)}x raw`,
  );
  console.log(
    `  appendState + a state write (log's own statements): ${fmt(m((f) => f.withLogState))} events/s  ${m((f) => f.withLogState / f.raw).toFixed(2)}x raw`,
  );
  console.log(
    `  raw driver, the same state write in each tx: ${fmt(m((f) => f.rawState))} events/s  (baseline for the state rows)`,
  );
  console.log(
    `    Prisma tx ${m((f) => f.withState / f.rawState).toFixed(2)}x, appendState ${m((f) => f.withLogState / f.rawState).toFixed(2)}x raw with state`,
  );
  console.log(
    `  runs (raw / seq / concurrent / state / log state / raw state): ${rounds.map((f) => [f.raw, f.log, f.concurrent, f.withState, f.withLogState, f.rawState].map((n) => n.toFixed(0)).join("/")).join(", ")}`,
  );
}

const sqlite = [];
for (let r = 0; r < ROUNDS; r++) sqlite.push(await sqliteRound(r));
report(
  `SQLite append, ${EVENTS} events, median of ${ROUNDS} (WAL, synchronous as crows opens it, PRAGMA says ${sqlite[0]!.synchronous})`,
  sqlite,
);

const adminUrl = process.env.BENCH_PG_URL ?? process.env.CROWS_TEST_PG_URL;
if (adminUrl) {
  const rounds = [];
  for (let r = 0; r < ROUNDS; r++) rounds.push(await pgRound(adminUrl, r));
  report(`PostgreSQL append, ${EVENTS} events, median of ${ROUNDS}`, rounds);
} else {
  console.log("PostgreSQL: skipped (set BENCH_PG_URL or CROWS_TEST_PG_URL)");
}

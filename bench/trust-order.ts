// Benchmark: what the commit-order lock costs on PostgreSQL. W writers append E trust.changed
// events each, all at once, on streams of their own, through the EventLog with the lock (what the
// server does) and without it (the baseline, in the same run on the same database), and through a
// bare INSERT per event with no log at all (the floor). Prints events/s for each.
// Run: CROWS_TEST_PG_URL=postgresql://... npx tsx bench/trust-order.ts  (scripts/test-services.sh prints one)
import { freshDatabase } from "../harness/pg-database.ts";
import { loadConfig } from "../src/config.ts";
import { commitOrderLock, openDatabase } from "../src/storage/db.ts";
import { EventLog } from "../src/log/event-log.ts";
import { createLocalBus } from "../src/log/bus.ts";

const WRITERS = Number(process.env.BENCH_WRITERS ?? 8);
const EACH = Number(process.env.BENCH_EVENTS ?? 100);
const pgUrl = process.env.CROWS_TEST_PG_URL;
if (!pgUrl) throw new Error("set CROWS_TEST_PG_URL (scripts/test-services.sh prints it)");

const db = await freshDatabase(pgUrl);
const config = loadConfig({ DATABASE_URL: db.url, CROWS_DATA_DIR: "/tmp/crows-bench-trust" });
const prisma = await openDatabase(config);
try {
  const payload = (w: number, i: number) => ({ nest_id: "todo", holder: `w${w}`, task_type: "writing", from: 0, to: 1, i, ts: new Date().toISOString() });
  const run = async (label: string, appendOne: (w: number, i: number) => Promise<unknown>) => {
    const t0 = performance.now();
    await Promise.all(Array.from({ length: WRITERS }, async (_, w) => {
      for (let i = 0; i < EACH; i++) await appendOne(w, i);
    }));
    const ms = performance.now() - t0;
    console.log(`  ${label.padEnd(34)} ${((WRITERS * EACH) / (ms / 1000)).toFixed(0).padStart(6)} events/s (${ms.toFixed(0)} ms)`);
  };
  const locked = new EventLog(prisma, createLocalBus(), { commitOrderLock: commitOrderLock(config)! });
  const unlocked = new EventLog(prisma, createLocalBus());
  console.log(`trust.changed appends on PostgreSQL: ${WRITERS} writers x ${EACH} events, concurrent`);
  await run("bare INSERT (floor)", (w, i) => prisma.event.create({ data: { stream: `bare:${w}`, seq: i + 1, name: "trust.changed", payload: JSON.stringify(payload(w, i)) } }));
  await run("EventLog, no lock (baseline)", (w, i) => unlocked.append(`base:${w}`, "trust.changed", payload(w, i)));
  await run("EventLog + commit-order lock", (w, i) => locked.append(`lock:${w}`, "trust.changed", payload(w, i)));
  await run("EventLog, other events (no lock)", (w, i) => locked.append(`other:${w}`, "item.started", payload(w, i)));
} finally {
  await prisma.$disconnect();
  await db.drop();
}

// Benchmark: what the commit-order lock costs on PostgreSQL. W writers append E trust.changed
// events each, all at once, on streams of their own, through the EventLog with the lock (what the
// server does) and without it (the baseline, in the same run on the same database), and through a
// bare INSERT per event with no log at all (the floor). Runs several passes, alternating the
// order, and prints each contestant's median events/s next to the same-run baseline.
// Run: CROWS_TEST_PG_URL=postgresql://... npx tsx bench/trust-order.ts  (scripts/test-services.sh prints one)
import { freshDatabase } from "../harness/pg-database.ts";
import { loadConfig } from "../src/base/config.ts";
import { commitOrderLock, openDatabase } from "../src/storage/db.ts";
import { EventLog } from "../src/log/event-log.ts";
import { createLocalBus } from "../src/log/bus.ts";

const WRITERS = Number(process.env.BENCH_WRITERS ?? 8);
const EACH = Number(process.env.BENCH_EVENTS ?? 100);
const PASSES = Number(process.env.BENCH_PASSES ?? 5);
const pgUrl = process.env.CROWS_TEST_PG_URL;
if (!pgUrl) throw new Error("set CROWS_TEST_PG_URL (scripts/test-services.sh prints it)");

const db = await freshDatabase(pgUrl);
const config = loadConfig({ DATABASE_URL: db.url, CROWS_DATA_DIR: "/tmp/crows-bench-trust" });
const database = await openDatabase(config);
const prisma = database.prisma;
try {
  const payload = (w: number, i: number) => ({
    nest_id: "todo",
    holder: `w${w}`,
    task_type: "writing",
    from: 0,
    to: 1,
    i,
    ts: new Date().toISOString(),
  });
  // Each contestant appends on streams of its own per pass, so passes never collide on a seq.
  const run = async (
    appendOne: (pass: number, w: number, i: number) => Promise<unknown>,
    pass: number,
  ): Promise<number> => {
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: WRITERS }, async (_, w) => {
        for (let i = 0; i < EACH; i++) await appendOne(pass, w, i);
      }),
    );
    return (WRITERS * EACH) / ((performance.now() - t0) / 1000);
  };
  const locked = new EventLog(database, createLocalBus(), { commitOrderLock: commitOrderLock(config)! });
  const unlocked = new EventLog(database, createLocalBus());
  const contestants: Array<[string, (pass: number, w: number, i: number) => Promise<unknown>]> = [
    [
      "bare INSERT (floor)",
      (p, w, i) =>
        prisma.event.create({
          data: { stream: `bare:${p}:${w}`, seq: i + 1, name: "trust.changed", payload: JSON.stringify(payload(w, i)) },
        }),
    ],
    ["EventLog, no lock (baseline)", (p, w, i) => unlocked.append(`base:${p}:${w}`, "trust.changed", payload(w, i))],
    ["EventLog + commit-order lock", (p, w, i) => locked.append(`lock:${p}:${w}`, "trust.changed", payload(w, i))],
    ["EventLog, other events (no lock)", (p, w, i) => locked.append(`other:${p}:${w}`, "item.started", payload(w, i))],
  ];
  console.log(
    `trust.changed appends on PostgreSQL: ${WRITERS} writers x ${EACH} events, concurrent; ${PASSES} passes, order alternating, median`,
  );
  const rates = new Map<string, number[]>(contestants.map(([label]) => [label, []]));
  for (let pass = 0; pass < PASSES; pass++) {
    // Odd passes run the contestants in reverse, so none always goes first on a cold table or last on a full one.
    const order = pass % 2 === 0 ? contestants : [...contestants].reverse();
    for (const [label, appendOne] of order) rates.get(label)!.push(await run(appendOne, pass));
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const baseline = median(rates.get("EventLog, no lock (baseline)")!);
  for (const [label] of contestants) {
    const rate = median(rates.get(label)!);
    console.log(
      `  ${label.padEnd(34)} ${rate.toFixed(0).padStart(6)} events/s  ${(rate / baseline).toFixed(2)}x baseline  (passes: ${rates
        .get(label)!
        .map((r) => r.toFixed(0))
        .join(" / ")})`,
    );
  }
} finally {
  await database.close();
  await db.drop();
}

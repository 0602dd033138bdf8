// Benchmark: where SQLite's WAL checkpoints run (src/storage/checkpointer.ts). The same sequential
// appends through the event log (one transaction per event, as the flock's steps are), with the
// checkpoints in their own thread (CROWS_SQLITE_CHECKPOINTS=thread, the default) and inline, in the
// commit that takes the WAL past 1,000 pages (SQLite's own way: the same-run baseline), rounds
// interleaved. Figures: the appends' wall time, the slowest append, and the event loop's longest
// and 99th-percentile delay (perf_hooks): what every other request on the server waits for.
// Run: npm run bench:checkpoints   (BENCH_EVENTS=6000, BENCH_ROUNDS=5)
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { loadConfig } from "../src/base/config.ts";
import { openDatabase } from "../src/storage/db.ts";
import { EventLog } from "../src/log/event-log.ts";
import { createLocalBus } from "../src/log/bus.ts";

const EVENTS = Number(process.env.BENCH_EVENTS ?? 6000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const MODES = ["thread", "inline"] as const;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
// The size of a flock event with its state row (an item.answered with its answer, ~1 KB).
const payload = (i: number) => ({
  list_id: "bench",
  item_id: `bench-${i % 50}`,
  answer: "a crow's answer of ordinary length ".repeat(25),
  i,
});

interface Round {
  wallMs: number;
  slowestMs: number;
  loopMaxMs: number;
  loopP99Ms: number;
}

async function round(mode: (typeof MODES)[number]): Promise<Round> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "crows-bench-checkpoints-"));
  const database = await openDatabase(loadConfig({ CROWS_DATA_DIR: dir, CROWS_SQLITE_CHECKPOINTS: mode }), () => {});
  const log = new EventLog(database, createLocalBus());
  const loop = monitorEventLoopDelay({ resolution: 1 });
  try {
    let slowest = 0;
    loop.enable();
    const t0 = performance.now();
    for (let i = 0; i < EVENTS; i++) {
      const a = performance.now();
      await log.append(`list:bench-${i % 20}`, "item.answered", payload(i));
      slowest = Math.max(slowest, performance.now() - a);
    }
    const wallMs = performance.now() - t0;
    loop.disable();
    return { wallMs, slowestMs: slowest, loopMaxMs: loop.max / 1e6, loopP99Ms: loop.percentile(99) / 1e6 };
  } finally {
    await database.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const results = new Map<string, Round[]>(MODES.map((m) => [m, []]));
for (let r = 0; r < ROUNDS; r++) {
  for (const mode of r % 2 === 0 ? MODES : [...MODES].reverse()) results.get(mode)!.push(await round(mode));
}
const figure = (mode: string, pick: (r: Round) => number) => median(results.get(mode)!.map(pick));
const base = (pick: (r: Round) => number) => figure("inline", pick);
for (const mode of MODES) {
  const vs = (pick: (r: Round) => number) =>
    mode === "inline"
      ? "baseline"
      : `${(((figure(mode, pick) - base(pick)) / base(pick)) * 100).toFixed(0)}% vs inline`;
  console.log(
    `${EVENTS} sequential appends, checkpoints ${mode}: wall ${figure(mode, (r) => r.wallMs).toFixed(0)} ms (${vs((r) => r.wallMs)}), ` +
      `slowest append ${figure(mode, (r) => r.slowestMs).toFixed(1)} ms (${vs((r) => r.slowestMs)}), ` +
      `event loop delay max ${figure(mode, (r) => r.loopMaxMs).toFixed(1)} ms, p99 ${figure(mode, (r) => r.loopP99Ms).toFixed(2)} ms; medians of ${ROUNDS} rounds`,
  );
}

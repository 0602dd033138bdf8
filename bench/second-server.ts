// Benchmark: how fast a second server on a busy data folder refuses (issue 11 asks under a
// second). Starts one server with `crows up`, then runs `crows serve` on the same folder N times,
// next to two baselines measured in the same run: a bare `node -e 0`, and `crows status` (node +
// the tsx loader + the command line, no server). Run: npm run bench:second-server
import { spawnSync } from "node:child_process";
import { baseEnv, BIN, crows, removeDir, tempDataDir, ROOT } from "../harness/cli.ts";

const RUNS = Number(process.env.BENCH_RUNS ?? 7);

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function timed(args: string[], env: Record<string, string>): { ms: number; code: number | null } {
  const t0 = performance.now();
  const run = spawnSync(process.execPath, args, { cwd: ROOT, env, stdio: "ignore" });
  return { ms: performance.now() - t0, code: run.status };
}

const dir = tempDataDir();
const env = baseEnv(dir);
try {
  const up = await crows(["up"], env);
  if (up.code !== 0) throw new Error(`crows up failed: ${up.stderr}`);
  const bare: number[] = [];
  const status: number[] = [];
  const refusal: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    bare.push(timed(["-e", "0"], env).ms);
    status.push(timed([BIN, "status"], env).ms);
    const refused = timed([BIN, "serve"], env);
    if (refused.code !== 3) throw new Error(`the second server exited ${refused.code}, not 3`);
    refusal.push(refused.ms);
  }
  console.log(`second server on a busy folder, median of ${RUNS} runs`);
  console.log(`  node -e 0 (baseline):              ${median(bare).toFixed(0)} ms`);
  console.log(`  crows status (baseline, no server): ${median(status).toFixed(0)} ms`);
  console.log(`  crows serve refused, exit 3:        ${median(refusal).toFixed(0)} ms`);
} finally {
  await crows(["stop"], env);
  removeDir(dir);
}

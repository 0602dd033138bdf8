// Runs test files side by side, each in a process of its own, for a person who wants a tier's
// answer quickly (npm run test:quick). Most of a test's time is spent waiting on servers and
// timers, not on the CPU, so a few files at once finish far sooner than uvu's one-after-another.
// `npm test` stays uvu's own sequential run: it is what CI reads.
//
//   tsx scripts/test-run.ts [--jobs N] unit api          # tiers (folders under test/)
//   tsx scripts/test-run.ts test/api/lists-api.test.ts   # or files
//
// Each file's output is printed whole when it ends (never interleaved), then uvu's summary over
// all of them and a plain "N passed, N failed" line. A file that ends without uvu's summary (it
// crashed) counts as one failure.
import { spawn } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { availableParallelism } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import pLimit from "p-limit";

const { values, positionals } = parseArgs({
  options: { jobs: { type: "string", short: "j" } },
  allowPositionals: true,
});
const jobs = Math.max(1, Number(values.jobs ?? availableParallelism() * 2) || 1);

function testFiles(target: string): string[] {
  const where = target.endsWith(".ts") ? target : path.join("test", target);
  if (statSync(where).isFile()) return [where];
  return readdirSync(where, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".test.ts"))
    .map((f) => path.join(where, f))
    .sort();
}

interface Outcome {
  file: string;
  total: number;
  passed: number;
  skipped: number;
  crashed: boolean;
}

function count(output: string, label: string): number | undefined {
  const m = new RegExp(`^\\s*${label}:\\s+(\\d+)`, "m").exec(output);
  return m ? Number(m[1]) : undefined;
}

function runFile(file: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", file], {
      env: { ...process.env, FORCE_COLOR: "0" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const chunks: Buffer[] = [];
    child.stdout.on("data", (c: Buffer) => chunks.push(c));
    child.stderr.on("data", (c: Buffer) => chunks.push(c));
    child.on("close", (code) => {
      const output = Buffer.concat(chunks).toString("utf8");
      process.stdout.write(`\n${file}\n${output.trimEnd()}\n`);
      const total = count(output, "Total");
      const passed = count(output, "Passed");
      const crashed = total === undefined || passed === undefined || (code !== 0 && total === passed);
      resolve({ file, total: total ?? 0, passed: passed ?? 0, skipped: count(output, "Skipped") ?? 0, crashed });
    });
  });
}

const files = (positionals.length ? positionals : ["unit", "api"]).flatMap(testFiles);
const started = performance.now();
const limit = pLimit(jobs);
const outcomes = await Promise.all(files.map((f) => limit(() => runFile(f))));

const total = outcomes.reduce((n, o) => n + o.total + (o.crashed && o.total === o.passed ? 1 : 0), 0);
const passed = outcomes.reduce((n, o) => n + o.passed, 0);
const skipped = outcomes.reduce((n, o) => n + o.skipped, 0);
const failedFiles = outcomes.filter((o) => o.crashed || o.passed < o.total).map((o) => o.file);
const seconds = ((performance.now() - started) / 1000).toFixed(1);
console.log(`\n  Total:     ${total}\n  Passed:    ${passed}\n  Skipped:   ${skipped}\n  Duration:  ${seconds}s`);
console.log(`  Files:     ${files.length}, ${jobs} at a time`);
if (failedFiles.length) console.log(`  Failed in: ${failedFiles.join(", ")}`);
console.log(`${passed} passed, ${total - passed} failed`);
process.exitCode = failedFiles.length ? 1 : 0;

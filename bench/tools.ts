// Benchmark: what tools cost a list (issue 32, "A bench"; docs/performance.md "Tools"). Two crows
// servers on the offline brain, each in a process of its own (bench/tools-server.ts), a scripted
// owner approving every item at once (harness/owner.ts, as bench/list-e2e.ts does; read-only calls
// are `allow`, so no call waits):
//   tooled: the real filesystem MCP server (@modelcontextprotocol/server-filesystem, a child
//           process of the tooled server) registered over POST /api/tools/servers on a temporary
//           folder of 20 files;
//   plain:  no tool server registered: main's path (toolsFor is empty, every flight flies as ever).
// Rounds alternate in one run (the first of each kind is a warm-up, not counted):
//   files/tooled: a 20-item list whose items each name two files; the offline brain reads both
//                 with read_text_file (its rule reads each file an item names, in its first step):
//                 two read-only calls per item, 40 a list;
//   files/plain:  the same list on the plain server (the same flights, no call): the baseline;
//   sdk:          as many read_text_file calls as files/tooled made, straight through the SDK's
//                 Client over stdio (in this process) to another process of the same MCP server on
//                 the same folder;
//   busy/plain:   a 50-item list naming no file, no tool server (main's path);
//   busy/tooled:  the same list with the filesystem server registered: tools offered, none used.
// Server CPU is each crows server process's own process.cpuUsage(), read over IPC before and after
// a list: every thread of that process and nothing else. The owners' clients (SSE parsing, verdict
// POSTs) and the SDK-straight client run in this process, whose CPU is reported apart; each MCP
// server's own CPU is in its own process and counted in neither. crows's own server CPU per call =
// (server CPU files/tooled - server CPU files/plain) / calls: everything a call adds to the server
// (its SDK client half of the call, toolsFor, the call's rows, tool.called/tool.returned and
// serving them to the owner, the offline brain's second step). "Beyond the MCP round trip"
// subtracts the sdk round's client CPU per call: the client half of the same call that any MCP
// client spends (framing, stdio, parsing), which crows spends too.
// Run: npm run bench:tools   (BENCH_ROUNDS, default 3 counted rounds of each kind;
// BENCH_SERVER_PROF=<dir> writes a --cpu-prof of each server in <dir>/tooled and <dir>/plain)
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { fork, type ChildProcess } from "node:child_process";
import { ownerFollows } from "../harness/owner.ts";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const FILES = 20;
const BUSY_ITEMS = 50;
const FILESYSTEM = fileURLToPath(
  new URL("../node_modules/@modelcontextprotocol/server-filesystem/dist/index.js", import.meta.url),
);

const fileName = (i: number) => `note-${String(i + 1).padStart(2, "0")}.txt`;
const FILE_ITEMS = Array.from(
  { length: FILES },
  (_, i) => `Summarise what ${fileName(i)} and ${fileName((i + 1) % FILES)} say`,
);
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
const BUSY = Array.from({ length: BUSY_ITEMS }, (_, i) => `${BASE[i % BASE.length]} (${i + 1})`);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const cpuMs = (since: NodeJS.CpuUsage) => {
  const c = process.cpuUsage(since);
  return (c.user + c.system) / 1000;
};
const usageMs = (c: NodeJS.CpuUsage) => (c.user + c.system) / 1000;

/** A crows server in a child process (bench/tools-server.ts): its URL, its own CPU, its end. */
interface ServerProcess {
  url: string;
  /** The server process's CPU so far, ms (every thread of it). */
  cpuMs(): Promise<number>;
  post(p: string, body: unknown): Promise<{ status: number; body: any; text: string }>;
  close(): Promise<void>;
}

async function startServerProcess(env: Record<string, string>, profileDir?: string): Promise<ServerProcess> {
  const child: ChildProcess = fork(fileURLToPath(new URL("./tools-server.ts", import.meta.url)), [], {
    execArgv: ["--import", "tsx", ...(profileDir ? ["--cpu-prof", "--cpu-prof-dir", profileDir] : [])],
    env: { ...process.env, BENCH_SERVER_ENV: JSON.stringify(env) },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const next = <T>(key: string) =>
    new Promise<T>((resolve, reject) => {
      const onMessage = (m: any) => {
        if (m && key in m) {
          child.off("message", onMessage);
          child.off("exit", onExit);
          resolve(m[key] as T);
        }
      };
      const onExit = (code: number | null) => reject(new Error(`the bench server exited (${code})`));
      child.on("message", onMessage);
      child.once("exit", onExit);
    });
  const url = await next<string>("url");
  return {
    url,
    cpuMs: async () => {
      const answer = next<NodeJS.CpuUsage>("cpu");
      child.send("cpu");
      return usageMs(await answer);
    },
    post: async (p, body) => {
      const response = await fetch(url + p, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : undefined, text };
    },
    close: async () => {
      if (child.exitCode !== null) return;
      child.send("close");
      await exited;
    },
  };
}

interface ListRun {
  ms: number;
  /** The crows server process's CPU. */
  cpuMs: number;
  /** This process's CPU meanwhile: the owner's client. */
  ownerCpuMs: number;
  calls: number;
  failed: number;
  events: number;
}

const folder = mkdtempSync(path.join(os.tmpdir(), "crows-bench-tools-"));
for (let i = 0; i < FILES; i++)
  writeFileSync(path.join(folder, fileName(i)), `Note ${i + 1}: ${"espresso ".repeat(40)}\n`);

const env = { CROWS_TOKEN_BUDGET: "500000" };
const profile = (name: string) => process.env.BENCH_SERVER_PROF && path.join(process.env.BENCH_SERVER_PROF, name);
const plain = await startServerProcess(env, profile("plain"));
const tooled = await startServerProcess(env, profile("tooled"));
const sdk = new Client({ name: "bench-tools", version: "0" });
try {
  const added = await tooled.post("/api/tools/servers", {
    name: "files",
    command: process.execPath,
    args: [FILESYSTEM, folder],
  });
  if (added.status !== 201) throw new Error(`registering the filesystem server: ${added.status} ${added.text}`);
  await sdk.connect(
    new StdioClientTransport({ command: process.execPath, args: [FILESYSTEM, folder], stderr: "ignore" }),
  );

  let n = 0;
  const list = async (server: ServerProcess, items: string[]): Promise<ListRun> => {
    const server0 = await server.cpuMs();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const res = await server.post("/api/lists", { text: items.join("\n"), requester: `bench-${n++}` });
    const listId = res.body.list_id as string;
    const owner = await ownerFollows(server.url, listId, {}, 300_000);
    const events = await owner.finished;
    const ms = performance.now() - t0;
    const ownerCpu = cpuMs(cpu0);
    const cpu = (await server.cpuMs()) - server0;
    owner.sse.close();
    const returned = events.filter((e) => e.event === "tool.returned");
    return {
      ms,
      cpuMs: cpu,
      ownerCpuMs: ownerCpu,
      calls: returned.length,
      failed: returned.filter((e) => e.data.ok !== true).length,
      events: events.length,
    };
  };
  const direct = async (calls: number) => {
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < calls; i++) {
      const result = await sdk.callTool({ name: "read_text_file", arguments: { path: fileName(i % FILES) } });
      if (result.isError) throw new Error(`read_text_file failed: ${JSON.stringify(result.content)}`);
    }
    return { ms: performance.now() - t0, cpuMs: cpuMs(cpu0) };
  };

  const runs = {
    filesTooled: [] as ListRun[],
    filesPlain: [] as ListRun[],
    busyPlain: [] as ListRun[],
    busyTooled: [] as ListRun[],
  };
  const sdkRuns: Array<{ ms: number; cpuMs: number; calls: number }> = [];
  for (let r = 0; r <= ROUNDS; r++) {
    const warm = r === 0;
    const ft = await list(tooled, FILE_ITEMS);
    const fp = await list(plain, FILE_ITEMS);
    const calls = Math.max(ft.calls, 1);
    const sd = { ...(await direct(calls)), calls };
    const bp = await list(plain, BUSY);
    const bt = await list(tooled, BUSY);
    if (ft.failed > 0) throw new Error(`${ft.failed} tool calls failed`);
    if (ft.calls !== 2 * FILES) throw new Error(`${ft.calls} calls, not two per item (${2 * FILES})`);
    if (bt.calls > 0 || fp.calls > 0 || bp.calls > 0)
      throw new Error("a list that names no file (or has no tools) made a call");
    if (warm) continue;
    runs.filesTooled.push(ft);
    runs.filesPlain.push(fp);
    sdkRuns.push(sd);
    runs.busyPlain.push(bp);
    runs.busyTooled.push(bt);
  }

  const list3 = (xs: number[], digits = 0) => xs.map((x) => x.toFixed(digits)).join(" / ");
  const med = (xs: ListRun[], pick: (r: ListRun) => number) => median(xs.map(pick));
  const ft = runs.filesTooled;
  const fp = runs.filesPlain;
  const callsPerRound = ft.map((r) => r.calls);
  const extraCpuPerCall = ft.map((r, i) => (r.cpuMs - fp[i]!.cpuMs) / r.calls);
  const extraMsPerCall = ft.map((r, i) => (r.ms - fp[i]!.ms) / r.calls);
  const sdkCpuPerCall = sdkRuns.map((s) => s.cpuMs / s.calls);
  const sdkMsPerCall = sdkRuns.map((s) => s.ms / s.calls);
  const beyond = extraCpuPerCall.map((x, i) => x - sdkCpuPerCall[i]!);
  console.log(
    `tools bench: offline brain, owner approves at once, ${ROUNDS} counted rounds of each kind after a warm-up, alternating in one run (load average ${os.loadavg()[0]!.toFixed(1)})`,
  );
  console.log(`${FILES}-item list, each item names two files (the offline rule reads both in one step):`);
  console.log(
    `  read_text_file calls per list: ${list3(callsPerRound)} (events ${ft[0]!.events} vs ${fp[0]!.events} without tools)`,
  );
  console.log(
    `  wall POST -> list.finished: with tools median ${med(ft, (r) => r.ms).toFixed(0)} ms (${list3(ft.map((r) => r.ms))}); same list, no tool server ${med(fp, (r) => r.ms).toFixed(0)} ms (${list3(fp.map((r) => r.ms))})`,
  );
  console.log(
    `  server CPU (the crows server's process alone): with tools median ${med(ft, (r) => r.cpuMs).toFixed(0)} ms (${list3(ft.map((r) => r.cpuMs))}); no tool server ${med(fp, (r) => r.cpuMs).toFixed(0)} ms (${list3(fp.map((r) => r.cpuMs))})`,
  );
  console.log(
    `  owner's client CPU (this process, meanwhile): with tools median ${med(ft, (r) => r.ownerCpuMs).toFixed(0)} ms; no tool server ${med(fp, (r) => r.ownerCpuMs).toFixed(0)} ms`,
  );
  console.log(
    `  crows server CPU per call (with tools - without, / calls): median ${median(extraCpuPerCall).toFixed(2)} ms (${list3(extraCpuPerCall, 2)})`,
  );
  console.log(
    `  SDK straight, same calls, same server program and folder: round trip median ${median(sdkMsPerCall).toFixed(2)} ms per call (${list3(sdkMsPerCall, 2)}), client CPU ${median(sdkCpuPerCall).toFixed(2)} ms per call (${list3(sdkCpuPerCall, 2)})`,
  );
  console.log(
    `  crows server CPU per call beyond the MCP round trip (minus the SDK-straight client CPU): median ${median(beyond).toFixed(2)} ms (${list3(beyond, 2)}) (goal < 2 ms); wall added per call ${median(extraMsPerCall).toFixed(2)} ms (${list3(extraMsPerCall, 2)})`,
  );
  const bp = runs.busyPlain;
  const bt = runs.busyTooled;
  const ratios = bt.map((r, i) => r.ms / bp[i]!.ms);
  const cpuRatios = bt.map((r, i) => r.cpuMs / bp[i]!.cpuMs);
  console.log(`${BUSY_ITEMS}-item list naming no file (server CPU):`);
  console.log(
    `  no tool server (main's path): wall median ${med(bp, (r) => r.ms).toFixed(0)} ms (${list3(bp.map((r) => r.ms))}), CPU ${med(bp, (r) => r.cpuMs).toFixed(0)} ms (${list3(bp.map((r) => r.cpuMs))})`,
  );
  console.log(
    `  filesystem server registered, tools offered, none used: wall median ${med(bt, (r) => r.ms).toFixed(0)} ms (${list3(bt.map((r) => r.ms))}), CPU ${med(bt, (r) => r.cpuMs).toFixed(0)} ms (${list3(bt.map((r) => r.cpuMs))})`,
  );
  console.log(
    `  offered / none: wall ${median(ratios).toFixed(2)}x (${list3(ratios, 2)}), CPU ${median(cpuRatios).toFixed(2)}x (${list3(cpuRatios, 2)}); events ${bt[0]!.events} vs ${bp[0]!.events}`,
  );
} finally {
  await sdk.close().catch(() => undefined);
  await tooled.close();
  await plain.close();
  rmSync(folder, { recursive: true, force: true });
}

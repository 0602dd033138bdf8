// Benchmark: live fan-out over compat SSE against a bare node:http writer, in the same run
// (issue 9). S subscribers spread over L lists; events are appended at R per second for D seconds
// (round robin over the lists); a child process holds every client connection, so the server has
// its own core. Prints deliveries per second and p50/p99 latency (append to client), for crows
// and for a bare server that writes the same frames to the same clients, and the ratio.
// Then the memory an idle subscriber costs the server (heap + buffers, after a GC).
// Run: npm run bench:fanout   (BENCH_SUBSCRIBERS, BENCH_LISTS, BENCH_RATE, BENCH_SECONDS, BENCH_ROUNDS)
// Needs ulimit -n above the subscriber count (the script says so if it is not).
import { fork, type ChildProcess } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { startTestServer } from "../harness/server.ts";

const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 5000);
const LISTS = Number(process.env.BENCH_LISTS ?? 100);
const RATE = Number(process.env.BENCH_RATE ?? 1000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const IDLE = Number(process.env.BENCH_IDLE ?? 2000);

interface Stats {
  delivered: number;
  firstMs: number;
  lastMs: number;
  p50: number;
  p99: number;
}

// ------------------------------------------------------------------------------------------------
// The client side, in a child process: N connections, counting frames and their latency.
if (process.argv[2] === "clients") {
  const latencies: number[] = [];
  let delivered = 0;
  let firstMs = 0;
  let lastMs = 0;
  const requests: http.ClientRequest[] = [];
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  process.on("message", async (message: { open?: { urls: string[] }; report?: true; reset?: true; close?: true }) => {
    if (message.open) {
      let opened = 0;
      let failed = 0;
      const urls = message.open.urls;
      await new Promise<void>((resolve) => {
        const next = (i: number) => {
          if (i >= urls.length) return;
          const req = http.get(urls[i]!, { agent, headers: { accept: "text/event-stream" } }, (res) => {
            res.setEncoding("latin1");
            let rest = "";
            res.on("data", (chunk: string) => {
              const text = rest + chunk;
              let start = 0;
              let end: number;
              const now = performance.timeOrigin + performance.now();
              while ((end = text.indexOf("\n\n", start)) >= 0) {
                const at = text.indexOf('"t":', start);
                if (at >= 0 && at < end) {
                  delivered += 1;
                  const sent = Number(text.slice(at + 4, text.indexOf(",", at)));
                  latencies.push(now - sent);
                  if (firstMs === 0) firstMs = now;
                  lastMs = now;
                }
                start = end + 2;
              }
              rest = text.slice(start);
            });
            if (++opened === urls.length) resolve();
          });
          req.on("error", () => {
            failed += 1;
            if (++opened === urls.length) resolve();
          });
          requests.push(req);
          // A few at a time, so the listen backlog is not overrun.
          if (i % 50 === 49) setTimeout(() => next(i + 1), 20);
          else next(i + 1);
        };
        next(0);
      });
      process.send!({ opened: opened - failed, failed });
    } else if (message.reset) {
      latencies.length = 0;
      delivered = 0;
      firstMs = lastMs = 0;
      process.send!({ reset: true });
    } else if (message.report) {
      latencies.sort((a, b) => a - b);
      const pick = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
      process.send!({ stats: { delivered, firstMs, lastMs, p50: pick(0.5), p99: pick(0.99) } satisfies Stats });
    } else if (message.close) {
      for (const req of requests) req.destroy();
      process.exit(0);
    }
  });
}

function ask<T>(child: ChildProcess, message: object, key: string): Promise<T> {
  return new Promise((resolve) => {
    const on = (reply: Record<string, unknown>) => {
      if (key in reply) {
        child.off("message", on);
        resolve(reply[key] as T);
      }
    };
    child.on("message", on);
    child.send(message);
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Offers RATE events/s for SECONDS, round robin over the lists; a late tick sends what is due. */
async function drive(append: (list: number, payload: string) => Promise<unknown> | undefined): Promise<number> {
  let sent = 0;
  let list = 0;
  const t0 = performance.now();
  const inflight: Array<Promise<unknown> | undefined> = [];
  for (let elapsed = 0; elapsed < SECONDS * 1000; elapsed = performance.now() - t0) {
    const due = Math.floor((elapsed * RATE) / 1000);
    while (sent < due) {
      const payload = `{"t":${performance.timeOrigin + performance.now()},"n":${sent},"note":"a fan-out benchmark event"}`;
      inflight.push(append(list, payload));
      list = (list + 1) % LISTS;
      sent += 1;
    }
    await sleep(10);
  }
  await Promise.all(inflight);
  return sent;
}

async function runCrows(child: ChildProcess): Promise<Stats & { sent: number }> {
  const server = await startTestServer();
  try {
    const ids = Array.from({ length: LISTS }, (_, i) => `fan-${i}`);
    for (const id of ids)
      await server.app.prisma.todoList.create({
        data: { id, requester: "bench", text: "-", tokenBudget: 1, status: "finished" },
      });
    const urls = Array.from({ length: SUBSCRIBERS }, (_, i) => `${server.url}/api/events?list_id=${ids[i % LISTS]}`);
    const opened = await ask<number>(child, { open: { urls } }, "opened");
    if (opened < SUBSCRIBERS) console.log(`  (only ${opened} of ${SUBSCRIBERS} connections opened)`);
    await sleep(500);
    await ask(child, { reset: true }, "reset");
    const log = server.app.log;
    const sent = await drive((list, payload) =>
      log.append(`list:${ids[list]}`, "bench.tick", JSON.parse(payload) as object),
    );
    await sleep(2000);
    const stats = await ask<Stats>(child, { report: true }, "stats");
    return { ...stats, sent };
  } finally {
    await server.close();
  }
}

async function runBare(child: ChildProcess): Promise<Stats & { sent: number }> {
  const subscribers: http.ServerResponse[][] = Array.from({ length: LISTS }, () => []);
  const seqs = new Array<number>(LISTS).fill(0);
  const server = http.createServer((req, res) => {
    const list = Number(new URL(req.url ?? "/", "http://x").searchParams.get("list"));
    res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" });
    res.flushHeaders();
    subscribers[list]!.push(res);
    res.on("close", () => subscribers[list]!.splice(subscribers[list]!.indexOf(res), 1));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  try {
    const urls = Array.from({ length: SUBSCRIBERS }, (_, i) => `http://127.0.0.1:${port}/?list=${i % LISTS}`);
    const opened = await ask<number>(child, { open: { urls } }, "opened");
    if (opened < SUBSCRIBERS) console.log(`  (only ${opened} of ${SUBSCRIBERS} connections opened)`);
    await sleep(500);
    await ask(child, { reset: true }, "reset");
    const sent = await drive((list, payload) => {
      const frame = `id: ${++seqs[list]!}\nevent: bench.tick\ndata: ${payload}\n\n`;
      for (const res of subscribers[list]!) res.write(frame);
    });
    await sleep(2000);
    const stats = await ask<Stats>(child, { report: true }, "stats");
    return { ...stats, sent };
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

async function idleBytes(): Promise<number> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) return NaN;
  const server = await startTestServer();
  const child = fork(fileURLToPath(import.meta.url), ["clients"], { execArgv: ["--import", "tsx"] });
  try {
    await server.app.prisma.todoList.create({
      data: { id: "idle", requester: "bench", text: "-", tokenBudget: 1, status: "finished" },
    });
    gc();
    await sleep(200);
    gc();
    const before = process.memoryUsage();
    await ask(
      child,
      { open: { urls: Array.from({ length: IDLE }, () => `${server.url}/api/events?list_id=idle`) } },
      "opened",
    );
    await sleep(1000);
    gc();
    await sleep(200);
    gc();
    const after = process.memoryUsage();
    const used = (m: NodeJS.MemoryUsage) => m.heapUsed + m.external + m.arrayBuffers;
    return (used(after) - used(before)) / IDLE;
  } finally {
    child.send({ close: true });
    await server.close();
  }
}

async function main() {
  console.log(
    `fan-out: ${SUBSCRIBERS} subscribers over ${LISTS} lists, ${RATE} events/s offered for ${SECONDS} s, median of ${ROUNDS}`,
  );
  const crows: Array<Stats & { sent: number }> = [];
  const bare: Array<Stats & { sent: number }> = [];
  for (let r = 0; r < ROUNDS; r++) {
    for (const [side, run, into] of [
      ["bare", runBare, bare],
      ["crows", runCrows, crows],
    ] as const) {
      if (process.env.BENCH_ONLY && process.env.BENCH_ONLY !== side) continue;
      const child = fork(fileURLToPath(import.meta.url), ["clients"], { execArgv: ["--import", "tsx"] });
      try {
        into.push(await run(child));
      } finally {
        child.send({ close: true });
      }
      const last = into[into.length - 1]!;
      console.log(
        `  round ${r + 1} ${side}: sent ${last.sent}, delivered ${last.delivered} (${perSecond(last).toFixed(0)}/s), p50 ${last.p50.toFixed(1)} ms, p99 ${last.p99.toFixed(1)} ms`,
      );
    }
  }
  const ratio = median(crows.map((c, i) => perSecond(c) / perSecond(bare[i]!)));
  const p99ratio = median(crows.map((c, i) => c.p99 / bare[i]!.p99));
  console.log(
    `  bare node:http writer: ${median(bare.map(perSecond)).toFixed(0)} deliveries/s, p99 ${median(bare.map((b) => b.p99)).toFixed(1)} ms  (baseline)`,
  );
  console.log(
    `  crows compat SSE:      ${median(crows.map(perSecond)).toFixed(0)} deliveries/s, p99 ${median(crows.map((c) => c.p99)).toFixed(1)} ms`,
  );
  console.log(
    `  ratio ${ratio.toFixed(2)}x deliveries (goal >= 0.6x), p99 ${p99ratio.toFixed(2)}x bare's (goal <= 3x)`,
  );
  if (process.env.BENCH_IDLE !== "0") {
    const bytes = await idleBytes();
    console.log(
      `  memory per idle REST SSE connection: ${Number.isNaN(bytes) ? "run with node --expose-gc" : `${(bytes / 1024).toFixed(1)} KiB`} (goal <= 16 KiB; ${IDLE} idle clients)`,
    );
  }
}

/** Deliveries per second over the offered window (the time the driver ran plus what straggled in). */
function perSecond(stats: Stats): number {
  const window = Math.max(SECONDS * 1000, stats.lastMs - stats.firstMs);
  return stats.delivered / (window / 1000);
}

if (process.argv[2] !== "clients") await main();

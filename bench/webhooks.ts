// Benchmark: webhooks. (1) Deliveries per second to a fast local receiver (answers 204 at once),
// from events appended on 50 streams, next to a baseline measured in the same run: the same number
// of plain HTTP POSTs of the same bodies to the same receiver, 16 at a time (the sender's own
// limit), with no database, signing or bookkeeping. (2) A 50-item list's wall time, POST to
// list.finished, with 0, 1 and 10 endpoints configured (each a fast local receiver), rounds
// interleaved; 0 endpoints is the same-run baseline. Goal: webhooks add under 10% to the list.
// The owner answers each approval in-process the moment it is logged. The receivers run in a child
// process, so their work is not counted as crows'.
// Run: npx tsx bench/webhooks.ts   (BENCH_ROUNDS=3, BENCH_ITEMS=50, BENCH_DELIVERIES=2000)
import { fork, type ChildProcess } from "node:child_process";
import http from "node:http";
import { fileURLToPath } from "node:url";
import type { AddressInfo } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { loadConfig } from "../src/base/config.ts";
import { createApp, type App } from "../src/app.ts";
import { startServer, type RunningServer } from "../src/server/http.ts";
import { listStream } from "../src/base/streams.ts";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ITEMS = Number(process.env.BENCH_ITEMS ?? 50);
const DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 2000);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function receiver(): Promise<{ url: string; count: () => number; close: () => Promise<void> }> {
  let count = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      count += 1;
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    count: () => count,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

type Command = { open: number } | { count: true } | { closeAll: true };

// The receivers' side, in a child process: opens receivers on command, counts, closes them.
if (process.argv[2] === "receivers") {
  let open: Array<Awaited<ReturnType<typeof receiver>>> = [];
  process.on("message", async (command: Command) => {
    if ("open" in command) {
      open = await Promise.all(Array.from({ length: command.open }, receiver));
      process.send!({ urls: open.map((r) => r.url) });
    } else if ("count" in command) {
      process.send!({ count: open.reduce((n, r) => n + r.count(), 0) });
    } else {
      await Promise.all(open.map((r) => r.close()));
      open = [];
      process.send!({ closed: true });
    }
  });
}

/** The receivers child: one command at a time, each answered before the next. */
function receiversChild(): { ask: (command: Command) => Promise<any>; stop: () => void } {
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ["receivers"], { execArgv: ["--import", "tsx"] });
  let waiting: ((reply: unknown) => void) | undefined;
  child.on("message", (reply) => waiting?.(reply));
  return {
    ask: (command) =>
      new Promise((resolve) => {
        waiting = resolve;
        child.send(command);
      }),
    stop: () => child.kill(),
  };
}

async function start(): Promise<{ app: App; server: RunningServer; close: () => Promise<void> }> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "crows-bench-webhooks-"));
  const config = loadConfig({ CROWS_PORT: "0", CROWS_DATA_DIR: dataDir, CROWS_TOKEN_BUDGET: "400000", CROWS_WEBHOOK_ALLOW_PRIVATE: "1", CROWS_APPROVAL_WINDOW_MS: "600000" });
  const app = await createApp(config, { logLine: () => {} });
  const server = await startServer(app);
  return {
    app,
    server,
    close: async () => {
      await server.close();
      await app.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

const until = async (check: () => boolean | Promise<boolean>, timeoutMs: number, what: string) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
};

/** (1) Deliveries per second, and the plain-POST baseline. */
async function deliveriesPerSecond(): Promise<{ sent: number; plain: number }> {
  const sink = await receiver();
  const { app, close } = await start();
  try {
    await app.webhooks.endpoints.add({ url: sink.url });
    const started = performance.now();
    await Promise.all(
      Array.from({ length: DELIVERIES }, (_, i) =>
        app.log.append(`bench:${i % 50}`, "trust.changed", { list_id: `bench-${i % 50}`, holder: "flock", task_type: "bench", from: 0, to: 1, ts: new Date().toISOString() }),
      ),
    );
    await until(() => sink.count() >= DELIVERIES, 300_000, "every delivery");
    const sent = DELIVERIES / ((performance.now() - started) / 1000);

    // The baseline: the same bodies, posted plainly, 16 at a time.
    const body = JSON.stringify({ type: "trust.changed", timestamp: new Date().toISOString(), data: { list_id: "bench-0", holder: "flock", task_type: "bench", from: 0, to: 1 } });
    const before = sink.count();
    const t0 = performance.now();
    let next = 0;
    const agent = new http.Agent({ keepAlive: false });
    const worker = async () => {
      while (next < DELIVERIES) {
        next += 1;
        await new Promise<void>((resolve, reject) => {
          const req = http.request(sink.url, { method: "POST", agent, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) } }, (res) => res.resume().on("end", resolve));
          req.on("error", reject);
          req.end(body);
        });
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker));
    const plain = (sink.count() - before) / ((performance.now() - t0) / 1000);
    return { sent, plain };
  } finally {
    await close();
    await sink.close();
  }
}

const TEXTS = ["Buy milk", "Call the plumber about the leak", "Research espresso machines and write a short summary", "Brainstorm names for a bakery", "Draft an email to the landlord", "Plan a weekend trip to the coast", "Fix the bug in the login script", "Book a dentist appointment", "Compare three phone plans", "Write a thank-you note to Sam"];

/** (2) One 50-item list with `endpoints` receivers (in the child) configured: ms from POST to list.finished. */
async function listTime(receivers: ReturnType<typeof receiversChild>, endpoints: number): Promise<{ ms: number; delivered: number }> {
  const { urls } = (await receivers.ask({ open: endpoints })) as { urls: string[] };
  const { app, close } = await start();
  try {
    for (const url of urls) await app.webhooks.endpoints.add({ url });
    const text = Array.from({ length: ITEMS }, (_, i) => `${TEXTS[i % TEXTS.length]} (${i + 1})`).join("\n");
    const started = performance.now();
    const { listId } = await app.flock.submitList({ text, requester: `bench-${endpoints}` });
    const abort = new AbortController();
    for await (const event of app.log.follow(listStream(listId), 0, abort.signal)) {
      if ((event.name === "item.triaged" || event.name === "item.answered") && event.payload.includes('"needs_approval":true')) {
        const { item_id } = JSON.parse(event.payload) as { item_id: string };
        await app.flock.postVerdict({ itemId: item_id, target: event.name === "item.triaged" ? "triage" : "output", approve: true });
      }
      if (event.name === "list.finished") break;
    }
    abort.abort();
    const ms = performance.now() - started;
    const { count } = (await receivers.ask({ count: true })) as { count: number };
    return { ms, delivered: count };
  } finally {
    await close();
    await receivers.ask({ closeAll: true });
  }
}

if (process.argv[2] !== "receivers") await main();

async function main() {
  const { sent, plain } = await deliveriesPerSecond();
  console.log(`deliveries/s to a fast local receiver (${DELIVERIES} events on 50 streams): ${sent.toFixed(0)} /s; baseline, plain POSTs of the same bodies 16 at a time: ${plain.toFixed(0)} /s`);

  if (ROUNDS === 0) return;
  const receivers = receiversChild();
  const times = new Map<number, number[]>([[0, []], [1, []], [10, []]]);
  const deliveredBy = new Map<number, number>();
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? [0, 1, 10] : [10, 1, 0];
    for (const n of order) {
      const { ms, delivered } = await listTime(receivers, n);
      times.get(n)!.push(ms);
      deliveredBy.set(n, delivered);
    }
  }
  const base = median(times.get(0)!);
  for (const [n, ms] of times) {
    const m = median(ms);
    console.log(`${ITEMS}-item list with ${String(n).padStart(2)} endpoint(s): median ${m.toFixed(0)} ms over ${ROUNDS} rounds (${ms.map((x) => x.toFixed(0)).join(", ")}); ${n === 0 ? "baseline" : `${(((m - base) / base) * 100).toFixed(1)}% vs 0 endpoints`}; delivered by list.finished: ${deliveredBy.get(n)}`);
  }
  receivers.stop();
}

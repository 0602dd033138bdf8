// Benchmark: webhooks. (1) Deliveries per second to a fast local receiver (answers 204 at once),
// from events appended on 50 streams, next to a baseline measured in the same run: the same number
// of plain HTTP POSTs of the same bodies to the same receiver, 16 at a time (the sender's own
// limit), with no database, signing or bookkeeping. (2) A 50-item list's wall time, POST to
// list.finished, with 0, 1 and 10 endpoints configured (each a fast local receiver), 10 whose sends
// never wait for the flock to rest (CROWS_WEBHOOK_YIELD_MS=0, what the wait saves the flock, and
// what it costs the deliveries: when the last arrived after list.finished), and 10 with the sender
// in the server's own thread (CROWS_WEBHOOK_SENDER=server, what the sender's thread saves), rounds
// interleaved; 0 endpoints is the same-run baseline. Goal: webhooks add under 10%.
// Beside each wall time, the CPU time of the flock's thread during it (Linux schedstat): the
// webhooks' cost on the flock itself, which other work on a loaded machine does not inflate; and
// where the rest of the wall time went: the flock's thread runnable but waiting for a core (the
// machine's other work), and waiting for SQLite's writer lock (the sender's writes).
// The owner answers each approval in-process the moment it is logged. The receivers run in a child
// process, so their work is not counted as crows', at low priority (BENCH_RECEIVER_NICE, 19), as
// servers elsewhere would be.
// Run: npx tsx bench/webhooks.ts   (BENCH_ROUNDS=3, BENCH_ITEMS=50, BENCH_LISTS=1, BENCH_DELIVERIES=2000)
import { fork, type ChildProcess } from "node:child_process";
import http from "node:http";
import { fileURLToPath } from "node:url";
import type { AddressInfo } from "node:net";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { loadConfig } from "../src/base/config.ts";
import { createApp, type App } from "../src/app.ts";
import { startServer, type RunningServer } from "../src/server/http.ts";
import { listStream } from "../src/base/streams.ts";
import { WriterLock } from "../src/storage/writer-lock.ts";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ITEMS = Number(process.env.BENCH_ITEMS ?? 50);
const DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 2000);
/** Lists posted at once (each of ITEMS items): more than one makes the flock work past CROWS_WEBHOOK_YIELD_MS. */
const LISTS = Number(process.env.BENCH_LISTS ?? 1);
const RECEIVER_NICE = Number(process.env.BENCH_RECEIVER_NICE ?? 19);
/**
 * This process's main thread, the flock's, in ms (Linux: /proc schedstat, nanoseconds): its CPU
 * time, what the webhooks cost the flock whatever else the machine runs; and its time runnable but
 * waiting for a core, what other threads and processes took from it. Undefined elsewhere.
 */
function mainThreadSched(): { cpuMs: number; queuedMs: number } | undefined {
  try {
    const [cpu, queued] = readFileSync(`/proc/self/task/${process.pid}/schedstat`, "utf8").split(" ").map(Number);
    return { cpuMs: cpu! / 1e6, queuedMs: queued! / 1e6 };
  } catch {
    return undefined;
  }
}
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
  // The receivers stand in for servers elsewhere: at RECEIVER_NICE their CPU does not take the
  // flock's core on a small machine (0 lets them compete with it as equals).
  try {
    os.setPriority(child.pid!, RECEIVER_NICE);
  } catch {
    // not permitted: they run at the bench's own priority
  }
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

async function start(
  env: Record<string, string> = {},
): Promise<{ app: App; server: RunningServer; close: () => Promise<void> }> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "crows-bench-webhooks-"));
  const config = loadConfig({
    CROWS_PORT: "0",
    CROWS_DATA_DIR: dataDir,
    CROWS_TOKEN_BUDGET: "400000",
    CROWS_WEBHOOK_ALLOW_PRIVATE: "1",
    CROWS_APPROVAL_WINDOW_MS: "600000",
    ...env,
  });
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
        app.log.append(`bench:${i % 50}`, "trust.changed", {
          list_id: `bench-${i % 50}`,
          holder: "flock",
          task_type: "bench",
          from: 0,
          to: 1,
          ts: new Date().toISOString(),
        }),
      ),
    );
    await until(() => sink.count() >= DELIVERIES, 300_000, "every delivery");
    const sent = DELIVERIES / ((performance.now() - started) / 1000);

    // The baseline: the same bodies, posted plainly, 16 at a time.
    const body = JSON.stringify({
      type: "trust.changed",
      timestamp: new Date().toISOString(),
      data: { list_id: "bench-0", holder: "flock", task_type: "bench", from: 0, to: 1 },
    });
    const before = sink.count();
    const t0 = performance.now();
    let next = 0;
    const agent = new http.Agent({ keepAlive: false });
    const worker = async () => {
      while (next < DELIVERIES) {
        next += 1;
        await new Promise<void>((resolve, reject) => {
          const req = http.request(
            sink.url,
            {
              method: "POST",
              agent,
              headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
            },
            (res) => res.resume().on("end", resolve),
          );
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

const TEXTS = [
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

/** A configuration the list runs under: how many endpoints, and settings beside them. */
interface Setup {
  name: string;
  endpoints: number;
  env?: Record<string, string>;
}

// The last one is the sender in the server's own thread (CROWS_WEBHOOK_SENDER=server): what the
// sender's own thread saves the flock, in the same run.
const SETUPS: Setup[] = [
  { name: " 0 endpoints", endpoints: 0 },
  { name: " 1 endpoint", endpoints: 1 },
  { name: "10 endpoints", endpoints: 10 },
  { name: "10 endpoints, sends never wait for the flock", endpoints: 10, env: { CROWS_WEBHOOK_YIELD_MS: "0" } },
  { name: "10 endpoints, sender in the server's thread", endpoints: 10, env: { CROWS_WEBHOOK_SENDER: "server" } },
];

/** (2) One 50-item list with `endpoints` receivers (in the child) configured: ms from POST to list.finished. */
async function listTime(
  receivers: ReturnType<typeof receiversChild>,
  setup: Setup,
): Promise<{ ms: number; busyMs: number; queuedMs: number; lockMs: number; delivered: number; drainedMs: number }> {
  const endpoints = setup.endpoints;
  const { urls } = (await receivers.ask({ open: endpoints })) as { urls: string[] };
  const { app, close } = await start(setup.env);
  try {
    for (const url of urls) await app.webhooks.endpoints.add({ url });
    const text = Array.from({ length: ITEMS }, (_, i) => `${TEXTS[i % TEXTS.length]} (${i + 1})`).join("\n");
    const started = performance.now();
    const schedBefore = mainThreadSched();
    const lock = app.database.senderDatabase?.writerLock
      ? new WriterLock(app.database.senderDatabase.writerLock)
      : undefined;
    const lockBefore = lock?.serverWaitMs ?? 0;
    const lists = await Promise.all(
      Array.from({ length: LISTS }, (_, n) => app.flock.submitList({ text, requester: `bench-${endpoints}-${n}` })),
    );
    const abort = new AbortController();
    await Promise.all(
      lists.map(async ({ listId }) => {
        for await (const event of app.log.follow(listStream(listId), 0, abort.signal)) {
          if (
            (event.name === "item.triaged" || event.name === "item.answered") &&
            event.payload.includes('"needs_approval":true')
          ) {
            const { item_id } = JSON.parse(event.payload) as { item_id: string };
            await app.flock.postVerdict({
              itemId: item_id,
              target: event.name === "item.triaged" ? "triage" : "output",
              approve: true,
            });
          }
          if (event.name === "list.finished") break;
        }
      }),
    );
    abort.abort();
    const ms = performance.now() - started;
    const schedAfter = mainThreadSched();
    const busyMs = schedBefore && schedAfter ? schedAfter.cpuMs - schedBefore.cpuMs : Number.NaN;
    const queuedMs = schedBefore && schedAfter ? schedAfter.queuedMs - schedBefore.queuedMs : Number.NaN;
    const lockMs = (lock?.serverWaitMs ?? 0) - lockBefore;
    const { count } = (await receivers.ask({ count: true })) as { count: number };
    // What waiting for the flock costs the deliveries: the last one's arrival after list.finished.
    const pending = async () =>
      (await app.prisma.webhookOutbox.count()) +
      (await app.prisma.webhookDelivery.count({ where: { state: "pending" } }));
    await until(async () => endpoints === 0 || (await pending()) === 0, 120_000, "every delivery of the list");
    const drainedMs = performance.now() - started - ms;
    return { ms, busyMs, queuedMs, lockMs, delivered: count, drainedMs };
  } finally {
    await close();
    await receivers.ask({ closeAll: true });
  }
}

if (process.argv[2] !== "receivers") await main();

async function main() {
  const { sent, plain } = await deliveriesPerSecond();
  console.log(
    `deliveries/s to a fast local receiver (${DELIVERIES} events on 50 streams): ${sent.toFixed(0)} /s; baseline, plain POSTs of the same bodies 16 at a time: ${plain.toFixed(0)} /s`,
  );

  if (ROUNDS === 0) return;
  const receivers = receiversChild();
  const times = new Map<Setup, number[]>(SETUPS.map((setup) => [setup, []]));
  const busy = new Map<Setup, number[]>(SETUPS.map((setup) => [setup, []]));
  const queued = new Map<Setup, number[]>(SETUPS.map((setup) => [setup, []]));
  const locked = new Map<Setup, number[]>(SETUPS.map((setup) => [setup, []]));
  const deliveredBy = new Map<Setup, number>();
  const drained = new Map<Setup, number[]>(SETUPS.map((setup) => [setup, []]));
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? SETUPS : [...SETUPS].reverse();
    for (const setup of order) {
      const { ms, busyMs, queuedMs, lockMs, delivered, drainedMs } = await listTime(receivers, setup);
      drained.get(setup)!.push(drainedMs);
      times.get(setup)!.push(ms);
      busy.get(setup)!.push(busyMs);
      queued.get(setup)!.push(queuedMs);
      locked.get(setup)!.push(lockMs);
      deliveredBy.set(setup, delivered);
    }
  }
  const baseline = SETUPS[0]!;
  const base = median(times.get(baseline)!);
  const baseBusy = median(busy.get(baseline)!);
  for (const setup of SETUPS) {
    const ms = times.get(setup)!;
    const m = median(ms);
    const b = median(busy.get(setup)!);
    const vs = (x: number, of: number) =>
      setup === baseline ? "baseline" : `${(((x - of) / of) * 100).toFixed(1)}% vs 0 endpoints`;
    console.log(
      `${LISTS > 1 ? `${LISTS} ${ITEMS}-item lists at once` : `${ITEMS}-item list`}, ${setup.name}: median ${m.toFixed(0)} ms over ${ROUNDS} rounds (${ms.map((x) => x.toFixed(0)).join(", ")}); ${vs(m, base)}; ` +
        `the flock's thread on the CPU ${b.toFixed(0)} ms (${vs(b, baseBusy)}), waiting for a core ${median(queued.get(setup)!).toFixed(0)} ms, ` +
        `waiting for the writer lock ${median(locked.get(setup)!).toFixed(1)} ms; delivered by list.finished: ${deliveredBy.get(setup)}` +
        (setup.endpoints > 0 ? `, all ${median(drained.get(setup)!).toFixed(0)} ms after it` : ""),
    );
  }
  receivers.stop();
}

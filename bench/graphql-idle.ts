// Benchmark: the server memory one idle GraphQL subscription costs (issue 9: <= 24 KiB), over Yoga's
// SSE (POST /graphql, Accept: text/event-stream) and graphql-sse (POST /graphql/stream), next to an
// idle REST SSE connection (GET /api/events) measured the same way in the same run (heap + external
// + array buffers after a GC, divided by the connections). A child process holds the clients.
// Run: npm run bench:graphql-idle   (BENCH_IDLE connections per transport, default 1000; BENCH_RUNS)
import { fork, type ChildProcess } from "node:child_process";
import http from "node:http";
import { fileURLToPath } from "node:url";
import { startTestServer } from "../harness/server.ts";

const IDLE = Number(process.env.BENCH_IDLE ?? 1000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const SUBSCRIPTION = JSON.stringify({ query: `subscription { listEvents(listId: "idle") { seq name ts payload } }` });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Open {
  url: string;
  post: boolean;
  count: number;
}

if (process.argv[2] === "clients") {
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  const requests: http.ClientRequest[] = [];
  process.on("message", async (message: { open?: Open; close?: true }) => {
    if (message.open) {
      const { url, post, count } = message.open;
      let answered = 0;
      await new Promise<void>((resolve) => {
        const next = (i: number) => {
          if (i >= count) return;
          const req = http.request(url, {
            agent,
            method: post ? "POST" : "GET",
            headers: { accept: "text/event-stream", ...(post ? { "content-type": "application/json" } : {}) },
          });
          req.on("response", (res) => {
            res.on("data", () => {});
            if (++answered === count) resolve();
          });
          req.on("error", () => {
            if (++answered === count) resolve();
          });
          req.end(post ? SUBSCRIPTION : undefined);
          requests.push(req);
          if (i % 50 === 49) setTimeout(() => next(i + 1), 20);
          else next(i + 1);
        };
        next(0);
      });
      process.send!("opened");
    }
    if (message.close) {
      for (const req of requests) req.destroy();
      process.exit(0);
    }
  });
} else {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error("run with node --expose-gc (npm run bench:graphql-idle does)");
  const ask = (child: ChildProcess, message: unknown) =>
    new Promise<void>((resolve) => {
      child.once("message", () => resolve());
      child.send(message as object);
    });
  const settle = async () => {
    for (let i = 0; i < 3; i++) {
      gc();
      await sleep(200);
    }
  };
  const used = () => {
    const m = process.memoryUsage();
    return m.heapUsed + m.external + m.arrayBuffers;
  };
  const measure = async (open: (url: string) => Open): Promise<number> => {
    const server = await startTestServer();
    const child = fork(fileURLToPath(import.meta.url), ["clients"], { execArgv: ["--import", "tsx"] });
    try {
      await server.app.prisma.todoList.create({
        data: { id: "idle", requester: "bench", text: "-", tokenBudget: 1, status: "finished" },
      });
      // One connection first, so code paths and caches warm up outside the measurement.
      await ask(child, { open: { ...open(server.url), count: 1 } });
      await sleep(500);
      await settle();
      const before = used();
      await ask(child, { open: { ...open(server.url), count: IDLE } });
      await sleep(1000);
      await settle();
      return (used() - before) / IDLE;
    } finally {
      child.send({ close: true });
      await server.close();
    }
  };
  const transports: Array<[string, (url: string) => Open]> = [
    [
      "REST SSE GET /api/events (reference)",
      (url) => ({ url: `${url}/api/events?list_id=idle`, post: false, count: 0 }),
    ],
    ["GraphQL Yoga SSE /graphql", (url) => ({ url: `${url}/graphql`, post: true, count: 0 })],
    ["GraphQL graphql-sse /graphql/stream", (url) => ({ url: `${url}/graphql/stream`, post: true, count: 0 })],
  ];
  console.log(`memory per idle connection: ${IDLE} idle clients per transport, ${RUNS} runs`);
  const results = new Map<string, number[]>();
  for (let run = 1; run <= RUNS; run++) {
    const line: string[] = [];
    for (const [label, open] of transports) {
      const bytes = await measure(open);
      (results.get(label) ?? results.set(label, []).get(label)!).push(bytes);
      line.push(`${label} ${(bytes / 1024).toFixed(1)} KiB`);
    }
    console.log(`  run ${run}: ${line.join("; ")}`);
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  console.log(`median of ${RUNS}:`);
  for (const [label] of transports)
    console.log(
      `  ${label.padEnd(38)} ${(median(results.get(label)!) / 1024).toFixed(1).padStart(6)} KiB (GraphQL goal <= 24 KiB)`,
    );
}

// Benchmark: replaying a list of BENCH_EVENTS (10,000) stored events to one client (issue 9), over
// REST SSE (GET /api/events), GraphQL over Yoga's SSE (POST /graphql, Accept: text/event-stream)
// and over graphql-sse (POST /graphql/stream), next to a bare baseline measured in the same run: a
// node:http server that reads the same rows from the same SQLite file with better-sqlite3 and
// writes the same SSE frames. One node:http client counts frames for every contestant.
// Prints, per run, total ms and first-event ms each, REST / bare and GraphQL / REST; then the
// median of RUNS. Goals: REST within 1.2x of bare; GraphQL within 2x of REST, first event < 50 ms.
// Run: npm run bench:replay
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import Database from "better-sqlite3";
import { startTestServer } from "../test/helpers/server.ts";

const EVENTS = Number(process.env.BENCH_EVENTS ?? 10_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);

const server = await startTestServer();
const listId = "lstreplay";
await server.app.prisma.todoList.create({ data: { id: listId, requester: "bench", text: "-", tokenBudget: 1, status: "finished" } });
const crows = ["Hugin", "Munin", "Pepper", "Inky"];
await Promise.all(
  Array.from({ length: EVENTS }, (_, i) =>
    server.app.log.append(`list:${listId}`, i % 4 === 0 ? "crow.flying" : i % 4 === 1 ? "crow.landed" : "item.triaged", {
      list_id: listId,
      item_id: `${listId}-${(i % 50) + 1}`,
      crow: crows[i % crows.length],
      note: `event ${i}: a payload about the size the flock writes, with some words in it`,
      ts: new Date().toISOString(),
    }),
  ),
);

// The bare baseline: better-sqlite3 on the same file, read-only, one SELECT, frames written as read.
const file = path.join(server.dataDir, "crows.db");
const reader = new Database(file, { readonly: true, fileMustExist: true });
const select = reader.prepare(`SELECT "seq", "name", "payload" FROM "Event" WHERE "stream" = ? AND "seq" > ? ORDER BY "seq" LIMIT ?`);
const bare = http.createServer((_req, res) => {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-store" });
  let after = 0;
  for (;;) {
    const rows = select.all(`list:${listId}`, after, 1000) as Array<{ seq: number; name: string; payload: string }>;
    if (rows.length === 0) break;
    let chunk = "";
    for (const row of rows) chunk += `id: ${row.seq}\nevent: ${row.name}\ndata: ${row.payload}\n\n`;
    res.write(chunk);
    after = rows[rows.length - 1]!.seq;
  }
});
await new Promise<void>((resolve) => bare.listen(0, "127.0.0.1", resolve));
const bareUrl = `http://127.0.0.1:${(bare.address() as AddressInfo).port}/`;

const SUBSCRIPTION = `subscription($listId: ID!) { listEvents(listId: $listId, after: 0) { seq name ts payload } }`;

/** Opens the stream, counts SSE frames that carry data until `EVENTS` arrived; total and first-event ms. */
function replay(url: string, body?: string): Promise<{ totalMs: number; firstMs: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let firstMs = -1;
    let frames = 0;
    let carry = "";
    const request = http.request(url, {
      method: body ? "POST" : "GET",
      headers: { accept: "text/event-stream", ...(body ? { "content-type": "application/json" } : {}) },
    });
    request.on("response", (response) => {
      if (response.statusCode !== 200) reject(new Error(`${url}: ${response.statusCode}`));
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => {
        const text = carry + chunk;
        let at = text.indexOf("\ndata: {");
        while (at !== -1) {
          frames += 1;
          at = text.indexOf("\ndata: {", at + 8);
        }
        carry = text.slice(-7);
        if (frames > 0 && firstMs < 0) firstMs = performance.now() - t0;
        if (frames >= EVENTS) {
          resolve({ totalMs: performance.now() - t0, firstMs });
          request.destroy();
        }
      });
      response.on("error", () => {});
    });
    request.on("error", (error) => {
      if (frames < EVENTS) reject(error);
    });
    request.end(body);
  });
}

const contestants: Array<[string, () => Promise<{ totalMs: number; firstMs: number }>]> = [
  ["bare sqlite + node:http", () => replay(bareUrl)],
  ["REST GET /api/events", () => replay(`${server.url}/api/events?list_id=${listId}`)],
  ["GraphQL Yoga SSE /graphql", () => replay(`${server.url}/graphql`, JSON.stringify({ query: SUBSCRIPTION, variables: { listId } }))],
  ["GraphQL graphql-sse /graphql/stream", () => replay(`${server.url}/graphql/stream`, JSON.stringify({ query: SUBSCRIPTION, variables: { listId } }))],
];

try {
  console.log(`Replay of ${EVENTS} stored events to one client, ${RUNS} runs (each after a warm-up)`);
  for (const [, run] of contestants) await run();
  const results = new Map<string, Array<{ totalMs: number; firstMs: number }>>();
  const ratios = { restBare: [] as number[], yogaRest: [] as number[], sseRest: [] as number[] };
  for (let i = 1; i <= RUNS; i++) {
    const line: string[] = [];
    const runResults: Array<{ totalMs: number; firstMs: number }> = [];
    for (const [label, run] of contestants) {
      const result = await run();
      runResults.push(result);
      (results.get(label) ?? results.set(label, []).get(label)!).push(result);
      line.push(`${label} ${result.totalMs.toFixed(0)} ms (first ${result.firstMs.toFixed(1)} ms)`);
    }
    const [b, rest, yoga, sse] = runResults as [typeof runResults[0], typeof runResults[0], typeof runResults[0], typeof runResults[0]];
    ratios.restBare.push(rest.totalMs / b.totalMs);
    ratios.yogaRest.push(yoga.totalMs / rest.totalMs);
    ratios.sseRest.push(sse.totalMs / rest.totalMs);
    console.log(`  run ${i}: ${line.join("; ")}`);
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  console.log(`median of ${RUNS}:`);
  for (const [label] of contestants) {
    const rs = results.get(label)!;
    console.log(`  ${label.padEnd(38)} ${median(rs.map((r) => r.totalMs)).toFixed(0).padStart(6)} ms, first event ${median(rs.map((r) => r.firstMs)).toFixed(1)} ms`);
  }
  console.log(`  REST / bare (goal <= 1.2x)             ${median(ratios.restBare).toFixed(2)}x`);
  console.log(`  Yoga SSE / REST (goal <= 2x)           ${median(ratios.yogaRest).toFixed(2)}x`);
  console.log(`  graphql-sse / REST (goal <= 2x)        ${median(ratios.sseRest).toFixed(2)}x`);
} finally {
  bare.close();
  reader.close();
  await server.close();
}

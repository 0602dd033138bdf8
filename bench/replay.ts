// Benchmark: replaying a list of BENCH_EVENTS (10,000) stored events to one client (issue 9), over
// REST SSE (GET /api/events), GraphQL over Yoga's SSE (POST /graphql, Accept: text/event-stream)
// and over graphql-sse (POST /graphql/stream), next to a bare baseline measured in the same run: a
// node:http server that reads the same rows from the same SQLite file with better-sqlite3 and
// writes the same SSE frames. One node:http client counts frames for every contestant.
// A second baseline, "bare, same query", runs the page query REST runs (frames laid out by SQLite,
// src/storage/events/ readRendered) on the same bare server: REST / that is what crows's own
// stack costs. Fairness: every contestant's frames are checked byte-identical to bare's first (REST
// adds only its opening `retry:` block); each timed replay starts after a full GC (--expose-gc), so
// no contestant pays for the garbage of the one before it.
// Prints, per run, total ms and first-event ms each, REST / bare and GraphQL / REST; then the
// median of RUNS. Goals: REST within 1.2x of bare; GraphQL within 2x of REST, first event < 50 ms.
// Run: npm run bench:replay (node --expose-gc)
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import Database from "better-sqlite3";
import { startTestServer } from "../harness/server.ts";

const EVENTS = Number(process.env.BENCH_EVENTS ?? 10_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);

const server = await startTestServer();
const listId = "lstreplay";
await server.app.prisma.todoList.create({
  data: { id: listId, requester: "bench", text: "-", tokenBudget: 1, status: "finished" },
});
const crows = ["Hugin", "Munin", "Pepper", "Inky"];
await Promise.all(
  Array.from({ length: EVENTS }, (_, i) =>
    server.app.log.append(
      `list:${listId}`,
      i % 4 === 0 ? "crow.flying" : i % 4 === 1 ? "crow.landed" : "item.triaged",
      {
        list_id: listId,
        item_id: `${listId}-${(i % 50) + 1}`,
        crow: crows[i % crows.length],
        note: `event ${i}: a payload about the size the flock writes, with some words in it`,
        ts: new Date().toISOString(),
      },
    ),
  ),
);

// The bare baseline: better-sqlite3 on the same file, read-only, one SELECT, frames written as read.
const file = path.join(server.dataDir, "crows.db");
const reader = new Database(file, { readonly: true, fileMustExist: true });
const select = reader.prepare(
  `SELECT "seq", "name", "payload" FROM "Event" WHERE "stream" = ? AND "seq" > ? ORDER BY "seq" LIMIT ?`,
);
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

// The same bare server with REST's page query: one row per page, the frames joined by SQLite.
const selectPage = reader.prepare(
  `SELECT count(*) AS "count", COALESCE(MAX("seq"), 0) AS "lastSeq", ` +
    `CAST(group_concat('id: ' || "seq" || char(10) || 'event: ' || "name" || char(10) || 'data: ' || "payload" || char(10, 10), '' ORDER BY "seq") AS BLOB) AS "bytes" ` +
    `FROM (SELECT "seq", "name", "payload" FROM "Event" WHERE "stream" = ? AND "seq" > ? ORDER BY "seq" LIMIT ?)`,
);
const bareSameQuery = http.createServer((_req, res) => {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-store" });
  let after = 0;
  for (;;) {
    const page = selectPage.get(`list:${listId}`, after, 1000) as { count: number; lastSeq: number; bytes: Buffer };
    if (page.count === 0) break;
    res.write(page.bytes);
    after = page.lastSeq;
  }
});
await new Promise<void>((resolve) => bareSameQuery.listen(0, "127.0.0.1", resolve));
const bareSameQueryUrl = `http://127.0.0.1:${(bareSameQuery.address() as AddressInfo).port}/`;
const collectGarbage = (globalThis as { gc?: () => void }).gc ?? (() => {});

/** The whole body up to the last of `EVENTS` frames, for the same-bytes check. */
function body(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers: { accept: "text/event-stream" } });
    request.on("response", (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => {
        text += chunk;
        if (text.endsWith("\n\n") && text.includes(`\nid: ${EVENTS}\n`)) {
          resolve(text);
          request.destroy();
        }
      });
      response.on("error", () => {});
    });
    request.on("error", reject);
  });
}

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
  ["bare, same query as REST", () => replay(bareSameQueryUrl)],
  [
    "GraphQL Yoga SSE /graphql",
    () => replay(`${server.url}/graphql`, JSON.stringify({ query: SUBSCRIPTION, variables: { listId } })),
  ],
  [
    "GraphQL graphql-sse /graphql/stream",
    () => replay(`${server.url}/graphql/stream`, JSON.stringify({ query: SUBSCRIPTION, variables: { listId } })),
  ],
];

try {
  console.log(`Replay of ${EVENTS} stored events to one client, ${RUNS} runs (each after a warm-up)`);
  const bareBody = await body(bareUrl);
  const restBody = await body(`${server.url}/api/events?list_id=${listId}`);
  if (restBody !== `retry: 2000\n\n${bareBody}`)
    throw new Error("REST's frames differ from bare's: the comparison would not be fair");
  if ((await body(bareSameQueryUrl)) !== bareBody)
    throw new Error("the same-query baseline's frames differ from bare's");
  for (const [, run] of contestants) await run();
  const results = new Map<string, Array<{ totalMs: number; firstMs: number }>>();
  const ratios = {
    restBare: [] as number[],
    restSame: [] as number[],
    yogaRest: [] as number[],
    sseRest: [] as number[],
  };
  for (let i = 1; i <= RUNS; i++) {
    const line: string[] = [];
    const runResults: Array<{ totalMs: number; firstMs: number }> = [];
    for (const [label, run] of contestants) {
      collectGarbage();
      const result = await run();
      runResults.push(result);
      (results.get(label) ?? results.set(label, []).get(label)!).push(result);
      line.push(`${label} ${result.totalMs.toFixed(0)} ms (first ${result.firstMs.toFixed(1)} ms)`);
    }
    const [b, rest, same, yoga, sse] = runResults as [
      (typeof runResults)[0],
      (typeof runResults)[0],
      (typeof runResults)[0],
      (typeof runResults)[0],
      (typeof runResults)[0],
    ];
    ratios.restBare.push(rest.totalMs / b.totalMs);
    ratios.restSame.push(rest.totalMs / same.totalMs);
    ratios.yogaRest.push(yoga.totalMs / rest.totalMs);
    ratios.sseRest.push(sse.totalMs / rest.totalMs);
    console.log(`  run ${i}: ${line.join("; ")}`);
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  console.log(`median of ${RUNS}:`);
  for (const [label] of contestants) {
    const rs = results.get(label)!;
    console.log(
      `  ${label.padEnd(38)} ${median(rs.map((r) => r.totalMs))
        .toFixed(0)
        .padStart(6)} ms, first event ${median(rs.map((r) => r.firstMs)).toFixed(1)} ms`,
    );
  }
  console.log(`  REST / bare (goal <= 1.2x)             ${median(ratios.restBare).toFixed(2)}x`);
  console.log(`  REST / bare with the same query        ${median(ratios.restSame).toFixed(2)}x`);
  console.log(`  Yoga SSE / REST (goal <= 2x)           ${median(ratios.yogaRest).toFixed(2)}x`);
  console.log(`  graphql-sse / REST (goal <= 2x)        ${median(ratios.sseRest).toFixed(2)}x`);
} finally {
  bare.close();
  bareSameQuery.close();
  reader.close();
  await server.close();
}

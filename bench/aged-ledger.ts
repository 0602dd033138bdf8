// Benchmark: the ledger's reads on a database aged to ~1,000,000 events against a fresh one, in the
// same run (the bounded-answers rule, docs/flock.md §3: no answer grows with the database's age).
// Both databases are written by direct SQL inserts (bench/aged-database.ts), not by running the
// flock; the fresh one has the same holders and shapes with a short log. Both servers are real, on ephemeral loopback ports, with
// GraphQL's read cache off (every read runs afresh). Prints each request's median time on both and
// aged/fresh (goal: each within 1.5x), then exports a tenth of the aged log and all of it
// (BENCH_EXPORT=0 skips it), printing peak RSS and live heap during each next to the idle figures.
// Run: npm run bench:aged-ledger   (BENCH_EVENTS=1000000 BENCH_ROUNDS=15 BENCH_EXPORT=1 BENCH_KEEP=0)
// Sizes other than events scale with BENCH_EVENTS from the issue's measured database (830,000
// events: 4,800 lists, 97,000 items, 193,000 trust-history rows, 24,000 messages in one nest).
import { mkdtempSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { loadConfig } from "../src/base/config.ts";
import { createApp, type App } from "../src/app.ts";
import { startServer, type RunningServer } from "../src/server/http.ts";
import { NO_VERSION } from "../src/storage/read-version.ts";
import { MAX_PAGE } from "../src/base/util/clamp.ts";
import { age, ITEMS_PER_LIST, sizesFor } from "./aged-database.ts";

const EVENTS = Number(process.env.BENCH_EVENTS ?? 1_000_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const EXPORT = process.env.BENCH_EXPORT !== "0";
/** Keep the two database folders (printed) for EXPLAIN QUERY PLAN and the like. */
const KEEP = process.env.BENCH_KEEP === "1";
const quiet = () => {};

interface Served {
  app: App;
  server: RunningServer;
  dir: string;
}

async function serve(dir: string): Promise<Served> {
  const app = await createApp(loadConfig({ CROWS_PORT: "0", CROWS_DATA_DIR: dir }), { logLine: quiet });
  app.database.readVersion = NO_VERSION; // no read cache: each read is measured, not its cached copy
  return { app, server: await startServer(app), dir };
}

async function close(s: Served): Promise<void> {
  await s.server.close();
  await s.app.close();
}

async function timed(fn: () => Promise<void>): Promise<number> {
  const t = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t) / 1e6;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function get(s: Served, p: string): Promise<number> {
  const res = await fetch(s.server.url + p);
  const body = await res.arrayBuffer();
  if (!res.ok) throw new Error(`${p}: ${res.status} ${Buffer.from(body).toString("utf8").slice(0, 200)}`);
  return body.byteLength;
}

async function gql(s: Served, query: string): Promise<number> {
  const res = await fetch(s.server.url + "/graphql", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ query }),
  });
  const text = await res.text();
  if (!res.ok || text.includes('"errors"')) throw new Error(`graphql: ${res.status} ${text.slice(0, 300)}`);
  return text.length;
}

let posted = 0;
async function postList(s: Served): Promise<number> {
  const res = await fetch(s.server.url + "/api/lists", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ text: "buy milk\nwrite a haiku about crows", requester: `bench-poster-${posted++}` }),
  });
  const text = await res.text();
  if (res.status !== 202) throw new Error(`POST /api/lists: ${res.status} ${text}`);
  return text.length;
}

interface Case {
  label: string;
  run(s: Served, listId: string): Promise<number>;
}

const CASES: Case[] = [
  { label: "GET /api/trust", run: (s) => get(s, "/api/trust") },
  { label: "GET /api/nests/todo/messages?limit=50", run: (s) => get(s, "/api/nests/todo/messages?limit=50") },
  { label: "GET /api/trust/history?limit=100", run: (s) => get(s, `/api/trust/history?limit=${MAX_PAGE}`) },
  {
    label: "listsConnection(first: 20)",
    run: (s) =>
      gql(
        s,
        "{ listsConnection(first: 20) { edges { node { id status requester } } pageInfo { hasNextPage endCursor } } }",
      ),
  },
  {
    label: "listsConnection(first: 20, requester)",
    run: (s) =>
      gql(
        s,
        '{ listsConnection(first: 20, requester: "requester-7", status: finished) { edges { node { id } } pageInfo { endCursor } } }',
      ),
  },
  { label: "listsConnection totalCount", run: (s) => gql(s, "{ listsConnection(first: 1) { totalCount } }") },
  {
    label: "list.itemsConnection(first: 20)",
    run: (s, l) =>
      gql(s, `{ list(id: "${l}") { itemsConnection(first: 20) { edges { node { id stage mode } } totalCount } } }`),
  },
  {
    label: "eventsConnection(first: 20)",
    run: (s, l) =>
      gql(s, `{ eventsConnection(listId: "${l}", first: 20) { edges { node { seq name payload } } totalCount } }`),
  },
  {
    label: "messagesConnection(last: 50)",
    run: (s) =>
      gql(
        s,
        '{ messagesConnection(nestId: "todo", last: 50) { edges { node { msgId kind text } } pageInfo { startCursor } totalCount } }',
      ),
  },
  {
    label: "trustHistory(first: 20)",
    run: (s) => gql(s, "{ trustHistory(first: 20) { edges { node { id verdict } } totalCount } }"),
  },
  {
    label: "trustHistory(last: 20, holder)",
    run: (s) => gql(s, '{ trustHistory(last: 20, holder: "Hugin") { edges { node { id verdict } } } }'),
  },
  {
    label: "TrustRecord.historyConnection(last: 20)",
    run: (s) => gql(s, "{ trust { holder historyConnection(last: 20) { edges { node { id } } totalCount } } }"),
  },
  {
    label: "approvalsConnection(first: 20, pending)",
    run: (s) => gql(s, "{ approvalsConnection(first: 20, status: pending) { edges { node { id } } totalCount } }"),
  },
  {
    label: "approvalsConnection(first: 20)",
    run: (s) => gql(s, "{ approvalsConnection(first: 20) { edges { node { id itemId } } } }"),
  },
  {
    label: "approvalsConnection totalCount (all)",
    run: (s) => gql(s, "{ approvalsConnection(first: 1) { totalCount } }"),
  },
  { label: "POST /api/lists", run: (s) => postList(s) },
];

const freshDir = mkdtempSync(path.join(os.tmpdir(), "crows-bench-fresh-"));
const agedDir = mkdtempSync(path.join(os.tmpdir(), "crows-bench-aged-"));
try {
  // Each folder is migrated by starting an app on it once, then filled: the aged one to EVENTS, the
  // fresh one with the least that fills every answer (the same holders and task types, a short log).
  const built: Record<string, { listIds: string[]; events: number }> = {};
  for (const [name, dir, sizes] of [
    ["fresh", freshDir, sizesFor(0)],
    ["aged", agedDir, sizesFor(EVENTS)],
  ] as const) {
    await (await createApp(loadConfig({ CROWS_PORT: "0", CROWS_DATA_DIR: dir }), { logLine: quiet })).close();
    const t0 = Date.now();
    built[name] = age(path.join(dir, "crows.db"), sizes);
    console.log(
      `${name} database: ${built[name]!.events.toLocaleString("en")} events, ${sizes.lists} lists, ${sizes.lists * ITEMS_PER_LIST} items, ${sizes.trustEntries} trust entries, ` +
        `${sizes.messages} nest messages; built in ${((Date.now() - t0) / 1000).toFixed(1)} s (${(statSync(path.join(dir, "crows.db")).size / 1e6).toFixed(0)} MB)`,
    );
  }

  const fresh = await serve(freshDir);
  const aged = await serve(agedDir);
  const middle = (ids: string[]) => ids[Math.floor(ids.length / 2)]!;
  const freshList = middle(built.fresh!.listIds);
  const agedList = middle(built.aged!.listIds);

  // Medians, and the ratio of the fastest rounds too: on a shared machine the best round is the
  // request's own cost with the least of everyone else's load in it.
  console.log(
    `\n${"request".padEnd(44)} ${"fresh ms".padStart(9)} ${"aged ms".padStart(9)} ${"aged/fresh".padStart(10)} ${"(fastest)".padStart(9)} ${"bytes fresh/aged".padStart(18)}`,
  );
  for (const c of CASES) {
    const f: number[] = [];
    const a: number[] = [];
    let fb = 0;
    let ab = 0;
    for (let warm = 0; warm < 2; warm++) {
      await c.run(fresh, freshList);
      await c.run(aged, agedList);
    }
    // Alternating, so a load spike on the shared machine hits both sides alike.
    for (let r = 0; r < ROUNDS; r++) {
      f.push(await timed(async () => void (fb = await c.run(fresh, freshList))));
      a.push(await timed(async () => void (ab = await c.run(aged, agedList))));
    }
    const ratio = median(a) / median(f);
    const fastest = Math.min(...a) / Math.min(...f);
    console.log(
      `${c.label.padEnd(44)} ${median(f).toFixed(2).padStart(9)} ${median(a).toFixed(2).padStart(9)} ${`${ratio.toFixed(2)}x`.padStart(10)} ${`${fastest.toFixed(2)}x`.padStart(9)} ${`${fb}/${ab}`.padStart(18)}${ratio > 1.5 ? "  over 1.5x" : ""}`,
    );
  }
  await close(fresh);

  if (EXPORT) {
    // Let the lists posted above finish, so the export measures the export and not the flock.
    await new Promise((r) => setTimeout(r, 2000));
    global.gc?.();
    const idle = process.memoryUsage();
    console.log(
      `\nserver idle: RSS ${(idle.rss / 1e6).toFixed(0)} MB, live heap ${(idle.heapUsed / 1e6).toFixed(0)} MB (the bench's client runs in the same process)`,
    );
    const lastId = built.aged!.events;
    // A tenth of the log, then all of it: memory that stays flat is the same for both.
    for (const [label, after] of [
      ["the newest tenth", Math.floor(lastId * 0.9)],
      ["the whole log", 0],
    ] as const) {
      global.gc?.();
      let peakRss = process.memoryUsage().rss;
      let peakLive = 0;
      // RSS counts garbage not yet collected; the live heap after a forced collection does not.
      const sampler = setInterval(() => {
        peakRss = Math.max(peakRss, process.memoryUsage().rss);
        global.gc?.();
        peakLive = Math.max(peakLive, process.memoryUsage().heapUsed);
      }, 250);
      let lines = 0;
      let bytes = 0;
      const ms = await timed(async () => {
        const res = await fetch(`${aged.server.url}/api/export/events?after=${after}`);
        const reader = res.body!.getReader();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          bytes += value.byteLength;
          for (const b of value) if (b === 10) lines++;
        }
      });
      clearInterval(sampler);
      console.log(
        `export of ${label}: ${lines.toLocaleString("en")} events, ${(bytes / 1e6).toFixed(0)} MB of NDJSON in ${(ms / 1000).toFixed(1)} s; ` +
          `peak RSS ${(peakRss / 1e6).toFixed(0)} MB (idle ${(idle.rss / 1e6).toFixed(0)}), peak live heap ${(peakLive / 1e6).toFixed(0)} MB (idle ${(idle.heapUsed / 1e6).toFixed(0)})`,
      );
    }
  }
  await close(aged);
} finally {
  if (KEEP) console.log(`kept: ${freshDir} ${agedDir}`);
  else for (const dir of [freshDir, agedDir]) rmSync(dir, { recursive: true, force: true });
}

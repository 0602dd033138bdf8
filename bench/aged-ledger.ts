// Benchmark: the ledger's reads on a database aged to ~1,000,000 events against a fresh one, in the
// same run (the bounded-answers rule, FLOCK.md section 3: no answer grows with the database's age).
// The aged database is written by direct SQL inserts of rows shaped like the flock's own (lists,
// items, approvals, trust records and history, one long nest conversation, and every list's and
// nest's events), not by running the flock. Both servers are real, on ephemeral loopback ports, with
// GraphQL's read cache off (every read runs afresh). Prints each request's median time on both and
// aged/fresh (goal: each within 1.5x), then exports the aged log (BENCH_EXPORT=0 skips it) printing
// the server's peak RSS during the export next to its idle RSS.
// Run: npm run bench:aged-ledger   (BENCH_EVENTS=1000000 BENCH_ROUNDS=15 BENCH_EXPORT=1 BENCH_KEEP=0)
// Sizes other than events scale with BENCH_EVENTS from the issue's measured database (830,000
// events: 4,800 lists, 97,000 items, 193,000 trust-history rows, 24,000 messages in one nest).
import { mkdtempSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { loadConfig } from "../src/base/config.ts";
import { createApp, type App } from "../src/app.ts";
import { startServer, type RunningServer } from "../src/server/http.ts";
import { NO_VERSION } from "../src/storage/read-version.ts";
import { TASK_TYPES } from "../src/base/roster.ts";
import { MAX_PAGE } from "../src/base/util/clamp.ts";

const EVENTS = Number(process.env.BENCH_EVENTS ?? 1_000_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const EXPORT = process.env.BENCH_EXPORT !== "0";
/** Keep the two database folders (printed) for EXPLAIN QUERY PLAN and the like. */
const KEEP = process.env.BENCH_KEEP === "1";
const ITEMS_PER_LIST = 20; // ~97,000 items at the issue's size
const HOLDERS = ["flock", "Sentry", "Hugin", "Munin", "Pepper", "Inky", "Sable", "Rook", "Quill", "Ash"];
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

interface Sizes {
  events: number;
  lists: number;
  messages: number;
  trustEntries: number;
}

/**
 * The issue's database scaled to `events`; never below what makes every bounded answer full (each
 * record 20+ entries, 50+ messages, 20+ lists), so the fresh database answers the same shapes as
 * the aged one and only the age differs.
 */
function sizesFor(events: number): Sizes {
  const scale = events / 830_000;
  const lists = Math.max(25, Math.round(4_800 * scale));
  return {
    events: Math.max(events, lists * 40 + 60),
    lists,
    messages: Math.max(60, Math.round(24_000 * scale)),
    trustEntries: Math.max(HOLDERS.length * TASK_TYPES.length * 25, Math.round(193_000 * scale)),
  };
}

/** Writes the rows into a migrated database file, in one transaction per table. */
function age(file: string, { events: EVENTS, lists: LISTS, messages: NEST_MESSAGES, trustEntries: TRUST_ENTRIES }: Sizes): { listIds: string[]; events: number } {
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = OFF");
  const started = Date.UTC(2026, 0, 1);
  const at = (ms: number) => new Date(ms).toISOString().replace("Z", "+00:00");
  const listIds: string[] = [];
  let events = 0;
  const insertEvent = db.prepare(`INSERT INTO "Event" ("stream", "seq", "name", "payload", "ts") VALUES (?, ?, ?, ?, ?)`);
  const insertList = db.prepare(`INSERT INTO "TodoList" ("id", "requester", "nestId", "text", "status", "tokenBudget", "tokensUsed", "createdAt", "finishedAt") VALUES (?, ?, 'todo', ?, 'finished', 20000, ?, ?, ?)`);
  const insertItem = db.prepare(`INSERT INTO "Item" ("id", "listId", "n", "text", "stage", "mode", "taskType", "subtasks", "reason", "answer", "crows", "updatedAt") VALUES (?, ?, ?, ?, 'done', ?, ?, '[]', ?, ?, ?, ?)`);
  const insertApproval = db.prepare(`INSERT INTO "Approval" ("itemId", "target", "status", "deadline", "createdAt", "decidedAt") VALUES (?, ?, ?, ?, ?, ?)`);
  // Events per list so the whole log reaches EVENTS with the nest's messages.
  const perList = Math.max(4, Math.floor((EVENTS - NEST_MESSAGES) / LISTS));
  db.transaction(() => {
    for (let l = 0; l < LISTS; l++) {
      const id = `lstaged${l.toString(16).padStart(6, "0")}`;
      listIds.push(id);
      const t0 = started + l * 60_000;
      const requester = `requester-${l % 40}`;
      insertList.run(id, requester, Array.from({ length: ITEMS_PER_LIST }, (_, i) => `task ${i + 1} of list ${l}`).join("\n"), 1200 + (l % 700), at(t0), at(t0 + 50_000));
      for (let n = 1; n <= ITEMS_PER_LIST; n++) {
        const itemId = `${id}-${n}`;
        const taskType = TASK_TYPES[(l + n) % TASK_TYPES.length]!;
        insertItem.run(itemId, id, n, `task ${n} of list ${l}`, n % 7 === 0 ? "split" : "solo", taskType, "[offline] One action, one crow.", `An answer to task ${n}, a sentence or two long, as the offline voice writes them.`, JSON.stringify([HOLDERS[2 + (n % 8)]]), at(t0 + n * 1000));
        insertApproval.run(itemId, "triage", n % 5 === 0 ? "auto" : "approved", at(t0 + 600_000), at(t0 + n * 900), at(t0 + n * 950));
        insertApproval.run(itemId, "output", n % 9 === 0 ? "rejected" : "approved", at(t0 + 600_000), at(t0 + n * 1000), at(t0 + n * 1010));
      }
      const stream = `list:${id}`;
      for (let seq = 1; seq <= perList; seq++) {
        const n = ((seq - 1) % ITEMS_PER_LIST) + 1;
        const name = seq === 1 ? "list.started" : seq === perList ? "list.finished" : ["item.triaged", "crow.flying", "item.answered", "verdict"][seq % 4]!;
        const payload =
          name === "verdict"
            ? { list_id: id, item_id: `${id}-${n}`, target: seq % 8 < 4 ? "triage" : "output", verdict: "approved", ts: at(t0 + seq * 100) }
            : { list_id: id, item_id: `${id}-${n}`, crow: HOLDERS[2 + (seq % 8)], note: `event ${seq} of list ${l}, with the kind of text the flock's payloads carry`, ts: at(t0 + seq * 100) };
        insertEvent.run(stream, seq, name, JSON.stringify(payload), at(t0 + seq * 100));
        events++;
      }
    }
  })();
  const insertMessage = db.prepare(`INSERT INTO "Message" ("id", "nestId", "n", "kind", "author", "text", "to", "refersTo", "taggedBy", "createdAt") VALUES (?, 'todo', ?, ?, ?, ?, ?, ?, ?, ?)`);
  db.transaction(() => {
    for (let n = 1; n <= NEST_MESSAGES; n++) {
      const kind = ["say", "request", "claim", "deliver", "say"][n % 5]!;
      const author = n % 5 === 1 ? "owner" : HOLDERS[2 + (n % 8)]!;
      const text = `message ${n}: a line of nest talk, about as long as the crows' usually are`;
      const to = kind === "deliver" ? "owner" : "";
      const refersTo = kind === "claim" || kind === "deliver" ? `todo-${n - 1}` : "";
      insertMessage.run(`todo-${n}`, n, kind, author, text, to, refersTo, "jev", at(started + n * 5000));
      const payload = { nest_id: "todo", ts: at(started + n * 5000), msg_id: `todo-${n}`, kind, author, text, to, refers_to: refersTo, tagged_by: "jev", mode: "", mode_tagged_by: "", invited: 0, approval_phrase: "", resolved: "" };
      insertEvent.run("nest:todo", n, "nest.message", JSON.stringify(payload), at(started + n * 5000));
      events++;
    }
  })();
  const insertEntry = db.prepare(`INSERT INTO "TrustEntry" ("holder", "taskType", "verdict", "subject", "from", "to", "streak", "at") VALUES (?, ?, ?, ?, ?, ?, ?, ?)`);
  const insertTrust = db.prepare(`INSERT INTO "Trust" ("holder", "taskType", "level", "streak", "approvals", "rejections", "autos", "updatedAt") VALUES (?, ?, ?, 0, ?, ?, ?, ?)`);
  db.transaction(() => {
    const counts = new Map<string, [number, number, number]>();
    for (let i = 0; i < TRUST_ENTRIES; i++) {
      const holder = HOLDERS[i % HOLDERS.length]!;
      const taskType = TASK_TYPES[Math.floor(i / HOLDERS.length) % TASK_TYPES.length]!;
      const verdict = ["approved", "approved", "approved", "rejected", "auto", "timeout"][i % 6]!;
      const key = `${holder}\u0000${taskType}`;
      const c = counts.get(key) ?? [0, 0, 0];
      if (verdict === "approved") c[0]++;
      else if (verdict === "auto") c[2]++;
      else c[1]++;
      counts.set(key, c);
      insertEntry.run(holder, taskType, verdict, `lstaged${(i % LISTS).toString(16).padStart(6, "0")}-${(i % ITEMS_PER_LIST) + 1}`, 1, 1, 0, at(started + i * 200));
    }
    for (const [key, [approvals, rejections, autos]] of counts) {
      const [holder, taskType] = key.split("\u0000");
      insertTrust.run(holder, taskType, 1, approvals, rejections, autos, at(Date.now()));
    }
  })();
  db.pragma("wal_checkpoint(TRUNCATE)");
  db.exec("ANALYZE");
  db.close();
  return { listIds, events };
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
  const res = await fetch(s.server.url + "/graphql", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query }) });
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
  { label: "listsConnection(first: 20)", run: (s) => gql(s, "{ listsConnection(first: 20) { edges { node { id status requester } } pageInfo { hasNextPage endCursor } } }") },
  { label: "listsConnection(first: 20, requester)", run: (s) => gql(s, '{ listsConnection(first: 20, requester: "requester-7", status: finished) { edges { node { id } } pageInfo { endCursor } } }') },
  { label: "listsConnection totalCount", run: (s) => gql(s, "{ listsConnection(first: 1) { totalCount } }") },
  { label: "list.itemsConnection(first: 20)", run: (s, l) => gql(s, `{ list(id: "${l}") { itemsConnection(first: 20) { edges { node { id stage mode } } totalCount } } }`) },
  { label: "eventsConnection(first: 20)", run: (s, l) => gql(s, `{ eventsConnection(listId: "${l}", first: 20) { edges { node { seq name payload } } totalCount } }`) },
  { label: "messagesConnection(last: 50)", run: (s) => gql(s, '{ messagesConnection(nestId: "todo", last: 50) { edges { node { msgId kind text } } pageInfo { startCursor } totalCount } }') },
  { label: "trustHistory(first: 20)", run: (s) => gql(s, "{ trustHistory(first: 20) { edges { node { id verdict } } totalCount } }") },
  { label: "trustHistory(last: 20, holder)", run: (s) => gql(s, '{ trustHistory(last: 20, holder: "Hugin") { edges { node { id verdict } } } }') },
  { label: "TrustRecord.historyConnection(last: 20)", run: (s) => gql(s, "{ trust { holder historyConnection(last: 20) { edges { node { id } } totalCount } } }") },
  { label: "approvalsConnection(first: 20, pending)", run: (s) => gql(s, "{ approvalsConnection(first: 20, status: pending) { edges { node { id } } totalCount } }") },
  { label: "approvalsConnection(first: 20)", run: (s) => gql(s, "{ approvalsConnection(first: 20) { edges { node { id itemId } } } }") },
  { label: "approvalsConnection totalCount (all)", run: (s) => gql(s, "{ approvalsConnection(first: 1) { totalCount } }") },
  { label: "POST /api/lists", run: (s) => postList(s) },
];

const freshDir = mkdtempSync(path.join(os.tmpdir(), "crows-bench-fresh-"));
const agedDir = mkdtempSync(path.join(os.tmpdir(), "crows-bench-aged-"));
try {
  // Each folder is migrated by starting an app on it once, then filled: the aged one to EVENTS, the
  // fresh one with the least that fills every answer (the same holders and task types, a short log).
  const built: Record<string, { listIds: string[]; events: number }> = {};
  for (const [name, dir, sizes] of [["fresh", freshDir, sizesFor(0)], ["aged", agedDir, sizesFor(EVENTS)]] as const) {
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
  console.log(`\n${"request".padEnd(44)} ${"fresh ms".padStart(9)} ${"aged ms".padStart(9)} ${"aged/fresh".padStart(10)} ${"(fastest)".padStart(9)} ${"bytes fresh/aged".padStart(18)}`);
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
    console.log(`\nserver idle: RSS ${(idle.rss / 1e6).toFixed(0)} MB, live heap ${(idle.heapUsed / 1e6).toFixed(0)} MB (the bench's client runs in the same process)`);
    const lastId = built.aged!.events;
    // A tenth of the log, then all of it: memory that stays flat is the same for both.
    for (const [label, after] of [["the newest tenth", Math.floor(lastId * 0.9)], ["the whole log", 0]] as const) {
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

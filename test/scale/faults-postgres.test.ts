// PostgreSQL faults under two real server processes on a private cluster (helpers/private-pg.ts;
// the shared test services are never restarted): a fast restart ends every connection and neither
// instance exits; a pause (SIGSTOP of the postmaster and its backends) gets bounded 503s with
// Retry-After instead of hangs, and a submit the client gave up on during it never runs later.
// After each, a fresh read of the log holds every acknowledged list exactly once, finished.
import { test } from "uvu";
import * as assert from "uvu/assert";
import pg from "pg";
import { startServerProcess, type ServerProcess } from "../helpers/process.ts";
import { baseEnv, tempDataDir, waitFor, removeDir } from "../helpers/crows-cli.ts";
import { privatePg } from "../helpers/private-pg.ts";

const cluster = await privatePg("faults-postgres");

const CONNECT_MS = 1500;
const STATEMENT_MS = 2500;
/** The longest a request may wait with the database stalled: connect + client read bound, with slack for a loaded machine. */
const BOUND_MS = CONNECT_MS + STATEMENT_MS + 2000 + 6000;

interface Answer {
  status: number;
  body: any;
  retryAfter: string | null;
  ms: number;
}

let n = 0;
async function submit(url: string, requester: string, timeoutMs = 60_000): Promise<Answer> {
  n++;
  const started = Date.now();
  const response = await fetch(`${url}/api/lists`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ text: `sweep the porch ${n}\nmend the fence ${n}`, requester }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await response.text();
  return {
    status: response.status,
    body: text ? JSON.parse(text) : undefined,
    retryAfter: response.headers.get("retry-after"),
    ms: Date.now() - started,
  };
}

async function lists(
  url: string,
): Promise<Array<{ id: string; requester: string; started: number; finished: number }>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ payload: string; name: string }>(
      `SELECT name, payload FROM "Event" WHERE name IN ('list.started', 'list.finished') ORDER BY id`,
    );
    const byId = new Map<string, { id: string; requester: string; started: number; finished: number }>();
    for (const row of rows) {
      const payload = JSON.parse(row.payload) as { list_id: string; requester?: string };
      const entry = byId.get(payload.list_id) ?? { id: payload.list_id, requester: "", started: 0, finished: 0 };
      if (row.name === "list.started") {
        entry.started++;
        entry.requester = payload.requester ?? "";
      } else entry.finished++;
      byId.set(payload.list_id, entry);
    }
    return [...byId.values()];
  } finally {
    await client.end();
  }
}

async function lastEvents(url: string, ids: string[]): Promise<Record<string, string[]>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const out: Record<string, string[]> = {};
    for (const id of ids) {
      const { rows } = await client.query<{ name: string; payload: string }>(
        `SELECT name, payload FROM "Event" WHERE payload LIKE $1 ORDER BY id`,
        [`%${id}%`],
      );
      const list = await client.query(`SELECT status, "ownerId", "leaseUntil" FROM "TodoList" WHERE id = $1`, [id]);
      const items = await client.query(`SELECT id, stage FROM "Item" WHERE "listId" = $1`, [id]);
      const approvals = await client.query(
        `SELECT "itemId", target, status, deadline FROM "Approval" WHERE "itemId" LIKE $1`,
        [`${id}%`],
      );
      out[id] = [
        ...rows.map((r) => r.name),
        JSON.stringify(list.rows),
        JSON.stringify(items.rows),
        JSON.stringify(approvals.rows),
      ];
    }
    return out;
  } finally {
    await client.end();
  }
}

async function freshDb(adminUrl: string, name: string): Promise<string> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function twoInstances(
  dbUrl: string,
): Promise<{ servers: Array<ServerProcess & { url: string }>; dirs: string[] }> {
  const dirs = [tempDataDir(), tempDataDir()];
  const extra: Record<string, string> = {
    DATABASE_URL: dbUrl,
    CROWS_PG_CONNECT_TIMEOUT_MS: String(CONNECT_MS),
    CROWS_PG_STATEMENT_TIMEOUT_MS: String(STATEMENT_MS),
    CROWS_LEASE_MS: "3000",
    CROWS_APPROVAL_WINDOW_MS: "1500",
  };
  if (process.env.CROWS_TEST_REDIS_URL) extra.REDIS_URL = process.env.CROWS_TEST_REDIS_URL;
  const servers = [];
  for (const dir of dirs) servers.push(await startServerProcess(baseEnv(dir, extra)));
  return { servers, dirs };
}

async function stopAll(run: { servers: Array<ServerProcess & { url: string }>; dirs: string[] }): Promise<void> {
  for (const s of run.servers) if (s.child.exitCode === null) s.child.kill("SIGKILL");
  await Promise.all(run.servers.map((s) => s.exited));
  run.dirs.forEach(removeDir);
}

/** Every acknowledged list stored once and finished; anything else stored came from a request that did not get a 202. */
async function checkLog(dbUrl: string, acked: Set<string>, unanswered: Set<string>): Promise<void> {
  const finished = await waitFor(
    "every acknowledged list finished",
    async () => {
      const all = await lists(dbUrl);
      return [...acked].every((id) => all.find((l) => l.id === id)?.finished === 1) ? all : undefined;
    },
    60_000,
  ).catch(async (error: Error) => {
    const all = await lists(dbUrl);
    const open = [...acked].filter((id) => all.find((l) => l.id === id)?.finished !== 1);
    throw new Error(
      `${error.message}: ${open.length} of ${acked.size} not finished: ${JSON.stringify(await lastEvents(dbUrl, open.slice(0, 3)))}`,
    );
  });
  for (const list of finished) {
    assert.is(list.started, 1, `list ${list.id} started once`);
    if (!acked.has(list.id))
      assert.ok(
        unanswered.has(list.requester),
        `list ${list.id} of ${list.requester} was stored without a 202; only a request that got no answer may do that`,
      );
  }
}

if (cluster) {
  test.after(() => cluster.stop());

  test("a fast PostgreSQL restart under two instances: neither exits, requests get 202 or 503 + Retry-After, nothing acknowledged lost or doubled", async () => {
    const dbUrl = await freshDb(cluster.url, "restart_fault");
    const run = await twoInstances(dbUrl);
    const acked = new Set<string>();
    const unanswered = new Set<string>();
    try {
      for (const [i, s] of run.servers.entries()) {
        for (let k = 0; k < 3; k++) {
          const answer = await submit(s.url, `restart-before-${i}-${k}`);
          assert.is(answer.status, 202, JSON.stringify(answer.body));
          acked.add(answer.body.list_id);
        }
      }
      for (let round = 0; round < 2; round++) {
        cluster.restart();
        for (const [i, s] of run.servers.entries()) {
          // The first request after a restart may meet a connection the server ended: a 503, never a crash.
          for (let k = 0; k < 4; k++) {
            const requester = `restart-${round}-${i}-${k}`;
            const answer = await submit(s.url, requester);
            assert.ok(
              answer.status === 202 || answer.status === 503,
              `202 or 503, got ${answer.status} ${JSON.stringify(answer.body)}`,
            );
            if (answer.status === 202) acked.add(answer.body.list_id);
            else {
              unanswered.add(requester);
              assert.ok(Number(answer.retryAfter) > 0);
              assert.match(answer.body.message, /^Storage is failing/);
            }
          }
          const after = await waitFor(`instance ${i} accepts again`, async () => {
            const answer = await submit(s.url, `restart-after-${round}-${i}-${n}`);
            return answer.status === 202 ? answer : undefined;
          });
          acked.add(after.body.list_id);
        }
        for (const s of run.servers) assert.is(s.child.exitCode, null, `an instance exited: ${s.output().stderr}`);
      }
      await checkLog(dbUrl, acked, unanswered);
      for (const s of run.servers) assert.is(s.child.exitCode, null, `an instance exited: ${s.output().stderr}`);
    } finally {
      await stopAll(run);
    }
  });

  test("a paused PostgreSQL: bounded 503s with Retry-After, /readyz 503, a submit given up on never runs later, all resumes", async () => {
    const dbUrl = await freshDb(cluster.url, "pause_fault");
    const run = await twoInstances(dbUrl);
    const acked = new Set<string>();
    const unanswered = new Set<string>();
    try {
      for (const [i, s] of run.servers.entries()) {
        const answer = await submit(s.url, `pause-before-${i}`);
        assert.is(answer.status, 202);
        acked.add(answer.body.list_id);
      }
      cluster.pause();
      let resumed = false;
      try {
        // Clients that give up after half a second, sent with the first requests of the pause (before
        // a failed write makes the server answer 503 at once): their lists must never start once the
        // database wakes.
        const givingUp = Promise.all(
          run.servers.map((s, i) =>
            submit(s.url, `pause-gave-up-${i}`, 500).then(
              (a) => `answered ${a.status}`,
              () => "gave up",
            ),
          ),
        );
        const during = await Promise.all(
          run.servers.flatMap((s, i) =>
            [0, 1, 2].map((k) =>
              submit(s.url, `pause-during-${i}-${k}`).then((a) => ({ a, requester: `pause-during-${i}-${k}` })),
            ),
          ),
        );
        const gaveUp = await givingUp;
        const ready = await fetch(`${run.servers[0]!.url}/readyz`);
        cluster.resume();
        resumed = true;
        assert.is(ready.status, 503, "/readyz fails while the database does not answer");
        for (const { a, requester } of during) {
          assert.ok(a.ms < BOUND_MS, `answered within ${BOUND_MS} ms, took ${a.ms}`);
          if (a.status === 202) acked.add(a.body.list_id);
          else {
            assert.is(a.status, 503, JSON.stringify(a.body));
            assert.ok(Number(a.retryAfter) > 0);
            unanswered.add(requester);
          }
        }
        assert.ok(
          during.some(({ a }) => a.status === 503),
          "a stalled database gives 503s",
        );
        assert.equal(gaveUp, ["gave up", "gave up"]);
      } finally {
        if (!resumed) cluster.resume();
      }
      for (const [i, s] of run.servers.entries()) {
        const after = await waitFor(`instance ${i} accepts again`, async () => {
          const answer = await submit(s.url, `pause-after-${i}-${n}`);
          return answer.status === 202 ? answer : undefined;
        });
        acked.add(after.body.list_id);
      }
      await checkLog(dbUrl, acked, unanswered);
      // The given-up submits waited on the stalled database well past their client's patience, and
      // the database has answered since (the lists above finished): none of them started.
      const all = await lists(dbUrl);
      assert.equal(
        all.filter((l) => l.requester.startsWith("pause-gave-up")),
        [],
        "a submit whose client had gone did not run later",
      );
      for (const s of run.servers) assert.is(s.child.exitCode, null, `an instance exited: ${s.output().stderr}`);
    } finally {
      await stopAll(run);
    }
  });
}

test.run();

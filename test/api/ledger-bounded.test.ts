// Bounded answers (docs/flock.md §3): GET /api/trust embeds each record's newest 20 history rows
// and history_total, /api/trust/history pages the rest back by id, and a nest's messages page with
// ?limit and &before while the bare GET keeps the contract's every-record answer.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { addMessages, addTrustHistory } from "../helpers/aged-rows.ts";

async function withServer(fn: (server: TestServer) => Promise<void>): Promise<void> {
  const server = await startTestServer();
  try {
    await fn(server);
  } finally {
    await server.close();
  }
}

/** Every entry of one filter, paged back with `limit` until next_before is null. */
async function pageAll(server: TestServer, filter: string, limit: number): Promise<any[]> {
  const pages: any[][] = [];
  let before: number | null = null;
  for (let guard = 0; guard < 10_000; guard++) {
    const res = await server.get(
      `/api/trust/history?${filter}&limit=${limit}${before === null ? "" : `&before=${before}`}`,
    );
    assert.is(res.status, 200, res.text);
    const ids = res.body.history.map((e: any) => e.id);
    assert.equal(
      ids,
      [...ids].sort((a: number, b: number) => a - b),
      "a page is in id order",
    );
    pages.unshift(res.body.history);
    before = res.body.next_before;
    if (before === null) return pages.flat();
  }
  throw new Error("the history never ended");
}

test("GET /api/trust: the newest 20 rows of each record, oldest first, and history_total", () =>
  withServer(async (server) => {
    const sizes: Array<[string, string, number]> = [
      ["flock", "research", 0],
      ["flock", "writing", 7],
      ["Hugin", "research", 20],
      ["Hugin", "writing", 21],
      ["Munin", "code", 57],
      ["Sentry", "triage/watch", 3],
    ];
    // Interleaved, so a record's rows are not one id range.
    for (let round = 0; round < 3; round++)
      for (const [h, t, n] of sizes)
        await addTrustHistory(server.app, h, t, Math.floor(n / 3) + (round < n % 3 ? 1 : 0), round + n);
    const res = await server.get("/api/trust");
    assert.is(res.status, 200);
    for (const [holder, taskType, n] of sizes) {
      const all = await pageAll(
        server,
        `holder=${encodeURIComponent(holder)}&task_type=${encodeURIComponent(taskType)}`,
        6,
      );
      assert.is(all.length, n, `${holder}/${taskType}: every entry once`);
      assert.is(new Set(all.map((e) => e.id)).size, n, "no entry twice");
      const record = res.body.ledger.find((r: any) => r.holder === holder && r.task_type === taskType);
      assert.is(record.history_total, n);
      assert.equal(
        record.history.map((e: any) => e.id),
        all.slice(-20).map((e) => e.id),
        "the newest 20, oldest first",
      );
      for (const entry of record.history)
        assert.equal(Object.keys(entry).sort(), ["at", "from", "id", "subject", "to", "verdict"]);
      assert.is(record.approvals + record.rejections + record.autos, n);
    }
  }));

test("GET /api/trust/history: one holder, one task type, or everyone, paged with no gap and no repeat", () =>
  withServer(async (server) => {
    await addTrustHistory(server.app, "Hugin", "research", 31, 1);
    await addTrustHistory(server.app, "Munin", "research", 12, 2);
    await addTrustHistory(server.app, "Hugin", "code", 9, 3);
    const everyone = await pageAll(server, "", 7);
    assert.is(everyone.length, 52);
    assert.equal(
      everyone.map((e) => e.id),
      [...everyone.map((e) => e.id)].sort((a, b) => a - b),
    );
    for (const [filter, expected] of [
      ["holder=Hugin", 40],
      ["task_type=research", 43],
      ["holder=Munin&task_type=research", 12],
      ["holder=nobody", 0],
    ] as const) {
      for (const limit of [1, 5, 100]) {
        const all = await pageAll(server, filter, limit);
        assert.is(all.length, expected, `${filter} limit ${limit}`);
        assert.equal(
          all,
          everyone.filter(
            (e) =>
              (!filter.includes("holder=") || filter.includes(`holder=${e.holder}`)) &&
              (!filter.includes("task_type=") || filter.includes(`task_type=${e.task_type}`)),
          ),
        );
      }
    }
    const first = await server.get("/api/trust/history");
    assert.is(first.body.history.length, 50, "50 when no limit is given");
    assert.equal(Object.keys(first.body.history[0]).sort(), [
      "actor",
      "at",
      "from",
      "holder",
      "id",
      "subject",
      "task_type",
      "to",
      "verdict",
    ]);
    assert.ok(
      first.body.history.every((e: any) => e.actor === null),
      "rows stored with no decider say so (export-actors tests the deciders)",
    );
  }));

test("GET /api/trust/history: a bad parameter is a 400 naming it", () =>
  withServer(async (server) => {
    for (const query of [
      "limit=0",
      "limit=101",
      "limit=abc",
      "limit=-3",
      "limit=2.5",
      "before=0",
      "before=-1",
      "before=x",
      "before=1e3",
      "holder=a&holder=b",
      "limit=99999999999999999999",
    ]) {
      const res = await server.get(`/api/trust/history?${query}`);
      assert.is(res.status, 400, query);
      assert.ok(res.body.message.includes(query.split("=")[0]!), `${query}: ${res.body.message}`);
    }
    assert.is((await server.get("/api/trust/history?limit=100&before=1")).status, 200);
  }));

test("GET /api/nests/{id}/messages: bare is every record; ?limit and &before page back in msg_id order", () =>
  withServer(async (server) => {
    await addMessages(server.app, "todo", 137);
    const bare = await server.get("/api/nests/todo/messages");
    assert.is(bare.status, 200);
    assert.is(bare.body.length, 137, "every record");
    for (const limit of [1, 9, 50, 100]) {
      const pages: any[][] = [];
      let before = "";
      for (;;) {
        const res = await server.get(`/api/nests/todo/messages?limit=${limit}${before}`);
        assert.is(res.status, 200, res.text);
        if (res.body.length === 0) break;
        assert.ok(res.body.length <= limit);
        pages.unshift(res.body);
        before = `&before=${res.body[0].msg_id}`;
      }
      assert.equal(pages.flat(), bare.body, `limit ${limit}: the pages make the bare answer`);
    }
    const newest = await server.get("/api/nests/todo/messages?limit=50");
    assert.equal(newest.body, bare.body.slice(-50));
    assert.equal(
      (await server.get("/api/nests/todo/messages?limit=3&before=10")).body,
      bare.body.slice(6, 9),
      "a number works as before",
    );
    assert.is((await server.get("/api/nests/todo/messages?before=todo-60")).body.length, 50, "before alone pages 50");
    for (const query of [
      "limit=0",
      "limit=101",
      "limit=x",
      "before=other-3",
      "before=todo-0",
      "before=todo-x",
      "before=-1",
      "limit=5&limit=6x",
    ]) {
      const res = await server.get(`/api/nests/todo/messages?${query}`);
      assert.is(res.status, 400, query);
    }
    assert.is((await server.get("/api/nests/nowhere/messages?limit=5")).status, 404);
  }));

test.run();

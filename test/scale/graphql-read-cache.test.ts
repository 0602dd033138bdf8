// The GraphQL read cache (src/server/graphql/plugins/read-cache.ts): a trust, list or events query is
// answered again as the very same JSON text while nothing has committed, and the read after any
// commit (a verdict, an appended event, a plain row update) shows it. Rows of a transaction that
// rolls back are never kept, graphql-sse gets the same answer, and PostgreSQL (no version) runs
// every query afresh and is just as fresh.
import { suite, type Test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { openSse } from "../helpers/sse.ts";
import { serverOnFreshDatabase, services, type Services } from "../helpers/scale-services.ts";
import { gated } from "../helpers/gate.ts";
import type { VerdictValue } from "../../src/flock/events.ts";
import { SYSTEM } from "../../src/base/actor.ts";

class Rollback extends Error {}

/** Counts the ledger reads the server makes, so a test can tell a cached answer from a fresh one. */
function countLedgerReads(server: TestServer): () => number {
  const trust = server.app.flock.trust;
  const records = trust.records.bind(trust);
  let reads = 0;
  trust.records = (filter) => {
    reads += 1;
    return records(filter);
  };
  return () => reads;
}

const LEDGER =
  "{ trust { holder taskType level levelName streak approvals rejections autos history { verdict subject from to at } } }";
const PAGED =
  "query($holder: String, $last: Int) { trust(holder: $holder) { holder taskType history(last: $last) { id subject } } }";

async function gqlText(
  server: TestServer,
  query: string,
  variables?: Record<string, unknown>,
): Promise<{ status: number; text: string; json: any; type: string | null }> {
  const response = await fetch(`${server.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ query, variables }),
  });
  const text = await response.text();
  return { status: response.status, text, json: JSON.parse(text), type: response.headers.get("content-type") };
}

async function verdict(
  server: TestServer,
  holder: string,
  taskType: string,
  value: VerdictValue,
  subject: string,
): Promise<void> {
  await server.app.prisma.$transaction((tx) =>
    server.app.flock.trust.apply(tx, holder, taskType, value, subject, SYSTEM),
  );
}

interface Backend {
  server: TestServer;
  done(): Promise<void>;
}

/** One backend's suite; `missing` names the service it lacks (its tests then register as skipped). */
function backendSuite(
  name: string,
  start: () => Promise<Backend>,
  cached: boolean,
  needs?: (runner: Test) => string | null,
) {
  const s = suite(name);
  const missing = needs ? needs(s) : null;
  const t = gated(s, missing);
  let backend: Backend | undefined;
  let server: TestServer;
  t.before(async () => {
    backend = await start();
    server = backend.server;
  });
  t.after(async () => {
    await backend?.done();
  });

  t("a ledger read again is the same text; every verdict shows in the very next read", async () => {
    const reads = countLedgerReads(server);
    const holders = ["cache-ada", "cache-bo", "flock"];
    const values: VerdictValue[] = ["approved", "rejected", "auto", "timeout", "approved", "approved"];
    let previous = "";
    for (let round = 0; round < 12; round++) {
      const holder = holders[round % holders.length]!;
      const subject = `cache-${name}-${round}`;
      await verdict(server, holder, round % 2 === 0 ? "writing" : "code", values[round % values.length]!, subject);
      const first = await gqlText(server, LEDGER);
      assert.is(first.status, 200);
      assert.not.equal(first.text, previous, `round ${round}: the verdict changed the answer`);
      const entries = first.json.data.trust.flatMap((r: { history: Array<{ subject: string }> }) =>
        r.history.map((h) => h.subject),
      );
      assert.ok(entries.includes(subject), `round ${round}: ${subject} is in the ledger right after it landed`);
      const before = reads();
      const again = await gqlText(server, LEDGER);
      assert.is(again.text, first.text, `round ${round}: byte for byte`);
      assert.is(again.type, first.type);
      assert.is(
        reads() - before,
        cached ? 0 : 1,
        `round ${round}: ${cached ? "served from the cache" : "read afresh"}`,
      );
      previous = again.text;
    }
    // The REST view of the same ledger agrees with the cached answer.
    // (REST embeds each record's newest 20 entries, with their ids for paging back.)
    const rest = (await server.get("/api/trust")).body.ledger as Array<{
      holder: string;
      history: Array<{ id: number }>;
    }>;
    const gql = (await gqlText(server, LEDGER)).json.data.trust as Array<{ holder: string; history: unknown[] }>;
    assert.equal(
      gql.map((r) => [r.holder, r.history.slice(-20)]),
      rest.map((r) => [r.holder, r.history.map(({ id: _id, ...entry }) => entry)]),
    );
  });

  t("each set of variables has its own answer, and a page moves with a new verdict", async () => {
    for (let i = 0; i < 7; i++) await verdict(server, `pager-${i % 2}`, "math", "approved", `page-${name}-${i}`);
    for (const [holder, last] of [
      ["pager-0", 2],
      ["pager-1", 2],
      ["pager-0", 1],
      ["pager-1", 3],
      ["pager-0", 2],
    ] as const) {
      const page = (await gqlText(server, PAGED, { holder, last })).json.data.trust[0];
      assert.is(page.holder, holder);
      assert.is(page.history.length, last);
      const expected = Array.from({ length: 7 }, (_, i) => i)
        .filter((i) => `pager-${i % 2}` === holder)
        .slice(-last)
        .map((i) => `page-${name}-${i}`);
      assert.equal(
        page.history.map((h: { subject: string }) => h.subject),
        expected,
      );
    }
    // The page before a page's first id, down to the first entry and then an empty page.
    const all = (await gqlText(server, PAGED, { holder: "pager-0", last: 1000 })).json.data.trust[0].history as Array<{
      id: number;
      subject: string;
    }>;
    let before: number | undefined = undefined;
    const seen: string[] = [];
    for (;;) {
      const query = `query($before: Int) { trust(holder: "pager-0") { history(last: 2, before: $before) { id subject } } }`;
      const page = (await gqlText(server, query, { before })).json.data.trust[0].history as Array<{
        id: number;
        subject: string;
      }>;
      if (page.length === 0) break;
      seen.unshift(...page.map((h) => h.subject));
      before = page[0]!.id;
    }
    assert.equal(
      seen,
      all.map((h) => h.subject),
    );
    await verdict(server, "pager-0", "math", "auto", `page-${name}-late`);
    const page = (await gqlText(server, PAGED, { holder: "pager-0", last: 1 })).json.data.trust[0];
    assert.equal(
      page.history.map((h: { subject: string }) => h.subject),
      [`page-${name}-late`],
    );
  });

  t("list.events and events(listId) show an appended event, and a list's status change, in the next read", async () => {
    const listId = `lstcache${name}`;
    await server.app.prisma.todoList.create({
      data: { id: listId, requester: "cache", text: "-", tokenBudget: 1, status: "running" },
    });
    const query = `{ list(id: "${listId}") { id status events { seq name ts payload } } events(listId: "${listId}") { seq raw } }`;
    for (let i = 1; i <= 8; i++) {
      await server.app.log.append(`list:${listId}`, "crow.flying", {
        list_id: listId,
        crow: "ada",
        note: `é "quoted" ${i}`,
        n: i,
        ts: new Date().toISOString(),
      });
      const first = await gqlText(server, query);
      assert.is(first.json.data.list.events.length, i, `append ${i} shows at once`);
      assert.is(first.json.data.events.length, i);
      assert.equal(first.json.data.list.events[i - 1].payload.n, i);
      assert.is(first.json.data.events[i - 1].raw, JSON.stringify(first.json.data.list.events[i - 1].payload));
      assert.is((await gqlText(server, query)).text, first.text);
    }
    await server.app.prisma.todoList.update({ where: { id: listId }, data: { status: "finished" } });
    assert.is((await gqlText(server, query)).json.data.list.status, "finished");
  });

  t("rows of a transaction that rolls back are never served, even when read while it was open", async () => {
    const reads = countLedgerReads(server);
    const subject = `rolled-back-${name}`;
    const query = `{ trust(holder: "cache-rollback") { holder history { subject } } }`;
    assert.equal((await gqlText(server, query)).json.data.trust, []);
    await server.app.prisma
      .$transaction(async (tx) => {
        await server.app.flock.trust.apply(tx, "cache-rollback", "writing", "approved", subject, SYSTEM);
        await gqlText(server, query); // whatever this sees, it must not be kept
        throw new Rollback("rolled back on purpose");
      })
      .catch((error) => {
        if (!(error instanceof Rollback)) throw error;
      });
    const before = reads();
    assert.equal((await gqlText(server, query)).json.data.trust, [], "the rolled-back verdict is nowhere");
    assert.is(reads() - before, 1, "read afresh after the transaction");
    assert.equal((await gqlText(server, query)).json.data.trust, []);

    // A list is read through Prisma, whose connection shows an open transaction's rows to reads made meanwhile.
    const listId = `lstrollback${name}`;
    await server.app.prisma.todoList.create({
      data: { id: listId, requester: "cache", text: "-", tokenBudget: 1, status: "running" },
    });
    const listQuery = `{ list(id: "${listId}") { id status tokensUsed } }`;
    assert.is((await gqlText(server, listQuery)).json.data.list.status, "running");
    await server.app.prisma
      .$transaction(async (tx) => {
        await tx.todoList.update({ where: { id: listId }, data: { status: "finished", tokensUsed: 7 } });
        await gqlText(server, listQuery); // may see the uncommitted row; must not keep it
        throw new Rollback("rolled back on purpose");
      })
      .catch((error) => {
        if (!(error instanceof Rollback)) throw error;
      });
    for (let i = 0; i < 3; i++)
      assert.equal(
        (await gqlText(server, listQuery)).json.data.list,
        { id: listId, status: "running", tokensUsed: 0 },
        `read ${i} after the rollback`,
      );

    // The flock's own state writes (the log's appendState) hold the same connection: the same rule.
    for (const [at, tokens] of [
      ["rolled back", 11],
      ["committed", 13],
    ] as const) {
      await server.app.log
        .appendState(`list:${listId}`, async (tx) => {
          await tx.addTokens(listId, tokens);
          await gqlText(server, listQuery); // may see the uncommitted tokens; must not keep them
          if (at === "rolled back") throw new Rollback("rolled back on purpose");
          return [{ name: "crow.flying", payload: { list_id: listId, crow: "ada" } }];
        })
        .catch((error) => {
          if (!(error instanceof Rollback)) throw error;
        });
      const expected = at === "rolled back" ? 0 : tokens;
      for (let i = 0; i < 3; i++)
        assert.equal(
          (await gqlText(server, listQuery)).json.data.list,
          { id: listId, status: "running", tokensUsed: expected },
          `${at}: read ${i}`,
        );
    }
    await server.app.log
      .appendState(`list:${listId}`, async (tx) => {
        await tx.addTokens(listId, 100);
        await gqlText(server, listQuery);
        throw new Rollback("rolled back on purpose");
      })
      .catch((error) => {
        if (!(error instanceof Rollback)) throw error;
      });
    for (let i = 0; i < 3; i++)
      assert.equal(
        (await gqlText(server, listQuery)).json.data.list.tokensUsed,
        13,
        `after a second rollback: read ${i}`,
      );
  });

  t("a query beside an uncached root field, and a mutation, always run", async () => {
    const reads = countLedgerReads(server);
    const query = `{ trust(holder: "cache-ada") { holder } crows { name } }`;
    const first = await gqlText(server, query);
    assert.is(first.status, 200, first.text);
    await gqlText(server, query);
    assert.is(reads(), 2, "not cached: crows is not answered from the database alone");
  });

  t("graphql-sse gets the same answer as /graphql, cached or not", async () => {
    const plain = await gqlText(server, LEDGER);
    for (let i = 0; i < 2; i++) {
      const stream = await openSse(`${server.url}/graphql/stream`, { json: { query: LEDGER } });
      const next = await stream.waitFor((m) => m.event === "next");
      stream.close();
      assert.equal(next.data.data, plain.json.data);
    }
  });

  s.run();
}

backendSuite(
  "sqlite",
  async () => {
    const server = await startTestServer();
    return { server, done: () => server.close() };
  },
  true,
);

let pgServices: Services | null = null;
backendSuite(
  "postgresql",
  () => serverOnFreshDatabase(pgServices!.pgUrl),
  false,
  (runner) => {
    pgServices = services("graphql-read-cache on PostgreSQL", runner);
    return pgServices ? null : "no PostgreSQL/Redis";
  },
);

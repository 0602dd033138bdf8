// The ledger's paged reads and the export on PostgreSQL: the trust history's SQL is written per
// provider (src/storage/trust-history.ts), so the same walks as on SQLite (ledger-bounded,
// graphql-connections, export) run here against a real server on a fresh PostgreSQL database,
// with who decided each entry read back through the same statements.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { freshDatabase, services } from "../helpers/scale-services.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { addTrustHistory } from "../helpers/aged-rows.ts";
import { csvObjects } from "../helpers/csv.ts";

const svc = services("scale-ledger-pg");

async function historyIds(server: TestServer, filter: string, limit: number): Promise<number[]> {
  const pages: number[][] = [];
  let before = "";
  for (;;) {
    const res = await server.get(`/api/trust/history?limit=${limit}${filter}${before}`);
    assert.is(res.status, 200, res.text);
    pages.unshift(res.body.history.map((e: { id: number }) => e.id));
    if (res.body.next_before === null) return pages.flat();
    before = `&before=${res.body.next_before}`;
  }
}

async function connectionIds(
  server: TestServer,
  args: string,
  direction: "first" | "last",
  size: number,
): Promise<number[]> {
  const pages: number[][] = [];
  let cursor: string | null = null;
  for (;;) {
    const move =
      direction === "first"
        ? `first: ${size}${cursor ? `, after: "${cursor}"` : ""}`
        : `last: ${size}${cursor ? `, before: "${cursor}"` : ""}`;
    const res = await server.post("/graphql", {
      query: `{ trustHistory(${args}${args ? ", " : ""}${move}) { edges { node { id } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`,
    });
    assert.not.ok(res.body.errors, JSON.stringify(res.body.errors));
    const c = res.body.data.trustHistory;
    const ids = c.edges.map((e: { node: { id: number } }) => e.node.id);
    if (direction === "first") pages.push(ids);
    else pages.unshift(ids);
    if (!(direction === "first" ? c.pageInfo.hasNextPage : c.pageInfo.hasPreviousPage)) return pages.flat();
    cursor = direction === "first" ? c.pageInfo.endCursor : c.pageInfo.startCursor;
  }
}

if (svc) {
  test("PostgreSQL: trust history pages (REST and GraphQL, every filter shape) and the export match the stored rows", async () => {
    const db = await freshDatabase(svc.pgUrl);
    const server = await startTestServer({ env: { DATABASE_URL: db.url } });
    try {
      for (const [h, t, n, seed] of [
        ["Hugin", "research", 45, 1],
        ["Munin", "research", 12, 2],
        ["Hugin", "code", 23, 3],
      ] as const)
        await addTrustHistory(server.app, h, t, n, seed);
      const deciders = [
        { kind: "token" as const, token_id: "tok_pg", token_name: "pg, bot" },
        { kind: "link" as const, webhook_id: "ep_pg" },
        { kind: "system" as const },
      ];
      await addTrustHistory(server.app, "flock", "writing", 6, 4, deciders);
      const stored = await server.app.prisma.trustEntry.findMany({ orderBy: { id: "asc" } });
      const expect = (f: (e: (typeof stored)[number]) => boolean) => stored.filter(f).map((e) => e.id);
      const shapes: Array<[string, string, (e: (typeof stored)[number]) => boolean]> = [
        ["", "", () => true],
        ["&holder=Hugin", 'holder: "Hugin"', (e) => e.holder === "Hugin"],
        ["&task_type=research", 'taskType: "research"', (e) => e.taskType === "research"],
        [
          "&holder=Hugin&task_type=code",
          'holder: "Hugin", taskType: "code"',
          (e) => e.holder === "Hugin" && e.taskType === "code",
        ],
      ];
      for (const [rest, gql, f] of shapes) {
        for (const size of [1, 7, 100]) {
          assert.equal(await historyIds(server, rest, size), expect(f), `REST ${rest} by ${size}`);
          assert.equal(await connectionIds(server, gql, "first", size), expect(f), `GraphQL ${gql} first ${size}`);
          assert.equal(await connectionIds(server, gql, "last", size), expect(f), `GraphQL ${gql} last ${size}`);
        }
      }
      const ledger = (await server.get("/api/trust")).body.ledger as Array<{
        holder: string;
        task_type: string;
        history: Array<{ id: number; at: string }>;
        history_total: number;
      }>;
      const hugin = ledger.find((r) => r.holder === "Hugin" && r.task_type === "research")!;
      assert.is(hugin.history_total, 45);
      assert.equal(
        hugin.history.map((e) => e.id),
        expect((e) => e.holder === "Hugin" && e.taskType === "research").slice(-20),
      );
      assert.match(hugin.history[0]!.at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      for (let i = 0; i < 30; i++)
        await server.app.log.append(`list:lstpg${i % 3}`, i % 4 ? "crow.flying" : "verdict", {
          list_id: `lstpg${i % 3}`,
          item_id: `lstpg-${i}`,
          target: "triage",
          verdict: "approved",
        });
      const lines = (await server.get("/api/export/events")).text
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l).id);
      assert.equal(
        lines,
        (await server.app.prisma.event.findMany({ orderBy: { id: "asc" }, select: { id: true } })).map((e) => e.id),
      );
      const csv = (await server.get("/api/export/trust-history")).text.trim().split("\r\n");
      assert.is(csv.length, 1 + stored.length);
      // Who decided, read back through the PostgreSQL statements: the CSV's columns and REST's actor.
      const expected = [0, 1, 2, 3, 4, 5].map((i) => deciders[i % 3]!);
      const rows = csvObjects((await server.get("/api/export/trust-history")).text).rows.filter(
        (r) => r.holder === "flock",
      );
      assert.equal(
        rows.map((r) => [r.actor, r.actor_token_id, r.actor_token_name]),
        expected.map((a) => [a.kind, "token_id" in a ? a.token_id : "", "token_name" in a ? a.token_name : ""]),
      );
      const flockPage = (await server.get("/api/trust/history?holder=flock&task_type=writing&limit=100")).body.history;
      assert.equal(
        flockPage.map((e: { actor: unknown }) => e.actor),
        expected,
      );
    } finally {
      await server.close();
      await db.drop();
    }
  });
}

test.run();

// Every cursor connection, paged forwards (first/after) and backwards (last/before) while rows are
// inserted between pages: the pages join into one run of the connection's final order, with no row
// twice and none skipped, and every row that was there before the walk is in it. Also the bound on
// first/last, foreign and broken cursors, and totalCount.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { addFinishedList, addMessages, addTrustHistory } from "../helpers/aged-rows.ts";
import { MAX_PAGE } from "../../src/base/util/clamp.ts";

async function gql(server: TestServer, query: string, variables: Record<string, unknown> = {}): Promise<any> {
  const res = await server.request("POST", "/graphql", { query, variables });
  return res.body;
}

interface Spec {
  name: string;
  /** A query taking $first $last $after $before, selecting `edges { cursor node { key } } pageInfo` at `path`. */
  query: string;
  path: string[];
  /** The node's identity. */
  key: string;
  /** Adds rows (the i-th insert of the walk). */
  insert(server: TestServer, i: number): Promise<void>;
}

const PAGE = `edges { cursor node { KEY } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } totalCount`;
const ARGS = `first: $first, last: $last, after: $after, before: $before`;
const VARS = `$first: Int, $last: Int, $after: String, $before: String`;

let fixtureList = "";
const specs: Spec[] = [
  {
    name: "listsConnection (newest first)",
    query: `query Q(${VARS}) { listsConnection(${ARGS}) { ${PAGE.replace("KEY", "id")} } }`,
    path: ["listsConnection"],
    key: "id",
    insert: async (server, i) => void (await addFinishedList(server.app, `walker${i % 3}`, 1)),
  },
  {
    name: "listsConnection filtered by requester and status",
    query: `query Q(${VARS}) { listsConnection(requester: "walker1", status: finished, ${ARGS}) { ${PAGE.replace("KEY", "id")} } }`,
    path: ["listsConnection"],
    key: "id",
    insert: async (server, i) => void (await addFinishedList(server.app, `walker${i % 2}`, 1)),
  },
  {
    name: "a list's itemsConnection",
    query: `query Q(${VARS}) { list(id: "LIST") { itemsConnection(${ARGS}) { ${PAGE.replace("KEY", "id")} } } }`,
    path: ["list", "itemsConnection"],
    key: "id",
    insert: async () => {}, // a list's items are fixed when it is posted
  },
  {
    name: "eventsConnection",
    query: `query Q(${VARS}) { eventsConnection(listId: "LIST", ${ARGS}) { ${PAGE.replace("KEY", "seq")} } }`,
    path: ["eventsConnection"],
    key: "seq",
    insert: async (server, i) =>
      void (await server.app.log.append(`list:${fixtureList}`, "crow.flying", { list_id: fixtureList, n: i })),
  },
  {
    name: "a list's eventsConnection",
    query: `query Q(${VARS}) { list(id: "LIST") { eventsConnection(${ARGS}) { ${PAGE.replace("KEY", "seq")} } } }`,
    path: ["list", "eventsConnection"],
    key: "seq",
    insert: async (server, i) =>
      void (await server.app.log.append(`list:${fixtureList}`, "crow.flying", { list_id: fixtureList, n: i })),
  },
  {
    name: "messagesConnection",
    query: `query Q(${VARS}) { messagesConnection(nestId: "todo", ${ARGS}) { ${PAGE.replace("KEY", "msgId")} } }`,
    path: ["messagesConnection"],
    key: "msgId",
    insert: (server, i) => addMessages(server.app, "todo", 1 + (i % 3)),
  },
  {
    name: "a nest's messagesConnection",
    query: `query Q(${VARS}) { nests { id messagesConnection(${ARGS}) { ${PAGE.replace("KEY", "msgId")} } } }`,
    path: ["nests", "0", "messagesConnection"],
    key: "msgId",
    insert: (server, i) => addMessages(server.app, "todo", 1 + (i % 2)),
  },
  {
    name: "trustHistory",
    query: `query Q(${VARS}) { trustHistory(${ARGS}) { ${PAGE.replace("KEY", "id")} } }`,
    path: ["trustHistory"],
    key: "id",
    insert: (server, i) => addTrustHistory(server.app, i % 2 ? "Hugin" : "flock", "research", 1 + (i % 3), i),
  },
  {
    name: "trustHistory of one holder",
    query: `query Q(${VARS}) { trustHistory(holder: "Hugin", ${ARGS}) { ${PAGE.replace("KEY", "id")} } }`,
    path: ["trustHistory"],
    key: "id",
    insert: (server, i) => addTrustHistory(server.app, i % 2 ? "Hugin" : "Munin", i % 3 ? "research" : "code", 2, i),
  },
  {
    name: "a record's historyConnection",
    query: `query Q(${VARS}) { trust(holder: "Hugin", taskType: "research") { historyConnection(${ARGS}) { ${PAGE.replace("KEY", "id")} } } }`,
    path: ["trust", "0", "historyConnection"],
    key: "id",
    insert: (server, i) => addTrustHistory(server.app, "Hugin", i % 2 ? "research" : "code", 1 + (i % 2), i),
  },
  {
    name: "approvalsConnection",
    query: `query Q(${VARS}) { approvalsConnection(${ARGS}) { ${PAGE.replace("KEY", "id")} } }`,
    path: ["approvalsConnection"],
    key: "id",
    insert: async (server, i) => void (await addFinishedList(server.app, `approver${i}`, 1 + (i % 2))),
  },
];

function connectionAt(body: any, path: string[]): any {
  assert.not.ok(body.errors, JSON.stringify(body.errors));
  let value = body.data;
  for (const step of path) value = value[step];
  return value;
}

/**
 * Walks the whole connection one way, inserting rows before each of the first pages (a walk toward
 * where rows arrive must be able to catch up); returns the keys in connection order.
 */
async function walk(
  server: TestServer,
  spec: Spec,
  query: string,
  direction: "forward" | "backward",
  size: number,
  inserts: boolean,
): Promise<string[]> {
  const pages: string[][] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 1000; i++) {
    if (inserts && i < 6) await spec.insert(server, i);
    const variables = direction === "forward" ? { first: size, after: cursor } : { last: size, before: cursor };
    const connection = connectionAt(await gql(server, query, variables), spec.path);
    const keys = connection.edges.map((e: any) => String(e.node[spec.key]));
    assert.ok(keys.length <= size);
    if (direction === "forward") pages.push(keys);
    else pages.unshift(keys);
    const more = direction === "forward" ? connection.pageInfo.hasNextPage : connection.pageInfo.hasPreviousPage;
    if (!more) return pages.flat();
    cursor = direction === "forward" ? connection.pageInfo.endCursor : connection.pageInfo.startCursor;
    assert.type(cursor, "string");
  }
  throw new Error(`${spec.name}: the walk never ended`);
}

async function everything(server: TestServer, spec: Spec, query: string): Promise<string[]> {
  return walk(server, spec, query, "forward", MAX_PAGE, false);
}

test("every connection pages forwards and backwards while rows are inserted: no duplicate, no gap", async () => {
  const server = await startTestServer();
  try {
    fixtureList = await addFinishedList(server.app, "walker1", 23);
    for (let i = 0; i < 17; i++)
      await server.app.log.append(`list:${fixtureList}`, "crow.flying", { list_id: fixtureList, n: -i });
    for (let i = 0; i < 9; i++) await addFinishedList(server.app, `walker${i % 3}`, 1 + (i % 3));
    await addMessages(server.app, "todo", 19);
    await addTrustHistory(server.app, "Hugin", "research", 14, 1);
    await addTrustHistory(server.app, "flock", "research", 8, 2);
    for (const spec of specs) {
      const query = spec.query.replace("LIST", fixtureList);
      for (const direction of ["forward", "backward"] as const) {
        for (const size of [1, 4, 7]) {
          const before = await everything(server, spec, query);
          const seen = await walk(server, spec, query, direction, size, true);
          const after = await everything(server, spec, query);
          const label = `${spec.name} ${direction} by ${size}`;
          assert.is(new Set(seen).size, seen.length, `${label}: no row twice`);
          for (const key of before)
            assert.ok(seen.includes(key), `${label}: ${key}, there before the walk, was skipped`);
          const start = after.indexOf(seen[0]!);
          assert.ok(start >= 0, label);
          assert.equal(
            after.slice(start, start + seen.length),
            seen,
            `${label}: one unbroken run of the connection's order`,
          );
          const total = connectionAt(await gql(server, query, { first: 1 }), spec.path).totalCount;
          assert.is(total, after.length, `${label}: totalCount`);
        }
      }
    }
  } finally {
    await server.close();
  }
});

test("first and last are bounded by MAX_PAGE, and a cursor from elsewhere is a bad_input", async () => {
  const server = await startTestServer();
  try {
    const listId = await addFinishedList(server.app, "bounds", 3);
    await addMessages(server.app, "todo", 3);
    await addTrustHistory(server.app, "Hugin", "research", 3);
    const queries = specs.map((s) => s.query.replace("LIST", listId));
    for (const [i, query] of queries.entries()) {
      for (const variables of [{ first: MAX_PAGE + 1 }, { last: MAX_PAGE + 1 }, { first: -1 }, { first: 100_000 }]) {
        const body = await gql(server, query, variables);
        assert.ok(body.errors?.length, `${specs[i]!.name} ${JSON.stringify(variables)} is refused`);
        assert.is(body.errors[0].extensions?.code, "bad_input", `${specs[i]!.name}: ${JSON.stringify(body.errors)}`);
      }
      assert.not.ok(
        (await gql(server, query, { first: MAX_PAGE })).errors,
        `${specs[i]!.name}: first: ${MAX_PAGE} is allowed`,
      );
      for (const after of ["garbage", Buffer.from("message:1x").toString("base64url"), "", "%%%"]) {
        const body = await gql(server, query, { first: 2, after: after || "AAAA" });
        assert.ok(body.errors?.length, `${specs[i]!.name}: cursor ${after} refused`);
        assert.is(body.errors[0].extensions?.code, "bad_input", `${specs[i]!.name}: ${JSON.stringify(body.errors)}`);
      }
    }
    // A keyed cursor names its connection: a message cursor is not an event cursor.
    const messages = connectionAt(
      await gql(server, specs.find((s) => s.name === "messagesConnection")!.query, { first: 1 }),
      ["messagesConnection"],
    );
    const body = await gql(server, specs.find((s) => s.name === "eventsConnection")!.query.replace("LIST", listId), {
      first: 1,
      after: messages.pageInfo.endCursor,
    });
    assert.is(body.errors?.[0]?.extensions?.code, "bad_input");
  } finally {
    await server.close();
  }
});

test.run();

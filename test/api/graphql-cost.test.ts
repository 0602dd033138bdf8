// Query cost that knows list sizes (src/server/graphql/plugins/cost.ts): every documented query and
// every query the console sends passes; the query that kept the server busy for minutes (15 aliases
// of lists(limit:100){ items { list { items { text } } } }) is refused with QUERY_TOO_COSTLY before it
// runs, over 100 stored 50-item lists; each answer carries extensions.cost {requested, limit}; the
// rule reads limit/first/last from literals, variables and defaults, and a relay connection's page
// once. The execution deadline and the answer cap are in graphql-deadline.test.ts.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { buildSchema, parse, type OperationDefinitionNode } from "graphql";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { consoleDocuments, documentedDocuments } from "../helpers/documented-queries.ts";
import { DEFAULT_LIST_BOUND, MAX_QUERY_COST, queryCost } from "../../src/server/graphql/plugins/cost.ts";
import { schema } from "../../schema/index.ts";
import { storeLists } from "../helpers/stored-lists.ts";

let server: TestServer;

test.before(async () => {
  server = await startTestServer();
  await storeLists(server, 100, 50);
});
test.after(async () => {
  await server.close();
});

async function gql(
  query: string,
  variables: Record<string, unknown> = {},
  operationName?: string,
): Promise<{ status: number; json: any; ms: number }> {
  const started = performance.now();
  const response = await fetch(server.url + "/graphql", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ query, variables, operationName }),
  });
  const json = await response.json();
  return { status: response.status, json, ms: performance.now() - started };
}

const codes = (json: { errors?: Array<{ extensions?: { code?: string } }> }) =>
  (json.errors ?? []).map((e) => e.extensions?.code);

const HEAVY_ALIAS = "lists(limit:100){ items { list { items { text } } } }";
const ISSUE_QUERY = `{ ${Array.from({ length: 15 }, (_, i) => `a${i}: ${HEAVY_ALIAS}`).join(" ")} }`;

test("the issue's 920-byte query and each of its aliases alone are refused before they run", async () => {
  assert.ok(ISSUE_QUERY.length < 1000, `${ISSUE_QUERY.length} bytes`);
  assert.is(await server.app.prisma.item.count(), 5000, "100 stored lists of 50 items");
  for (const query of [
    ISSUE_QUERY,
    `{ ${HEAVY_ALIAS} }`,
    `{ lists(limit: 100) { items { list { items { id } } } } }`,
  ]) {
    const { status, json, ms } = await gql(query);
    assert.is(status, 400, query.slice(0, 60));
    assert.equal(codes(json), ["QUERY_TOO_COSTLY"]);
    assert.is(json.data, undefined, "nothing ran");
    const error = json.errors[0];
    assert.is(error.extensions.limit, MAX_QUERY_COST);
    assert.ok(error.extensions.requested > MAX_QUERY_COST);
    assert.equal(
      json.extensions.cost,
      { requested: error.extensions.requested, limit: MAX_QUERY_COST },
      "the refusal carries the cost too",
    );
    console.log(`  refused in ${ms.toFixed(1)} ms (requested ${error.extensions.requested})`);
  }
  // The same, with the size given by a variable, by its default, through fragments and inline fragments.
  const variants: Array<[string, Record<string, unknown>]> = [
    ["query Q($n: Int) { lists(limit: $n) { items { list { items { text } } } } }", { n: 100 }],
    ["query Q($n: Int = 100) { lists(limit: $n) { items { list { items { text } } } } }", {}],
    ["{ lists { items { list { items { text } } } } }", {}], // the default 20 x 50 x 50
    ["{ lists(limit: 100) { ...L } } fragment L on TodoList { items { list { items { text } } } }", {}],
    ["{ lists(limit: 100) { ... on TodoList { items { ... on Item { list { items { text } } } } } } }", {}],
    ["{ nests { lists(limit: 100) { items { text } } } }", {}],
    [`{ ${["a", "b", "c", "d", "e"].map((a) => `${a}: events(listId: "x") { payload raw }`).join(" ")} }`, {}], // 5 x 1000 events of long text
  ];
  for (const [query, variables] of variants) {
    const { status, json } = await gql(query, variables);
    assert.is(status, 400, `${query}: ${JSON.stringify(json.errors)?.slice(0, 200)}`);
    assert.equal(codes(json), ["QUERY_TOO_COSTLY"], query);
  }
  const sse = await fetch(server.url + "/graphql/stream", {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify({ query: ISSUE_QUERY }),
  });
  assert.is(sse.status, 400, "over graphql-sse too");
  assert.ok(((await sse.json()) as any).errors.some((e: any) => e.extensions?.code === "QUERY_TOO_COSTLY"));
  assert.is((await fetch(server.url + "/healthz")).status, 200);
});

test("within the limit, heavy-looking but bounded reads run and say what they cost", async () => {
  const cases = [
    "{ lists(limit: 100) { id items { text } } }",
    "{ lists(limit: 3) { items { list { items { text } } } } }",
    "query Q($n: Int) { lists(limit: $n) { id } }",
  ];
  for (const query of cases) {
    const { status, json } = await gql(query, { n: 7 });
    assert.is(status, 200, `${query}: ${JSON.stringify(json.errors)}`);
    assert.is(json.errors, undefined);
    assert.is(json.extensions.cost.limit, MAX_QUERY_COST);
    assert.is(json.extensions.cost.requested, queryCost(schema, parse(query), undefined, { n: 7 }));
  }
  const small = await gql("query Q($n: Int) { lists(limit: $n) { id } }", { n: 7 });
  assert.is(small.json.data.lists.length, 7);
  assert.is(small.json.extensions.cost.requested, 7 * 2);
});

test("the cost multiplies by each list's bound, read from literals, variables and defaults", () => {
  const cost = (query: string, variables?: Record<string, unknown>) =>
    queryCost(schema, parse(query), undefined, variables);
  assert.is(cost("{ roster }"), 8);
  assert.is(cost("{ __typename }"), 1);
  assert.is(cost("{ __schema { types { name fields { name } } } }"), 0, "introspection is not counted");
  assert.is(cost("{ lists { id } }"), 20 * 2, "the argument's default");
  for (const n of [1, 2, 17, 50, 99, 100]) {
    assert.is(cost(`{ lists(limit: ${n}) { id } }`), n * 2, `literal ${n}`);
    assert.is(cost("query($n: Int) { lists(limit: $n) { id } }", { n }), n * 2, `variable ${n}`);
    assert.is(cost(`{ lists(limit: ${n}) { items { id } } }`), n * (1 + 50 * 2), `items x50, ${n}`);
  }
  assert.is(cost("{ lists(limit: 100000) { id } }"), 100 * 2, "held to the page maximum the resolver clamps to");
  assert.is(cost("{ lists(limit: -5) { id } }"), 1 * 2, "held to at least one");
  assert.is(cost("query($n: Int = 3) { lists(limit: $n) { id } }"), 3 * 2, "a variable's default");
  assert.is(cost('{ list(id: "x") { items { approvals { id } } } }'), 1 + 50 * (1 + 2 * 2));
  assert.is(cost('{ list(id: "x") { text } }'), 1 + 50, "a long text counts as several");
  assert.is(cost("{ trust { holder history { id } } }"), 120 * (1 + 1 + 100 * 2));
  assert.is(
    cost('{ trust(holder: "flock") { holder history(last: 1000) { id } } }'),
    6 * (1 + 1 + 1000 * 2),
    "one holder's records, a page of 1000",
  );
  assert.is(cost("{ a: lists(limit: 3) { id } b: lists(limit: 4) { id } }"), 3 * 2 + 4 * 2, "aliases add up");
  const spread = `{ lists(limit: 10) { ...F ...F ...F } } fragment F on TodoList { id }`;
  assert.is(cost(spread), 10 * (1 + 3), "a fragment spread thrice counts thrice");
});

test("a relay connection's first/last counts its page once, whatever its lists are called", () => {
  const relay = buildSchema(`
    type Query { transactions(first: Int, last: Int, after: String): TransactionConnection!, tags: [String!]! }
    type TransactionConnection { edges: [TransactionEdge!]!, nodes: [Transaction!]!, pageInfo: PageInfo! }
    type TransactionEdge { cursor: String!, node: Transaction! }
    type Transaction { id: ID!, parts(first: Int = 10): PartConnection!, notes: [String!]! }
    type PartConnection { edges: [PartEdge!]! }
    type PartEdge { node: Part! }
    type Part { id: ID! }
    type PageInfo { hasNextPage: Boolean! }
  `);
  const cost = (query: string, variables?: Record<string, unknown>) =>
    queryCost(relay, parse(query), undefined, variables);
  assert.is(cost("{ transactions(first: 20) { edges { node { id } } } }"), 20 * (1 + 1 * (1 + 1 * (1 + 1))));
  assert.is(
    cost("query($n: Int) { transactions(last: $n) { nodes { id } pageInfo { hasNextPage } } }", { n: 5 }),
    5 * (1 + (1 + 1) + (1 + 1)),
  );
  assert.is(
    cost("{ transactions(first: 2) { edges { node { parts { edges { node { id } } } } } } }"),
    2 * (1 + (1 + (1 + 10 * (1 + (1 + (1 + 1)))))),
  );
  assert.is(
    cost("{ transactions(first: 2) { edges { node { notes } } } }"),
    2 * (1 + (1 + (1 + DEFAULT_LIST_BOUND))),
    "a list that is no page's counts its default bound",
  );
  assert.is(cost("{ tags }"), DEFAULT_LIST_BOUND);
  assert.is(
    cost("{ transactions { edges { node { id } } } }"),
    DEFAULT_LIST_BOUND * 4,
    "no size given and no default: the default bound",
  );
});

test("every documented query and every console query costs less than the limit and runs", async () => {
  const list = await server.post("/api/lists", { text: "buy milk\nwrite a haiku", requester: "cost-docs" });
  const variables = {
    listId: list.body.list_id,
    id: list.body.list_id,
    after: 0,
    nestId: "todo",
    holder: "flock",
    msgId: "todo-1",
  };
  const documents = [
    ...documentedDocuments().map((source) => ({ where: "docs", source })),
    ...consoleDocuments().map((d) => ({ where: `console ${d.file} ${d.name}`, source: d.source })),
  ];
  assert.ok(
    consoleDocuments().length >= 10,
    `found the console's documents: ${consoleDocuments()
      .map((d) => d.name)
      .join(", ")}`,
  );
  let highest = 0;
  for (const { where, source } of documents) {
    for (const operation of parse(source).definitions.filter(
      (d): d is OperationDefinitionNode => d.kind === "OperationDefinition",
    )) {
      const name = operation.name?.value;
      const requested = queryCost(schema, parse(source), name, variables);
      highest = Math.max(highest, requested);
      assert.ok(requested <= MAX_QUERY_COST, `${where} ${name ?? source.slice(0, 60)}: ${requested}`);
      if (operation.operation !== "query") continue;
      const { json } = await gql(source, variables, name);
      assert.not.ok(codes(json).includes("QUERY_TOO_COSTLY"), `${where} ${name}`);
      assert.equal(
        json.extensions?.cost,
        { requested, limit: MAX_QUERY_COST },
        `${where} ${name ?? ""}: extensions.cost`,
      );
    }
  }
  console.log(`  ${documents.length} documents; the costliest asks ${highest} of ${MAX_QUERY_COST}`);
});

test("a read the cache answers carries the same cost as the first", async () => {
  const query = "query L($id: ID!) { list(id: $id) { id items { text } } }";
  const id = (await server.app.prisma.todoList.findFirst({ where: { requester: "stored" } }))!.id;
  const first = await gql(query, { id });
  const again = await gql(query, { id });
  assert.ok(first.json.extensions.cost.requested > 50);
  assert.equal(again.json, first.json);
});

test.run();

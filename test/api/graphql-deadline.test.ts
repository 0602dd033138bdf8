// The execution deadline stops the work, not only the wait: a query within its cost whose lists
// resolve slowly gets QUERY_TIMEOUT (503, Retry-After) at the deadline, nothing beneath a list that
// resolves after it is started, and /healthz answers throughout. A mutation has no deadline. An
// answer larger than the cap is ANSWER_TOO_LARGE; under it the answer is sent as it was measured.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { isObjectType, type GraphQLFieldResolver } from "graphql";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { storeLists } from "../helpers/stored-lists.ts";
import { schema } from "../../schema/index.ts";

// Wide apart, so a loaded machine cannot blur them: a small query ends well inside the deadline,
// and the whole slow one would take six times the deadline.
const DEADLINE_MS = 1_500;
const LISTS = 60;
const STEP_MS = 150; // the k-th list's items arrive k x 150 ms after they are asked for: 9 s for all

let server: TestServer;
const restore: Array<() => void> = [];

/** Wraps one schema field's resolver for this file's tests (undone after); the server's guard wraps it again. */
function wrapField(
  typeName: string,
  fieldName: string,
  wrap: (inner: GraphQLFieldResolver<unknown, unknown>) => GraphQLFieldResolver<unknown, unknown>,
): void {
  const type = schema.getType(typeName);
  if (!isObjectType(type)) throw new Error(typeName);
  const field = type.getFields()[fieldName]!;
  const original = field.resolve!;
  field.resolve = wrap(original);
  restore.push(() => (field.resolve = original));
}

let itemsAsked = 0;
let itemsSettled = 0;
let listFieldCalls = 0;

test.before(async () => {
  wrapField("TodoList", "items", (inner) => async (...args) => {
    const k = itemsAsked++;
    await new Promise((resolve) => setTimeout(resolve, k * STEP_MS));
    try {
      return await inner(...args);
    } finally {
      itemsSettled++;
    }
  });
  wrapField("Item", "list", (inner) => (...args) => {
    listFieldCalls++;
    return inner(...args);
  });
  server = await startTestServer({
    env: { CROWS_GRAPHQL_DEADLINE_MS: String(DEADLINE_MS), CROWS_GRAPHQL_MAX_ANSWER_BYTES: "100000" },
  });
  await storeLists(server, LISTS, 50);
});
test.after(async () => {
  await server.close();
  for (const undo of restore.reverse()) undo();
});

async function waitFor(what: string, condition: () => boolean, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

test("a slow query is stopped at its deadline, stops working there, and /healthz answers meanwhile", async () => {
  const query = `{ lists(limit: ${LISTS}) { id items { id list { id } } } }`;
  const started = Date.now();
  let answered = false;
  const answer = fetch(server.url + "/graphql", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ query }),
  }).then(async (r) => {
    answered = true;
    return {
      status: r.status,
      retryAfter: r.headers.get("retry-after"),
      json: (await r.json()) as any,
      at: Date.now() - started,
    };
  });
  const health: number[] = [];
  while (!answered) {
    const t = Date.now();
    const r = await fetch(server.url + "/healthz");
    assert.is(r.status, 200);
    await r.arrayBuffer();
    health.push(Date.now() - t);
  }
  const { status, retryAfter, json, at } = await answer;
  assert.is(status, 503, JSON.stringify(json).slice(0, 300));
  assert.is(retryAfter, "5");
  assert.equal(
    json.errors.map((e: any) => e.extensions.code),
    ["QUERY_TIMEOUT"],
    "one coded error, not one per field",
  );
  assert.is(json.errors[0].extensions.limitMs, DEADLINE_MS);
  assert.ok(json.extensions.cost.requested > 0, "the cost is still reported");
  assert.ok(at < LISTS * STEP_MS, `answered at the deadline (${at} ms), not when the work would have ended`);
  assert.ok(health.length >= 2, `/healthz answered ${health.length} times while the query ran`);
  const callsAtAnswer = listFieldCalls;
  // Every list's items asked for now arrive, one after another, after the deadline: none may start
  // its children. On a loaded machine `lists` itself may outlast the deadline, and then the guard
  // asks for no list's items at all: wait for those asked, not for all sixty.
  const askedAtAnswer = itemsAsked;
  await waitFor("every list's items asked for to settle", () => itemsSettled >= askedAtAnswer);
  assert.is(itemsAsked, askedAtAnswer, "no list's items were asked for after the deadline");
  assert.ok(callsAtAnswer < LISTS * 50, `${callsAtAnswer} of ${LISTS * 50} children started before the deadline`);
  assert.is(listFieldCalls, callsAtAnswer, "nothing was started after the deadline");
  console.log(
    `  stopped at ${at} ms; ${callsAtAnswer} of ${LISTS * 50} children had run; /healthz answered ${health.length} times (slowest ${Math.max(...health)} ms)`,
  );
});

test("under the deadline the same shape answers in full, and a mutation is never cut short", async () => {
  itemsAsked = 0; // the first lists arrive at once again
  const quick = await fetch(server.url + "/graphql", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ query: "{ lists(limit: 3) { id items { id list { id } } } }" }),
  });
  const body = (await quick.json()) as any;
  assert.is(quick.status, 200, JSON.stringify(body.errors));
  assert.is(body.data.lists.length, 3);
  itemsAsked = 1000; // a list asked for now would wait 150 s: the mutation must still answer in full
  const mutation = await fetch(server.url + "/graphql", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      query:
        'mutation S($t: String!) { submitList(text: $t, requester: "deadline") { __typename ... on SubmittedList { listId } } }',
      variables: { t: "buy milk" },
    }),
  });
  const submitted = (await mutation.json()) as any;
  assert.is(submitted.data.submitList.__typename, "SubmittedList");
  assert.ok(await server.app.prisma.todoList.findUnique({ where: { id: submitted.data.submitList.listId } }), "stored");
  itemsAsked = 0;
});

test("an answer over the cap is ANSWER_TOO_LARGE; one under it is sent whole", async () => {
  itemsAsked = 0;
  const big = await fetch(server.url + "/graphql", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ query: "{ lists(limit: 60) { text } }" }),
  });
  const json = (await big.json()) as any;
  assert.is(big.status, 400);
  assert.equal(
    json.errors.map((e: any) => e.extensions.code),
    ["ANSWER_TOO_LARGE"],
  );
  assert.is(json.errors[0].extensions.limit, 100_000);
  assert.is(json.data, undefined);
  const under = await fetch(server.url + "/graphql", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ query: "{ lists(limit: 5) { text } }" }),
  });
  const text = await under.text();
  assert.is(under.status, 200);
  assert.ok(text.length > 10_000 && text.length < 100_000, `${text.length} bytes`);
  assert.is((JSON.parse(text) as any).data.lists.length, 5);
});

test.run();

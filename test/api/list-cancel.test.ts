// Cancelling a list on one instance (docs/rules.md "Cancelling a list"): a list with items in
// every stage — waiting behind the concurrency limit, in the air, waiting on the owner's triage
// and output verdicts — is cancelled; each ends once, every flight lands once, list.finished says
// cancelled and who, and nothing follows it. Scopes: a read token is refused naming write, no
// token is a 401. Finished lists are a 409 (REST) and a ConflictError (GraphQL).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { openSse, type SseClient } from "../helpers/sse.ts";
import { bearer, makeToken } from "../helpers/tokens.ts";
import { assertCancelledReplay, CANCEL_LIST_TEXT, hangingCrows } from "../helpers/cancel-checks.ts";
import { listStream } from "../../src/base/streams.ts";

const OWNER = "owner-token-for-cancel-tests-0000";
let server: TestServer;
const owner = bearer(OWNER);

test.before(async () => {
  server = await startTestServer({
    env: { CROWS_TOKEN: OWNER, CROWS_APPROVAL_WINDOW_MS: "600000", CROWS_ITEM_CONCURRENCY: "4" },
    deps: { model: hangingCrows() },
  });
});
test.after(async () => {
  await server.close();
});

const graphql = (query: string, variables: Record<string, unknown>, headers: Record<string, string>) =>
  server.request("POST", "/graphql", { query, variables }, headers);

async function replay(listId: string) {
  const rows = await server.app.log.read(listStream(listId), 0, 10_000);
  return rows.map((r) => ({ name: r.name, payload: JSON.parse(r.payload) as Record<string, any> }));
}

function on(sse: SseClient, name: string, itemId: string, extra: (d: any) => boolean = () => true) {
  return sse.waitFor((m) => m.event === name && m.data.item_id === itemId && extra(m.data), 60_000);
}

test("a list cancelled with items waiting, in the air and waiting on the owner: each ends once, list.finished says cancelled", async () => {
  const text = CANCEL_LIST_TEXT;
  const posted = await server.request("POST", "/api/lists", { text, requester: "cancel-one" }, owner);
  assert.is(posted.status, 202, posted.text);
  const listId = posted.body.list_id as string;
  const id = (n: number) => `${listId}-${n}`;
  const sse = await openSse(`${server.url}/api/events?list_id=${listId}`, { headers: owner });
  try {
    for (const n of [1, 2, 3, 4]) await on(sse, "item.triaged", id(n));
    for (const n of [1, 3]) {
      const verdict = await server.request(
        "POST",
        "/api/verdicts",
        { item_id: id(n), target: "triage", approve: true },
        owner,
      );
      assert.is(verdict.status, 204, verdict.text);
    }
    await on(sse, "crow.flying", id(1), (d) => d.crow !== "Sentry"); // in the air, and stays there
    await on(sse, "item.answered", id(3)); // its output waits on the owner
    // Items 5 and 6 wait behind the four the list works at once; 2 and 4 wait on their triage verdicts.
    const stages = await server.app.prisma.item.findMany({ where: { listId }, orderBy: { n: "asc" } });
    assert.equal(
      stages.map((i) => i.stage),
      ["working", "awaiting_triage", "awaiting_output", "awaiting_triage", "pending", "pending"],
    );

    // Scopes: no token is a 401, a read token a 403 naming write; nothing is cancelled.
    const reader = await makeToken(server, "cancel-reader", ["read"], owner);
    assert.is((await server.request("POST", `/api/lists/${listId}/cancel`)).status, 401);
    const refused = await server.request("POST", `/api/lists/${listId}/cancel`, undefined, bearer(reader.secret));
    assert.is(refused.status, 403);
    assert.match(refused.body.message, /"write"/);
    const gqlRefused = await graphql(
      "mutation($id: ID!) { cancelList(listId: $id) { __typename } }",
      { id: listId },
      bearer(reader.secret),
    );
    assert.is(gqlRefused.status, 403);
    assert.is((await server.app.prisma.todoList.findUniqueOrThrow({ where: { id: listId } })).cancelledAt, null);

    const cancelled = await server.request("POST", `/api/lists/${listId}/cancel`, undefined, owner);
    assert.is(cancelled.status, 202, cancelled.text);
    assert.is(cancelled.body.list_id, listId);
    assert.type(cancelled.body.cancelled_at, "string");
    const again = await server.request("POST", `/api/lists/${listId}/cancel`, undefined, owner);
    if (again.status === 202) assert.is(again.body.cancelled_at, cancelled.body.cancelled_at);
    else assert.is(again.status, 409, again.text); // it may have finished already: nothing left to cancel
    await sse.waitFor((m) => m.event === "list.finished", 60_000);
  } finally {
    sse.close();
  }
  await server.app.flock.settled(listId);

  const events = await replay(listId);
  const ends = assertCancelledReplay(events, [1, 2, 3, 4, 5, 6].map(id));
  assert.equal(Object.fromEntries(ends), {
    [id(1)]: "skipped:rejected",
    [id(2)]: "skipped:rejected",
    [id(3)]: "output:rejected",
    [id(4)]: "skipped:rejected",
    [id(5)]: "skipped:rejected",
    [id(6)]: "skipped:rejected",
  });
  const landed = events.filter((e) => e.name === "crow.landed" && e.payload.item_id === id(1) && !e.payload.ok);
  assert.ok(landed.length >= 1, "the flight in the air landed");
  for (const l of landed) {
    assert.match(l.payload.error, /cancelled/);
    assert.is(l.payload.tokens, 0);
  }
  // What waited on the owner was rejected by the canceller; items waiting never flew.
  for (const [n, target] of [
    [2, "triage"],
    [4, "triage"],
    [3, "output"],
  ] as const) {
    const verdict = events.find(
      (e) => e.name === "verdict" && e.payload.item_id === id(n) && e.payload.target === target,
    );
    assert.equal([verdict?.payload.verdict, verdict?.payload.actor], ["rejected", { kind: "owner" }]);
  }
  for (const n of [5, 6]) assert.not.ok(events.some((e) => e.name === "crow.flying" && e.payload.item_id === id(n)));
  assert.equal(events[events.length - 1]!.payload.actor, { kind: "owner" });
  const item3 = await server.app.prisma.item.findUniqueOrThrow({ where: { id: id(3) } });
  assert.equal([item3.stage, typeof item3.answer], ["done", "string"]); // the answer stays as streamed

  // Finished: a 409, a ConflictError, and a verdict finds nothing waiting.
  const late = await server.request("POST", `/api/lists/${listId}/cancel`, undefined, owner);
  assert.is(late.status, 409);
  assert.match(late.body.message, /cancelled and has finished/);
  const gqlLate = await graphql(
    "mutation($id: ID!) { cancelList(listId: $id) { __typename ... on ConflictError { message } } }",
    { id: listId },
    owner,
  );
  assert.is(gqlLate.body.data.cancelList.__typename, "ConflictError");
  const verdict = await server.request(
    "POST",
    "/api/verdicts",
    { item_id: id(2), target: "triage", approve: true },
    owner,
  );
  assert.is(verdict.status, 404);
  assert.is((await server.request("POST", "/api/lists/lst0000000000/cancel", undefined, owner)).status, 404);
});

test("GraphQL cancelList ends a list just posted; the list reads cancelledAt", async () => {
  const submitted = await graphql(
    'mutation { submitList(text: "HANG on the line\\nBuy bread", requester: "cancel-gql") { ... on SubmittedList { listId } } }',
    {},
    owner,
  );
  const listId = submitted.body.data.submitList.listId as string;
  const cancelled = await graphql(
    "mutation($id: ID!) { cancelList(listId: $id) { __typename ... on TodoList { id cancelledAt } } }",
    { id: listId },
    owner,
  );
  assert.is(cancelled.body.data.cancelList.__typename, "TodoList", cancelled.text);
  assert.type(cancelled.body.data.cancelList.cancelledAt, "string");
  await server.app.flock.settled(listId);
  const events = await replay(listId);
  const ends = assertCancelledReplay(events, [`${listId}-1`, `${listId}-2`]);
  assert.ok(
    [...ends.values()].every((end) => end === "skipped:rejected"),
    JSON.stringify([...ends]),
  );
});

test.run();

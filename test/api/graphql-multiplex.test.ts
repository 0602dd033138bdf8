// Several subscriptions over one connection (src/server/graphql/multiplex.ts): a POST to
// /graphql/stream whose body names operations by id streams each one's frames labelled with its id,
// resumes each from its own cursor, refuses one bad operation without ending the others, and
// refuses a malformed body with a 400 before anything opens.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { openSse } from "../helpers/sse.ts";

let server: TestServer;

test.before(async () => {
  server = await startTestServer();
  for (const [topic, i] of [
    ["list:one", 1],
    ["list:one", 2],
    ["list:two", 1],
  ] as const)
    await server.app.log.append(topic, "crow.flying", {
      list_id: topic.slice(5),
      item_id: `${topic}-${i}`,
      crow: "Pip",
    });
});
test.after(() => server.close());

const LIST_EVENTS =
  "subscription($id: ID!, $after: Int) { listEvents(listId: $id, after: $after) { seq name payload } }";

test("two list streams on one connection: each frame names its operation; each resumes from its own cursor", async () => {
  const stream = await openSse(`${server.url}/graphql/stream`, {
    json: {
      operations: {
        one: { query: LIST_EVENTS, variables: { id: "one", after: 1 } },
        two: { query: LIST_EVENTS, variables: { id: "two", after: 0 } },
      },
    },
  });
  assert.is(stream.status, 200);
  const [a, b] = await Promise.all([
    stream.waitFor((m) => m.event === "next" && m.data.id === "one"),
    stream.waitFor((m) => m.event === "next" && m.data.id === "two"),
  ]);
  assert.is(a.data.payload.data.listEvents.seq, 2, "list one resumed after its cursor 1");
  assert.is(b.data.payload.data.listEvents.seq, 1);
  // A live event reaches only its own operation.
  await server.app.log.append("list:two", "crow.landed", {
    list_id: "two",
    item_id: "two-1",
    crow: "Pip",
    ok: true,
    tokens: 3,
  });
  const live = await stream.waitFor(
    (m) => m.event === "next" && m.data.id === "two" && m.data.payload.data.listEvents.seq === 2,
  );
  assert.is(live.data.payload.data.listEvents.name, "crow.landed");
  assert.is(stream.messages().filter((m) => m.data?.id === "one").length, 1);
  stream.close();
});

test("one refused operation gets its errors and its complete; the other streams on", async () => {
  const stream = await openSse(`${server.url}/graphql/stream`, {
    json: {
      operations: {
        bad: { query: LIST_EVENTS, variables: { id: "one", after: 999 } },
        broken: { query: "subscription { nope }" },
        good: { query: LIST_EVENTS, variables: { id: "one", after: 0 } },
      },
    },
  });
  assert.is(stream.status, 200);
  const bad = await stream.waitFor((m) => m.event === "next" && m.data.id === "bad");
  assert.ok(bad.data.payload.errors?.length, JSON.stringify(bad.data));
  await stream.waitFor((m) => m.event === "complete" && m.data.id === "bad");
  const broken = await stream.waitFor((m) => m.event === "next" && m.data.id === "broken");
  assert.ok(broken.data.payload.errors?.length);
  await stream.waitFor((m) => m.event === "next" && m.data.id === "good" && m.data.payload.data.listEvents.seq === 2);
  assert.not.ok(stream.ended());
  stream.close();
});

test("a malformed multiplexed body is a 400 naming the problem, and too many operations are refused", async () => {
  const post = (json: unknown) =>
    fetch(`${server.url}/graphql/stream`, {
      method: "POST",
      headers: { accept: "text/event-stream", "content-type": "application/json" },
      body: JSON.stringify(json),
    });
  const notObject = await post({ operations: [] });
  assert.is(notObject.status, 400);
  assert.match((await notObject.json()).message, /operations/);
  const many = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`op${i}`, { query: LIST_EVENTS }]));
  const tooMany = await post({ operations: many });
  assert.is(tooMany.status, 400);
  assert.match((await tooMany.json()).message, /1 to 10/);
  const badId = await post({ operations: { "a b": { query: LIST_EVENTS } } });
  assert.is(badId.status, 400);
});

test.run();

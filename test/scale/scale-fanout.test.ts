// Two instances on one PostgreSQL and one Redis: every instance's followers see every instance's
// appends live (Redis carries the "something new" signal, the shared log the events), replay by
// Last-Event-ID works on either, and a verdict POSTed to one instance completes the item that the
// other instance is running (its waiting approval wakes on the list stream's signal).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ownerFollows } from "../helpers/owner.ts";
import { openSse } from "../helpers/sse.ts";
import { instancePair, serviceTests } from "../helpers/scale-services.ts";

const { svc, it } = serviceTests("scale-fanout");

// A and B: two instances on one PostgreSQL database and one Redis.
const pair = svc ? instancePair(svc, { CROWS_APPROVAL_WINDOW_MS: "60000" }) : undefined;

it("a list posted on A streams live on B; the owner answers on B and A's run finishes it", async () => {
  const { status, body } = await pair!.a.post("/api/lists", {
    text: "Buy milk\nWrite a haiku about crows",
    requester: "two-instances",
  });
  assert.is(status, 202);
  const listId = body.list_id as string;
  const gql = await openSse(`${pair!.b.url}/graphql`, {
    json: { query: `subscription($id: ID!) { listEvents(listId: $id) { seq name } }`, variables: { id: listId } },
  });
  // Everything after the triage approvals happens only because of verdicts POSTed to B, so B's
  // stream reaching list.finished proves both live fan-out and the cross-instance verdicts.
  const owner = await ownerFollows(pair!.b.url, listId);
  const all = await owner.finished;
  owner.sse.close();
  assert.equal(
    all.map((m) => m.id),
    all.map((_, i) => String(i + 1)),
    "one gapless sequence on B",
  );
  assert.is(all[all.length - 1]!.event, "list.finished");
  assert.ok(owner.answers.length >= 2, "the owner answered on B");
  assert.ok(
    owner.answers.every((x) => x.status === 204),
    JSON.stringify(owner.answers),
  );
  const verdicts = all.filter((m) => m.event === "verdict" && m.data.verdict === "approved");
  assert.is(verdicts.length, owner.answers.length, "each of B's verdicts reached A's waiting item");
  await pair!.a.app.flock.settled(listId);
  assert.is((await pair!.b.app.prisma.todoList.findUniqueOrThrow({ where: { id: listId } })).status, "finished");

  // GraphQL followers on B heard the same events, live.
  await gql.waitFor((m) => m.event === "next" && m.data?.data?.listEvents?.name === "list.finished", 10_000);
  const names = gql
    .messages()
    .filter((m) => m.event === "next")
    .map((m) => m.data.data.listEvents.name);
  assert.equal(
    names,
    all.map((m) => m.event),
  );
  gql.close();

  // Replay by Last-Event-ID on B (and on A) is the same bytes.
  for (const server of [pair!.b, pair!.a]) {
    const replay = await openSse(`${server.url}/api/events?list_id=${listId}`, { lastEventId: "3" });
    const replayed = await replay.waitForCount(all.length - 3);
    replay.close();
    assert.equal(
      replayed.map((m) => m.id),
      all.slice(3).map((m) => m.id),
    );
    assert.equal(
      replayed.map((m) => m.raw),
      all.slice(3).map((m) => m.raw),
    );
  }
});

it("a follower on A hears appends made on B", async () => {
  const { body } = await pair!.b.post("/api/lists", { text: "Water the plants", requester: "other-way" });
  const listId = body.list_id as string;
  const owner = await ownerFollows(pair!.a.url, listId);
  const all = await owner.finished;
  owner.sse.close();
  assert.is(all[all.length - 1]!.event, "list.finished");
  assert.ok(owner.answers.every((x) => x.status === 204));
});

test.run();

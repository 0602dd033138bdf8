// Another try, on request (docs/rules.md "Rework"): a rejected output with `rework: true` flies
// again (its crew first) with the rejected answer and the owner's reason in the prompt, and a new
// item.answered waits for approval again; at most CROWS_REWORK_TRIES per item, within the budget,
// after which the rejection stands. A rejected triage with rework asks the Sentry again. Each
// stream reads as a valid story to an docs/contract.md-only client (test/helpers/contract-story.ts).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { ownerFollows, type OwnerAnswer } from "../helpers/owner.ts";
import { openSse } from "../helpers/sse.ts";
import { readStory } from "../helpers/contract-story.ts";
import { startFakeOpenAI, defaultScript, type FakeCall } from "../helpers/fake-openai.ts";

async function run(
  server: TestServer,
  text: string,
  decide: (target: "triage" | "output", n: number) => boolean | OwnerAnswer,
) {
  const res = await server.post("/api/lists", { text, requester: "rework" });
  assert.is(res.status, 202, res.text);
  const listId = res.body.list_id as string;
  const asked = { triage: 0, output: 0 };
  const owner = await ownerFollows(
    server.url,
    listId,
    { decide: (target) => decide(target, ++asked[target]) },
    120_000,
  );
  const events = await owner.finished;
  owner.sse.close();
  return { listId, itemId: `${listId}-1`, events, answers: owner.answers };
}

const named = (events: any[], name: string, itemId: string) =>
  events.filter((e) => e.event === name && e.data.item_id === itemId);

test("a rejected output asked to be reworked flies again with the answer and the reason, and lands", async () => {
  const calls: FakeCall[] = [];
  const fake = await startFakeOpenAI((call, index) => {
    calls.push(call);
    return defaultScript(call, index);
  });
  const server = await startTestServer({
    env: { CROWS_MODEL: "openai-compatible:fake", CROWS_MODEL_BASE_URL: fake.url, CROWS_MODEL_API_KEY: "k" },
  });
  try {
    const reason = "Shorter, and name the bakery's street.";
    const { itemId, events, answers } = await run(server, "Write a haiku about crows", (target, n) =>
      target === "output" && n === 1 ? { approve: false, reason, rework: true } : true,
    );
    assert.ok(
      answers.every((a) => a.status === 204),
      JSON.stringify(answers),
    );
    const story = readStory(events);
    assert.equal(story.problems, [], story.problems.join("\n"));
    const answered = named(events, "item.answered", itemId);
    assert.is(answered.length, 2, "answered twice: the first try and the rework");
    const verdicts = named(events, "verdict", itemId).filter((e) => e.data.target === "output");
    assert.equal(
      verdicts.map((e) => [e.data.verdict, e.data.rework ?? null, e.data.reason ?? null]),
      [
        ["rejected", true, reason],
        ["approved", null, null],
      ],
    );
    assert.equal(Object.keys(verdicts[0]!.data).slice(-3), ["actor", "reason", "rework"]);
    // The order an docs/contract.md client reads: answered, rejected, the crew flies again, answered, approved.
    const labels = story.items.get(itemId)!.filter((l) => !l.startsWith("trust"));
    const fromFirstAnswer = labels.slice(labels.indexOf("item.answered"));
    assert.equal(fromFirstAnswer, [
      "item.answered",
      "verdict:output:rejected",
      "crow.flying",
      "crow.landed",
      "item.answered",
      "verdict:output:approved",
    ]);
    // Its crew first: the crow who answered flies the rework.
    const flights = named(events, "crow.flying", itemId).filter((e) => e.data.crow !== "Sentry");
    assert.is(flights.at(-1)!.data.crow, answered[0]!.data.crows[0]);
    // The prompt carries the rejected answer and the reason.
    const reworkCall = calls.find((c) => /asked for another try/.test(c.prompt));
    assert.ok(reworkCall, "a rework prompt was sent");
    assert.ok(reworkCall!.prompt.includes(answered[0]!.data.answer), "with the rejected answer");
    assert.ok(reworkCall!.prompt.includes(reason), "with the owner's reason");
    // Trust: the rejection demoted (or held) the crow, the approved rework counts as an approval.
    const history = (await server.get(`/api/trust/history?limit=100`)).body.history.filter(
      (e: any) => e.subject === itemId && e.holder !== "flock",
    );
    assert.equal(
      history.map((e: any) => e.verdict),
      ["rejected", "approved"],
    );
    // The row: opened again one round higher, decided approved; GraphQL shows the round.
    const gql = await server.post("/graphql", {
      query: `{ approvals { itemId target status round rework } }`,
    });
    const out = gql.body.data.approvals.find((a: any) => a.itemId === itemId && a.target === "output");
    assert.equal(out, { itemId, target: "output", status: "approved", round: 1, rework: null });
    const item = await server.app.log.state.item(itemId);
    assert.is(item?.tries, 1);
    assert.is(item?.rework, null);
  } finally {
    await server.close();
    await fake.close();
  }
});

test("out of tries: after CROWS_REWORK_TRIES reworks the rejection stands", async () => {
  const server = await startTestServer({ env: { CROWS_REWORK_TRIES: "1" } });
  try {
    const { itemId, events } = await run(server, "Draft a note to the neighbours about the party", (target) =>
      target === "output" ? { approve: false, reason: "Warmer, please.", rework: true } : true,
    );
    const story = readStory(events);
    assert.equal(story.problems, [], story.problems.join("\n"));
    assert.is(named(events, "item.answered", itemId).length, 2, "one rework, then no more");
    const verdicts = named(events, "verdict", itemId).filter((e) => e.data.target === "output");
    assert.equal(
      verdicts.map((e) => [e.data.verdict, e.data.rework ?? null]),
      [
        ["rejected", true],
        ["rejected", null],
      ],
    );
    const row = await server.app.prisma.approval.findUnique({ where: { itemId_target: { itemId, target: "output" } } });
    assert.is(row?.rework, "out_of_tries");
    assert.is(row?.round, 1);
    assert.is((await server.app.log.state.item(itemId))?.stage, "done");
  } finally {
    await server.close();
  }
});

test("stopped by the budget: a rework asked for on a list with its budget spent does not fly", async () => {
  const server = await startTestServer();
  try {
    const res = await server.post("/api/lists", { text: "Plan a weekend trip to the coast", requester: "budget" });
    const listId = res.body.list_id as string;
    const itemId = `${listId}-1`;
    const sse = await openSse(`${server.url}/api/events?list_id=${listId}`);
    await sse.waitFor((m) => m.event === "item.triaged", 60_000);
    assert.is((await server.post("/api/verdicts", { item_id: itemId, target: "triage", approve: true })).status, 204);
    await sse.waitFor((m) => m.event === "item.answered", 60_000);
    // The budget is spent exactly: no flight may start.
    const list = await server.app.prisma.todoList.findUniqueOrThrow({ where: { id: listId } });
    await server.app.prisma.todoList.update({ where: { id: listId }, data: { tokenBudget: list.tokensUsed } });
    const rejected = await server.post("/api/verdicts", {
      item_id: itemId,
      target: "output",
      approve: false,
      reason: "Cheaper.",
      rework: true,
    });
    assert.is(rejected.status, 204, rejected.text);
    const finished = await sse.waitFor((m) => m.event === "list.finished", 60_000);
    const events = sse.messages().slice(0, sse.messages().indexOf(finished) + 1);
    sse.close();
    assert.equal(readStory(events).problems, []);
    const verdict = named(events, "verdict", itemId).find((e) => e.data.target === "output")!;
    assert.not.ok("rework" in verdict.data, "not granted");
    assert.is(verdict.data.reason, "Cheaper.");
    assert.is(named(events, "item.answered", itemId).length, 1);
    const row = await server.app.prisma.approval.findUnique({ where: { itemId_target: { itemId, target: "output" } } });
    assert.is(row?.rework, "out_of_budget");
  } finally {
    await server.close();
  }
});

test("a rejected triage with rework asks the Sentry again, with its call and the reason", async () => {
  const server = await startTestServer();
  try {
    const { itemId, events } = await run(server, "Brainstorm names for a bakery", (target, n) =>
      target === "triage" && n === 1
        ? { approve: false, reason: "One crow is enough here: solo.", rework: true }
        : true,
    );
    const story = readStory(events);
    assert.equal(story.problems, [], story.problems.join("\n"));
    const triaged = named(events, "item.triaged", itemId);
    assert.is(triaged.length, 2);
    assert.is(triaged[0]!.data.mode, "murder");
    assert.is(triaged[1]!.data.mode, "solo", "the offline Sentry follows the mode the reason names");
    const sentryFlights = named(events, "crow.flying", itemId).filter((e) => e.data.crow === "Sentry");
    assert.is(sentryFlights.length, 2);
    const labels = story.items.get(itemId)!.filter((l) => !l.startsWith("trust"));
    assert.equal(labels.slice(0, 8), [
      "crow.flying",
      "crow.landed",
      "item.triaged",
      "verdict:triage:rejected",
      "crow.flying",
      "crow.landed",
      "item.triaged",
      "verdict:triage:approved",
    ]);
    assert.is(named(events, "item.skipped", itemId).length, 0, "not skipped");
    assert.is(named(events, "item.answered", itemId).length, 1);
  } finally {
    await server.close();
  }
});

test("bad rework requests are a 400: not a boolean, or with an approval", async () => {
  const server = await startTestServer();
  try {
    const res = await server.post("/api/lists", { text: "Buy milk", requester: "bad-rework" });
    const itemId = `${res.body.list_id}-1`;
    const sse = await openSse(`${server.url}/api/events?list_id=${res.body.list_id}`);
    await sse.waitFor((m) => m.event === "item.triaged", 60_000);
    for (const [body, message] of [
      [{ approve: false, rework: "yes" }, /"rework" must be true or false/],
      [{ approve: false, rework: 1 }, /"rework" must be true or false/],
      [{ approve: true, rework: true }, /rejection/],
    ] as const) {
      const r = await server.post("/api/verdicts", { item_id: itemId, target: "triage", ...body });
      assert.is(r.status, 400, r.text);
      assert.match(r.body.message, message);
    }
    assert.is((await server.app.log.state.approval(itemId, "triage"))?.status, "pending");
    sse.close();
  } finally {
    await server.close();
  }
});

test("GraphQL: postVerdict(rework: true) sends the output back; the Approval says granted", async () => {
  const server = await startTestServer();
  try {
    const res = await server.post("/api/lists", { text: "Write a limerick about a cat", requester: "gql-rework" });
    const listId = res.body.list_id as string;
    const itemId = `${listId}-1`;
    const sse = await openSse(`${server.url}/api/events?list_id=${listId}`);
    await sse.waitFor((m) => m.event === "item.triaged", 60_000);
    await server.post("/api/verdicts", { item_id: itemId, target: "triage", approve: true });
    await sse.waitFor((m) => m.event === "item.answered", 60_000);
    const r = await server.post("/graphql", {
      query: `mutation($itemId: ID!) { postVerdict(itemId: $itemId, target: output, approve: false, rework: true, reason: "Funnier.") {
        __typename ... on Approval { status rework reason round } } }`,
      variables: { itemId },
    });
    assert.not.ok(r.body.errors, r.text);
    assert.equal(r.body.data.postVerdict, {
      __typename: "Approval",
      status: "rejected",
      rework: "granted",
      reason: "Funnier.",
      round: 0,
    });
    await sse.waitFor(
      (m) => m.event === "item.answered" && sse.messages().filter((x) => x.event === "item.answered").length === 2,
      60_000,
    );
    const row = await server.app.log.state.approval(itemId, "output");
    assert.equal([row?.status, row?.round], ["pending", 1]);
    sse.close();
  } finally {
    await server.close();
  }
});

test.run();

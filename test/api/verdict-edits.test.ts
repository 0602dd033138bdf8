// Edits before yes (docs/rules.md "Edits"): an approved triage with changes (mode, task type,
// subtasks) is the triage the work follows; an approved output with the owner's own text makes
// that text the item's answer. Each edit is kept ({before, after}, with who) on the approval and on
// the verdict, appended last; an edited approval counts but holds the streak. A list with an edit
// and a rework still reads as a valid story to an docs/contract.md-only client.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { ownerFollows, type OwnerAnswer } from "../helpers/owner.ts";
import { openSse } from "../helpers/sse.ts";
import { readStory } from "../helpers/contract-story.ts";

let server: TestServer;
let lists = 0;
test.before(async () => {
  server = await startTestServer();
});
test.after(async () => {
  await server.close();
});

async function run(text: string, decide: (target: "triage" | "output", itemId: string) => boolean | OwnerAnswer) {
  const res = await server.post("/api/lists", { text, requester: `edits-${++lists}` });
  assert.is(res.status, 202, res.text);
  const listId = res.body.list_id as string;
  const owner = await ownerFollows(server.url, listId, { decide: (t, m) => decide(t, m.data.item_id) }, 120_000);
  const events = await owner.finished;
  owner.sse.close();
  assert.ok(
    owner.answers.every((a) => a.status === 204),
    JSON.stringify(owner.answers),
  );
  return { listId, events };
}

const of = (events: any[], name: string, itemId: string) =>
  events.filter((e) => e.event === name && e.data.item_id === itemId);

test("an edited triage is the one the work follows, and the edit is kept and shown", async () => {
  const subtasks = ["Names that mention bread", "Names that mention the street"];
  const { listId, events } = await run("Brainstorm names for a bakery", (target) =>
    target === "triage" ? { approve: true, edit: { mode: "split", subtasks, task_type: "writing" } } : true,
  );
  const itemId = `${listId}-1`;
  assert.is(of(events, "item.triaged", itemId)[0]!.data.mode, "murder", "the Sentry's call, as announced");
  const verdict = of(events, "verdict", itemId).find((e) => e.data.target === "triage")!.data;
  assert.is(verdict.verdict, "approved");
  assert.is(Object.keys(verdict).at(-1), "edited");
  assert.equal(verdict.edited.after, { mode: "split", task_type: "writing", subtasks });
  assert.is(verdict.edited.before.mode, "murder");
  // The work follows the edit: one crow per subtask, then the Elder merges.
  const crows = of(events, "crow.flying", itemId)
    .map((e) => e.data.crow)
    .filter((c) => c !== "Sentry");
  assert.is(crows.filter((c) => c !== "Elder").length, 2);
  assert.ok(crows.includes("Elder"));
  const item = await server.app.log.state.item(itemId);
  assert.equal([item?.mode, item?.taskType, JSON.parse(item!.subtasks)], ["split", "writing", subtasks]);
  const gql = await server.post("/graphql", { query: "{ approvals { itemId target edit decidedAt } }" });
  const row = gql.body.data.approvals.find((a: any) => a.itemId === itemId && a.target === "triage");
  assert.equal(row.edit.after, { mode: "split", task_type: "writing", subtasks });
  assert.equal(readStory(events).problems, []);
});

test("an edited output: the owner's text is the answer; the approval counts but holds the streak", async () => {
  const mine = "Dear plumber, thank you — the sink is dry at last. Ana";
  const { listId, events } = await run("Write a thank-you note to the plumber", (target) =>
    target === "output" ? { approve: true, edit: { answer: `  ${mine}  ` } } : true,
  );
  const itemId = `${listId}-1`;
  const answered = of(events, "item.answered", itemId)[0]!.data;
  const verdict = of(events, "verdict", itemId).find((e) => e.data.target === "output")!.data;
  assert.equal(verdict.edited, { before: { answer: answered.answer }, after: { answer: mine } });
  assert.is((await server.app.log.state.item(itemId))?.answer, mine);
  const gql = await server.post("/graphql", { query: "{ approvals { itemId target edit item { answer } } }" });
  const row = gql.body.data.approvals.find((a: any) => a.itemId === itemId && a.target === "output");
  assert.is(row.item.answer, mine, "GraphQL reads the owner's text as the answer");
  assert.equal(row.edit.after, { answer: mine });
  // Trust: an approval entry for each crow, with its streak held at 0.
  const history = (await server.get("/api/trust/history?limit=100")).body.history.filter(
    (e: any) => e.subject === itemId && e.holder !== "flock",
  );
  assert.equal(
    history.map((e: any) => [e.verdict, e.from, e.to]),
    answered.crows.map(() => ["approved", 0, 0]),
  );
  const ledger = (await server.get("/api/trust")).body.ledger;
  for (const crow of answered.crows) {
    const record = ledger.find((r: any) => r.holder === crow && r.task_type === verdict.task_type);
    if (record) assert.is(record.streak, 0);
  }
  assert.equal(readStory(events).problems, []);
});

test("bad edits are a 400 and decide nothing", async () => {
  const res = await server.post("/api/lists", { text: "Research espresso machines", requester: `edits-${++lists}` });
  const listId = res.body.list_id as string;
  const itemId = `${listId}-1`;
  const sse = await openSse(`${server.url}/api/events?list_id=${listId}`);
  await sse.waitFor((m) => m.event === "item.triaged", 60_000);
  const cases: Array<[object, RegExp]> = [
    [{ approve: false, edit: { mode: "solo" } }, /approval/],
    [{ approve: true, edit: "solo" }, /must be an object/],
    [{ approve: true, edit: { answer: "x" } }, /takes "mode", "task_type", "subtasks"/],
    [{ approve: true, edit: { mode: "conspiracy" } }, /solo, split, murder/],
    [{ approve: true, edit: { task_type: "gardening" } }, /task type/],
    [{ approve: true, edit: { mode: "split", subtasks: ["only one"] } }, /2 to 4/],
    [{ approve: true, edit: { mode: "solo", subtasks: ["a", "b"] } }, /no subtasks/],
    [{ approve: true, edit: { subtasks: ["", "b"] } }, /1 to 2,000/],
    [{ approve: true, edit: {} }, /nothing to change/],
  ];
  for (const [body, message] of cases) {
    const r = await server.post("/api/verdicts", { item_id: itemId, target: "triage", ...body });
    assert.is(r.status, 400, `${JSON.stringify(body)}: ${r.text}`);
    assert.match(r.body.message, message);
  }
  assert.is((await server.app.log.state.approval(itemId, "triage"))?.status, "pending");
  assert.is((await server.app.log.state.item(itemId))?.mode === "split" ? "changed" : "kept", "kept");
  sse.close();
});

test("a list with an edit and a rework reads as a valid story to an docs/contract.md-only client", async () => {
  let reworked = false;
  const { listId, events } = await run("Buy milk\nWrite a haiku about crows", (target, itemId) => {
    if (itemId.endsWith("-1") && target === "output") return { approve: true, edit: { answer: "Bought 2 litres." } };
    if (itemId.endsWith("-2") && target === "output" && !reworked) {
      reworked = true;
      return { approve: false, reason: "More crows in it.", rework: true };
    }
    return true;
  });
  const story = readStory(events);
  assert.equal(story.problems, [], story.problems.join("\n"));
  assert.is(of(events, "item.answered", `${listId}-2`).length, 2);
  assert.is(of(events, "item.answered", `${listId}-1`).length, 1);
});

test.run();

// A reason with a verdict (docs/rules.md "Reasons"): optional, at most 1,000 characters after
// trimming, over REST, GraphQL and the decide link; stored with the approval and appended last to
// the verdict event (after the actor; absent when none was given), and shown in the trust history,
// the audit, the exports and the approval.decided webhook. Bad reasons are a 400 naming the limit.
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { TestServer } from "../helpers/server.ts";
import { startFollowedList, startSubscribedServer } from "../helpers/subscribed-server.ts";
import type { SseClient } from "../helpers/sse.ts";
import type { Receiver } from "../helpers/webhook-receiver.ts";
import { csvObjects } from "../helpers/csv.ts";

const ENV = { CROWS_WEBHOOK_ALLOW_PRIVATE: "1", CROWS_WEBHOOK_POLL_S: "0.05" };

let server: TestServer;
let receiver: Receiver;
let lists = 0;

test.before(async () => {
  ({ server, receiver } = await startSubscribedServer(ENV));
});
test.after(async () => {
  await server.close();
  await receiver.close();
});

const startList = (text: string) => startFollowedList(server, text, `reasons-${++lists}`);

const waitEvent = (sse: SseClient, name: string, itemId: string, nth = 1) =>
  sse.waitFor(
    (m) =>
      m.event === name && m.data.item_id === itemId && sse.messages().filter((x) => x.event === name).length >= nth,
    60_000,
  );

const verdictOf = (sse: SseClient, itemId: string, target: string) =>
  sse.waitFor((m) => m.event === "verdict" && m.data.item_id === itemId && m.data.target === target, 60_000);

test("a reason rides each verdict: on the event (after the actor), the approval, the ledger, the audit, the exports and the webhook", async () => {
  const { listId, sse } = await startList("Write a haiku about crows");
  const itemId = `${listId}-1`;
  await waitEvent(sse, "item.triaged", itemId);
  const triageReason = "  Solo is right: one short poem.  ";
  const approve = await server.post("/api/verdicts", {
    item_id: itemId,
    target: "triage",
    approve: true,
    reason: triageReason,
  });
  assert.is(approve.status, 204, approve.text);
  await waitEvent(sse, "item.answered", itemId);
  const outputReason = 'Too long, and "crows" should rhyme, 🐦‍⬛ — try again, shorter.';
  const reject = await server.post("/api/verdicts", {
    item_id: itemId,
    target: "output",
    approve: false,
    reason: outputReason,
  });
  assert.is(reject.status, 204, reject.text);
  await sse.waitFor((m) => m.event === "list.finished", 60_000);
  sse.close();

  // The event: the reason trimmed, appended after the actor, the contract's fields untouched.
  const triage = (await verdictOf(sse, itemId, "triage")).data;
  const output = (await verdictOf(sse, itemId, "output")).data;
  assert.equal(Object.keys(triage), ["list_id", "item_id", "target", "verdict", "ts", "actor", "reason"]);
  assert.is(triage.reason, triageReason.trim());
  assert.is(output.verdict, "rejected");
  assert.is(output.reason, outputReason);
  assert.equal(output.actor, { kind: "owner" });
  // trust.changed in the verdict's transaction carries no reason: the verdict says why.
  for (const m of sse.messages().filter((e) => e.event === "trust.changed"))
    assert.is(Object.keys(m.data).at(-1), "actor", "trust.changed keeps the actor last");

  // The approval rows over GraphQL.
  const gql = await server.post("/graphql", {
    query: `{ approvals { itemId target status reason } }`,
  });
  const rows = gql.body.data.approvals.filter((a: any) => a.itemId === itemId);
  assert.equal(
    rows.map((a: any) => [a.target, a.status, a.reason]),
    [
      ["triage", "approved", triageReason.trim()],
      ["output", "rejected", outputReason],
    ],
  );

  // The ledger: REST shows the reason where one was given, GraphQL always (null when none).
  const history = (await server.get(`/api/trust/history?limit=100`)).body.history as any[];
  const mine = history.filter((e) => e.subject === itemId);
  assert.ok(mine.length >= 2, "the flock's and each crow's entries");
  for (const e of mine) assert.is(e.reason, e.holder === "flock" ? triageReason.trim() : outputReason);
  const older = history.find((e) => e.subject !== itemId && e.reason === undefined);
  if (older) assert.not.ok("reason" in older, "absent, not null, when none was given");
  const gqlHistory = await server.post("/graphql", {
    query: `{ trustHistory(holder: "flock", last: 50) { edges { node { subject verdict reason } } } }`,
  });
  assert.not.ok(gqlHistory.body.errors, gqlHistory.text);
  const nodes = gqlHistory.body.data.trustHistory.edges.map((e: any) => e.node);
  assert.ok(nodes.some((n: any) => n.subject === itemId && n.reason === triageReason.trim()));

  // The audit: the verdict is listed with its reason in the payload.
  const audit = await server.get("/api/audit?kind=verdict&limit=50");
  assert.is(audit.status, 200, audit.text);
  const audited = audit.body.entries.filter((e: any) => e.payload.item_id === itemId);
  assert.equal(audited.map((e: any) => e.payload.reason).sort(), [outputReason, triageReason.trim()].sort());

  // The exports: the events carry the whole payload; the CSVs take the reason as a last column on request.
  const events = await server.get(`/api/export/events?stream=list:${listId}`);
  const lines = events.text
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  assert.equal(
    lines.filter((l) => l.name === "verdict").map((l) => l.payload.reason),
    [triageReason.trim(), outputReason],
  );
  const verdicts = csvObjects((await server.get("/api/export/verdicts?with=reason")).text);
  assert.is(verdicts.header.at(-1), "reason");
  const csvMine = verdicts.rows.filter((r) => r.item_id === itemId);
  assert.equal(
    csvMine.map((r) => r.reason),
    [triageReason.trim(), outputReason],
  );
  const plain = (await server.get("/api/export/verdicts")).text.split("\r\n")[0];
  assert.is(plain, "event_id,ts,list_id,item_id,target,verdict,actor,actor_token_id,actor_token_name");
  const trustCsv = csvObjects((await server.get("/api/export/trust-history?with=reason")).text);
  assert.ok(
    trustCsv.rows.some((r) => r.subject === itemId && r.holder === "flock" && r.reason === triageReason.trim()),
  );
  assert.is((await server.get("/api/export/verdicts?with=everything")).status, 400);

  // The webhook: approval.decided carries the reason, signed as ever.
  await receiver.waitFor(
    (r) => r.filter((d) => d.body.type === "approval.decided" && d.body.data.item_id === itemId).length >= 2,
    60_000,
  );
  const decidedHooks = receiver.received.filter(
    (d) => d.body.type === "approval.decided" && d.body.data.item_id === itemId,
  );
  assert.equal(decidedHooks.map((d) => d.body.data.reason).sort(), [outputReason, triageReason.trim()].sort());
  assert.equal(receiver.unverified, []);
});

test("no reason, null, or only spaces: the verdict has no reason field and the row keeps null", async () => {
  for (const reason of [undefined, null, "   \n\t "]) {
    const { listId, sse } = await startList("Buy milk");
    const itemId = `${listId}-1`;
    await waitEvent(sse, "item.triaged", itemId);
    const body: Record<string, unknown> = { item_id: itemId, target: "triage", approve: false };
    if (reason !== undefined) body.reason = reason;
    const res = await server.post("/api/verdicts", body);
    assert.is(res.status, 204, res.text);
    const verdict = (await verdictOf(sse, itemId, "triage")).data;
    assert.not.ok("reason" in verdict, `reason ${JSON.stringify(reason)}: no field`);
    assert.is(Object.keys(verdict).at(-1), "actor");
    const row = await server.app.prisma.approval.findFirst({ where: { itemId, target: "triage" } });
    assert.is(row?.reason, null);
    sse.close();
  }
});

test("a reason past 1,000 characters, or not text, is a 400 naming the limit; the approval still waits", async () => {
  const { listId, sse } = await startList("Plan a picnic");
  const itemId = `${listId}-1`;
  await waitEvent(sse, "item.triaged", itemId);
  const cases: Array<[unknown, RegExp]> = [
    ["x".repeat(1001), /1,001 characters; at most 1,000/],
    [`${"é".repeat(1000)}!`, /at most 1,000/],
    ["🐦".repeat(1001), /1,001 characters/], // counted in characters, not UTF-16 units
    [42, /"reason" must be text/],
    [["why"], /"reason" must be text/],
    [{ text: "why" }, /"reason" must be text/],
  ];
  for (const [reason, message] of cases) {
    const res = await server.post("/api/verdicts", { item_id: itemId, target: "triage", approve: false, reason });
    assert.is(res.status, 400, `${JSON.stringify(reason).slice(0, 30)}: ${res.text}`);
    assert.match(res.body.message, message);
  }
  assert.is((await server.app.log.state.approval(itemId, "triage"))?.status, "pending");
  // Exactly the limit, in characters that take two UTF-16 units each, and padded with spaces: taken.
  const longest = "🐦".repeat(1000);
  const ok = await server.post("/api/verdicts", {
    item_id: itemId,
    target: "triage",
    approve: true,
    reason: `  ${longest}  `,
  });
  assert.is(ok.status, 204, ok.text);
  assert.is((await verdictOf(sse, itemId, "triage")).data.reason, longest);
  sse.close();
});

test("GraphQL postVerdict takes a reason and shows it on the Approval; too long is bad_input", async () => {
  const { listId, sse } = await startList("Draft a note to the neighbours");
  const itemId = `${listId}-1`;
  await waitEvent(sse, "item.triaged", itemId);
  const mutation = `mutation($itemId: ID!, $reason: String) {
    postVerdict(itemId: $itemId, target: triage, approve: true, reason: $reason) {
      __typename ... on Approval { status reason } ... on NotFoundError { message } ... on BadInputError { message }
    } }`;
  const tooLong = await server.post("/graphql", { query: mutation, variables: { itemId, reason: "y".repeat(1001) } });
  assert.not.ok(tooLong.body.errors, tooLong.text);
  assert.is(tooLong.body.data.postVerdict.__typename, "BadInputError");
  assert.match(tooLong.body.data.postVerdict.message, /at most 1,000/);
  const res = await server.post("/graphql", { query: mutation, variables: { itemId, reason: "Looks right." } });
  assert.not.ok(res.body.errors, res.text);
  assert.equal(res.body.data.postVerdict, { __typename: "Approval", status: "approved", reason: "Looks right." });
  assert.is((await verdictOf(sse, itemId, "triage")).data.reason, "Looks right.");
  sse.close();
});

test("a decide link takes a reason from its page's form; a reason too long decides nothing", async () => {
  const { listId, sse } = await startList("Water the plants\nCall the bank");
  const first = `${listId}-1`;
  await receiver.waitFor(
    (r) => r.filter((d) => d.body.type === "approval.requested" && d.body.data.list === listId).length >= 2,
    60_000,
  );
  const requested = receiver.received
    .filter((d) => d.body.type === "approval.requested" && d.body.data.list === listId)
    .map((d) => d.body.data);
  const one = requested.find((d) => d.item === first)!;
  const other = requested.find((d) => d.item !== first)!;
  const press = (url: string, form: Record<string, string>) =>
    fetch(url, {
      method: "POST",
      headers: { origin: new URL(url).origin, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(form).toString(),
    }).then(async (r) => ({ status: r.status, text: await r.text() }));

  const page = await (await fetch(one.reject_url)).text();
  assert.match(page, /<textarea name="reason"/);
  assert.match(page, /\(about (9|10) minutes left; silence then counts as no\)/, "the page shows the time left");
  const approvePage = await (await fetch(one.approve_url)).text();
  assert.match(approvePage, /<form method="post"><button type="submit">Approve<\/button><\/form>/);
  assert.match(approvePage, /Approve with this reason/);

  const long = await press(one.reject_url, { reason: "z".repeat(1001) });
  assert.is(long.status, 400, long.text);
  assert.match(long.text, /at most 1,000/);
  assert.is((await server.app.log.state.approval(first, "triage"))?.status, "pending");

  const done = await press(one.reject_url, { reason: "Not today <b>please</b>" });
  assert.is(done.status, 200, done.text);
  const verdict = (await verdictOf(sse, first, "triage")).data;
  assert.is(verdict.verdict, "rejected");
  assert.is(verdict.reason, "Not today <b>please</b>");
  assert.is(verdict.actor.kind, "link");
  // The bare button still decides, with no reason.
  const bare = await press(other.approve_url, {});
  assert.is(bare.status, 200, bare.text);
  const otherVerdict = (await verdictOf(sse, other.item, "triage")).data;
  assert.not.ok("reason" in otherVerdict);
  sse.close();
});

test("a decide link asks for another try: the output flies again, and the first try's links are used up", async () => {
  const { listId, sse } = await startList("Write a thank-you note to the plumber");
  const itemId = `${listId}-1`;
  await waitEvent(sse, "item.triaged", itemId);
  assert.is((await server.post("/api/verdicts", { item_id: itemId, target: "triage", approve: true })).status, 204);
  const requestedOutput = () =>
    receiver.received
      .filter(
        (d) => d.body.type === "approval.requested" && d.body.data.item === itemId && d.body.data.target === "output",
      )
      .map((d) => d.body.data);
  await receiver.waitFor(() => requestedOutput().length >= 1, 60_000);
  const [firstTry] = requestedOutput();
  const page = await (await fetch(firstTry.reject_url)).text();
  assert.match(page, /<input type="checkbox" name="rework" value="1">/);
  const pressed = await fetch(firstTry.reject_url, {
    method: "POST",
    headers: { origin: new URL(firstTry.reject_url).origin, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ reason: "Mention the leak under the sink.", rework: "1" }).toString(),
  });
  assert.is(pressed.status, 200, await pressed.text());
  const verdict = (await verdictOf(sse, itemId, "output")).data;
  assert.equal(
    [verdict.verdict, verdict.reason, verdict.rework],
    ["rejected", "Mention the leak under the sink.", true],
  );
  await waitEvent(sse, "item.answered", itemId, 2);
  await receiver.waitFor(() => requestedOutput().length >= 2, 60_000);
  const secondTry = requestedOutput()[1]!;
  assert.ok(secondTry.deadline !== firstTry.deadline, "the second try has a deadline of its own");
  // The first try's approve link cannot decide the second try.
  const stale = await fetch(firstTry.approve_url, {
    method: "POST",
    headers: { origin: new URL(firstTry.approve_url).origin, "content-type": "application/x-www-form-urlencoded" },
  });
  assert.is(stale.status, 409, await stale.text());
  assert.is((await server.app.log.state.approval(itemId, "output"))?.status, "pending");
  const fresh = await fetch(secondTry.approve_url, {
    method: "POST",
    headers: { origin: new URL(secondTry.approve_url).origin, "content-type": "application/x-www-form-urlencoded" },
  });
  assert.is(fresh.status, 200, await fresh.text());
  await sse.waitFor((m) => m.event === "list.finished", 60_000);
  sse.close();
});

test.run();

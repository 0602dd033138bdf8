// The reminder before an approval's window closes (docs/rules.md "Reminders"): one approval.reminder
// on the list's stream and as a webhook of its own type, with the decide links, when
// CROWS_APPROVAL_REMINDER_MS before its deadline; none for an approval decided before its
// time, none when the decision lands between the timer and the send, one per approval round (a
// rework's round gets its own). The reminder's reject link takes a reason and a request for another
// try (the Sentry is asked again), and the new round's approve link takes a reason.
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { TestServer } from "../helpers/server.ts";
import { startFollowedList, startSubscribedServer } from "../helpers/subscribed-server.ts";
import type { SseClient } from "../helpers/sse.ts";
import type { Receiver } from "../helpers/webhook-receiver.ts";
import { ApprovalDesk, approvalSubject } from "../../src/flock/approvals.ts";
import type { TrustLedger } from "../../src/flock/trust.ts";
import { listStream } from "../../src/base/streams.ts";
import { readStory } from "../helpers/contract-story.ts";

// A 12 s window, reminded with half of it left: 6 s to decide an approval before its reminder.
const ENV = {
  CROWS_WEBHOOK_ALLOW_PRIVATE: "1",
  CROWS_WEBHOOK_POLL_S: "0.05",
  CROWS_APPROVAL_WINDOW_MS: "12000",
  CROWS_APPROVAL_REMINDER_MS: "6000",
};

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

const startList = (text: string) => startFollowedList(server, text, `reminders-${++lists}`);

const press = (url: string, form: Record<string, string> = {}) =>
  fetch(url, {
    method: "POST",
    headers: { origin: new URL(url).origin, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(form).toString(),
  }).then(async (r) => ({ status: r.status, text: await r.text() }));

const delivered = (type: string, itemId: string, target: string) =>
  receiver.received
    .filter((d) => d.body.type === type && d.body.data.item === itemId && d.body.data.target === target)
    .map((d) => d.body.data);

/** The list's approval.reminder events in the log, as `<item> <target> <round>`. */
const loggedReminders = async (listId: string) =>
  (await server.app.log.read(listStream(listId)))
    .filter((e) => e.name === "approval.reminder")
    .map((e) => JSON.parse(e.payload))
    .map((p) => `${p.item_id} ${p.target} ${p.round}`);

/** Cancels the list and waits for its end: after it, none of its approvals waits, so no reminder can follow. */
async function finish(listId: string, sse: SseClient): Promise<void> {
  const cancelled = await server.post(`/api/lists/${listId}/cancel`, {});
  assert.ok([200, 202, 204, 409].includes(cancelled.status), cancelled.text);
  await sse.waitFor((m) => m.event === "list.finished", 60_000);
  sse.close();
}

test("a reminder at its time with the decide links; none for an approval decided first; its links take a reason and another try", async () => {
  const { listId, sse } = await startList("Buy milk\nWrite a haiku about crows");
  const [first, second] = [`${listId}-1`, `${listId}-2`];
  await sse.waitFor((m) => m.event === "item.triaged" && m.data.item_id === first, 60_000);
  assert.is((await server.post("/api/verdicts", { item_id: first, target: "triage", approve: true })).status, 204);

  await receiver.waitFor(() => delivered("approval.reminder", second, "triage").length >= 1, 60_000, "the reminder");
  const [requested] = delivered("approval.requested", second, "triage");
  const [reminder] = delivered("approval.reminder", second, "triage");
  assert.is(reminder.text, "Write a haiku about crows");
  assert.is(reminder.list, listId);
  assert.is(reminder.round, 0);
  assert.is(reminder.deadline, requested.deadline, "the reminder names the window it reminds of");
  assert.match(reminder.approve_url, /\/decide\//);
  assert.match(reminder.reject_url, /\/decide\//);
  const left = Date.parse(reminder.deadline) - Date.parse(reminder.ts);
  assert.ok(left > 0 && left <= 6_000 + 50, `sent with about half the window left (${left} ms)`);
  assert.equal(receiver.unverified, [], "signed like every delivery");
  // On the list's stream too, under its own name: a client listening by the contract's names never hears it.
  const onStream = await sse.waitFor((m) => m.event === "approval.reminder" && m.data.item_id === second, 10_000);
  assert.equal(Object.keys(onStream.data), ["list_id", "item_id", "target", "round", "deadline", "ts"]);

  // The reminder's reject link, with a reason and a request for another try: the Sentry is asked again.
  const rejected = await press(reminder.reject_url, { reason: "Two short poems, not one.", rework: "1" });
  assert.is(rejected.status, 200, rejected.text);
  const verdict = await sse.waitFor(
    (m) => m.event === "verdict" && m.data.item_id === second && m.data.target === "triage",
    60_000,
  );
  assert.equal(
    [verdict.data.verdict, verdict.data.reason, verdict.data.rework, verdict.data.actor.kind],
    ["rejected", "Two short poems, not one.", true, "link"],
  );
  await sse.waitFor(
    (m) =>
      m.event === "item.triaged" &&
      m.data.item_id === second &&
      sse.messages().filter((x) => x.event === "item.triaged" && x.data.item_id === second).length >= 2,
    60_000,
  );
  // The new round has a reminder of its own; its approve link takes a reason.
  await receiver.waitFor(
    () => delivered("approval.reminder", second, "triage").length >= 2,
    60_000,
    "round 1's reminder",
  );
  const again = delivered("approval.reminder", second, "triage")[1]!;
  assert.is(again.round, 1);
  assert.ok(again.deadline !== reminder.deadline);
  const approved = await press(again.approve_url, { reason: "Better." });
  assert.is(approved.status, 200, approved.text);
  const second2 = await sse.waitFor(
    (m) =>
      m.event === "verdict" && m.data.item_id === second && m.data.target === "triage" && m.data.verdict === "approved",
    60_000,
  );
  assert.is(second2.data.reason, "Better.");

  await finish(listId, sse);
  // An docs/contract.md-only client still reads a valid story around the reminders and the rework.
  assert.equal(readStory(sse.messages()).problems, []);
  const triageReminders = (await loggedReminders(listId)).filter((r) => r.includes(" triage "));
  assert.equal(triageReminders, [`${second} triage 0`, `${second} triage 1`], "none for the triage decided first");
  assert.is(delivered("approval.reminder", first, "triage").length, 0);
});

test("decided between the timer and the send, or past the deadline: no reminder; at most one per round", async () => {
  const { listId, sse } = await startList("Sweep the porch\nWater the plants\nFeed the cat");
  const [first, second, third] = [`${listId}-1`, `${listId}-2`, `${listId}-3`];
  for (const item of [first, second, third])
    await sse.waitFor((m) => m.event === "item.triaged" && m.data.item_id === item, 60_000);
  const subject = async (itemId: string) => approvalSubject((await server.app.log.state.item(itemId))!, "triage");
  const desk = server.app.flock.approvals;

  // Decided, then the reminder's turn comes (another instance decided, or the timer fired as it did).
  const one = await subject(first);
  assert.is((await server.post("/api/verdicts", { item_id: first, target: "triage", approve: false })).status, 204);
  assert.is(await desk.remind(one), false, "nothing to remind of once decided");

  // Still waiting: one reminder, and only one for the round.
  const two = await subject(second);
  await desk.remind(two); // true, unless its timer sent it first on a slow machine
  assert.is(await desk.remind(two), false, "one per round");

  // Past its deadline (a desk whose clock is an hour on: a server that slept through it): none.
  const late = new ApprovalDesk(server.app.log, {} as TrustLedger, 12_000, () => Date.now() + 3_600_000);
  assert.is(await late.remind(await subject(third)), false, "never after the deadline");

  await finish(listId, sse);
  assert.equal(
    (await loggedReminders(listId)).filter((r) => r !== `${third} triage 0`),
    [`${second} triage 0`],
  );
  assert.is(delivered("approval.reminder", first, "triage").length, 0);
});

test.run();

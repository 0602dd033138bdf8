// A frozen instance never writes again (docs/rules.md "One owner's story"). Two real instances on
// one PostgreSQL + Redis and a slow model on loopback: the list's owner is frozen with SIGSTOP past
// its lease (while crows are in the air; while it waits on approvals; while an Elder merge and a
// banter line are in flight), the other takes the list over and finishes it, then the first is
// thawed. Read fresh from the log: one story (each item triaged once, answered at most once, one
// verdict per target, every crow.flying landed exactly once, nothing after list.finished), the
// flights the frozen owner left in the air landed as lost by the new owner, and the thawed
// instance's one line saying it stepped down.
import { test } from "uvu";
import * as assert from "uvu/assert";
import {
  startFakeOpenAI,
  roleOfSystemPrompt,
  defaultScript,
  type FakeOpenAI,
  type FakeReply,
} from "../helpers/fake-openai.ts";
import { processPair, steppedDownLines, type ProcessPair } from "../helpers/process-pair.ts";
import { json } from "../helpers/json-http.ts";
import { eventually, serviceTests } from "../helpers/scale-services.ts";
import { openSse, type SseClient } from "../helpers/sse.ts";
import { ownerFollows } from "../helpers/owner.ts";
import { assertOneStory, replayFromLog } from "../helpers/one-story.ts";

const { svc, it } = serviceTests("scale-fencing");

const LEASE_MS = 3000;
const ITEMS = [
  "Buy milk",
  "Call the bakery",
  "Water the plants",
  "Book the vet",
  "Return the library books",
  "Fix the gate",
];

type Role = ReturnType<typeof roleOfSystemPrompt>;

/** The fake provider: each role's answer after its delay; the Sentry calls each item `mode`. */
function provider(mode: "solo" | "split", delayOf: (role: Role, nthOfRole: number) => number): Promise<FakeOpenAI> {
  const seen = new Map<Role, number>();
  return startFakeOpenAI((call, index) => {
    const role = roleOfSystemPrompt(call.system);
    const nth = seen.get(role) ?? 0;
    seen.set(role, nth + 1);
    const reply = defaultScript(call, index) as FakeReply & { content: string };
    const content =
      role === "sentry" && mode === "split"
        ? JSON.stringify({
            mode: "split",
            task_type: "other",
            subtasks: ["first half", "second half"],
            reason: "fake: two halves",
          })
        : role === "banter"
          ? `Fine flying today, call ${index}.`
          : reply.content;
    return { ...reply, content, delayMs: delayOf(role, nth) };
  });
}

const pair = (fake: FakeOpenAI): Promise<ProcessPair> =>
  processPair(svc!, fake, { dirPrefix: "crows-fence", leaseMs: LEASE_MS, env: { CROWS_ITEM_CONCURRENCY: "4" } });

async function postList(url: string): Promise<string> {
  const res = await fetch(`${url}/api/lists`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ text: ITEMS.join("\n"), requester: "fencing" }),
  });
  assert.is(res.status, 202);
  return ((await res.json()) as { list_id: string }).list_id;
}

/** Flights on the stream so far with no landing yet, per crow. */
function inTheAir(sse: SseClient): string[] {
  const open = new Map<string, number>();
  for (const m of sse.messages()) {
    const key = `${m.data?.item_id}|${m.data?.crow}`;
    if (m.event === "crow.flying") open.set(key, (open.get(key) ?? 0) + 1);
    if (m.event === "crow.landed") open.set(key, (open.get(key) ?? 0) - 1);
  }
  return [...open].filter(([, n]) => n > 0).map(([key]) => key.split("|")[1]!);
}

async function until(what: string, check: () => boolean, timeoutMs = 60_000): Promise<void> {
  await eventually(what, async () => (check() ? true : undefined), timeoutMs, 25);
}

/**
 * A is frozen; B takes the list over and the owner (answering every approval on B) sees it
 * finished; A is thawed and steps down. Returns the log read fresh, and A's lines.
 */
async function freezeTakeOverThaw(
  p: ProcessPair,
  listId: string,
  owner: Awaited<ReturnType<typeof ownerFollows>> | undefined,
): Promise<{ events: Awaited<ReturnType<typeof replayFromLog>>; aLines: string }> {
  p.a.child.kill("SIGSTOP");
  const run = owner ?? (await ownerFollows(p.b.url, listId, {}, 180_000));
  try {
    await run.finished;
  } finally {
    run.sse.close();
  }
  p.a.child.kill("SIGCONT");
  // The event that proves A is done with the list: its one line saying it stepped down.
  await steppedDownLines(p.a, `list ${listId}`, 30_000);
  return { events: await replayFromLog(p.dbUrl, `list:${listId}`), aLines: p.a.output().stderr };
}

function assertSteppedDownOnce(aLines: string, listId: string): void {
  const lines = aLines.split("\n").filter((l) => l.includes(`stepped down from list ${listId}`));
  assert.is(lines.length, 1, lines.join("\n"));
  assert.match(lines[0]!, /this instance held epoch 1, the list is at epoch 2/);
  assert.not.match(aLines, `list ${listId} stopped on an error`);
}

/** The flights A left in the air were landed by B, as lost, before anything else of theirs. */
function assertLostLandings(events: Awaited<ReturnType<typeof replayFromLog>>, crows: string[]): void {
  const lost = events.filter((e) => e.name === "crow.landed" && /instance lost/.test(e.data.error ?? ""));
  assert.ok(lost.length > 0, "the new owner landed A's flights as lost");
  for (const e of lost) assert.equal([e.data.ok, e.data.tokens], [false, 0]);
  for (const crow of crows)
    assert.ok(
      lost.some((e) => e.data.crow === crow),
      `${crow}'s flight landed as lost`,
    );
}

it("frozen while crows are in the air: B lands them as lost, flies the items again, and A's late answers never land", async () => {
  const fake = await provider("solo", (role) => (role === "crow" ? 2500 : 0));
  const p = await pair(fake);
  try {
    const listId = await postList(p.a.url);
    const owner = await ownerFollows(p.b.url, listId, {}, 180_000);
    await until("crows in the air on A", () => inTheAir(owner.sse).filter((c) => c !== "Sentry").length >= 2);
    const flying = inTheAir(owner.sse);
    const { events, aLines } = await freezeTakeOverThaw(p, listId, owner);
    assertOneStory(events, ITEMS.length);
    assertLostLandings(events, flying);
    assert.is(events.filter((e) => e.name === "item.answered").length, ITEMS.length, "every item answered, by B");
    assertSteppedDownOnce(aLines, listId);
  } finally {
    await p.done();
  }
});

it("frozen while it waits on approvals: B takes the approvals over, and A's waits end without a write", async () => {
  const fake = await provider("solo", (role) => (role === "crow" ? 300 : 0));
  const p = await pair(fake);
  try {
    const listId = await postList(p.a.url);
    const watch = await openSse(`${p.b.url}/api/events?list_id=${listId}`);
    // Items run four at a time (CROWS_ITEM_CONCURRENCY): those four wait on their triage approval.
    await until(
      "items waiting on their triage approval",
      () => watch.messages().filter((m) => m.event === "item.triaged" && m.data.needs_approval).length >= 4,
    );
    watch.close();
    const { events, aLines } = await freezeTakeOverThaw(p, listId, undefined);
    assertOneStory(events, ITEMS.length);
    assert.is(events.filter((e) => e.name === "verdict" && e.data.target === "triage").length, ITEMS.length);
    assertSteppedDownOnce(aLines, listId);
  } finally {
    await p.done();
  }
});

it("frozen while an Elder merge and a banter line are in flight: neither lands from A", async () => {
  // Crows answer fast; each Elder merge takes longer than the one before, so while the first item's
  // banter line is out the other items' merges are still in the air.
  const fake = await provider("split", (role, nth) =>
    role === "elder" ? 800 + 1200 * nth : role === "banter" ? 4000 : role === "crow" ? 100 : 0,
  );
  const p = await pair(fake);
  try {
    const listId = await postList(p.a.url);
    const owner = await ownerFollows(p.b.url, listId, {}, 180_000);
    await until(
      "an Elder merge and a banter line in flight on A",
      () =>
        inTheAir(owner.sse).includes("Elder") &&
        fake.calls.some((c) => roleOfSystemPrompt(c.system) === "banter") &&
        !owner.sse.messages().some((m) => m.event === "crow.banter"),
    );
    const banterAsked = fake.calls
      .map((c, i) => ({ role: roleOfSystemPrompt(c.system), i }))
      .filter((c) => c.role === "banter")
      .map((c) => `call ${c.i}.`);
    const { events, aLines } = await freezeTakeOverThaw(p, listId, owner);
    assertOneStory(events, ITEMS.length);
    assertLostLandings(events, ["Elder"]);
    for (const line of events.filter((e) => e.name === "crow.banter"))
      assert.not.ok(
        banterAsked.some((asked) => line.data.text.endsWith(asked)),
        `A's banter line landed: ${line.data.text}`,
      );
    assertSteppedDownOnce(aLines, listId);
  } finally {
    await p.done();
  }
});

const nestMessages = async (url: string): Promise<any[]> => (await json(`${url}/api/nests/bakery/messages`)).body;
const answersTo = (all: any[], requestId: string) =>
  all.filter((m) => m.refers_to === requestId && (m.kind === "deliver" || m.kind === "decline"));

async function ask(url: string, text: string): Promise<string> {
  const posted = await json(`${url}/api/nests/bakery/messages`, "POST", {
    author: "owner",
    text: `@Pepper ${text}`,
    kind: "request",
    to: "Pepper",
  });
  assert.is(posted.status, 201, JSON.stringify(posted.body));
  return posted.body.msg_id as string;
}

async function answered(url: string, requestId: string): Promise<void> {
  await eventually(
    `an answer to ${requestId}`,
    async () => (answersTo(await nestMessages(url), requestId).length > 0 ? true : undefined),
    60_000,
    100,
  );
}

it("a nest request whose obligation was taken over: A's late deliver is refused, the request is answered once", async () => {
  const fake = await provider("solo", (role) => (role === "crow" ? 3000 : 0));
  const p = await pair(fake);
  try {
    const nest = await json(`${p.a.url}/api/nests`, "POST", { name: "Bakery", crows: ["Pepper", "Sable"] });
    assert.is(nest.status, 201, JSON.stringify(nest.body));
    const requestId = await ask(p.a.url, "please write a short note thanking the bakers");
    await eventually(
      "Pepper's claim on A, and its model call in flight",
      async () =>
        (await nestMessages(p.a.url)).some((m) => m.kind === "claim" && m.author === "Pepper") &&
        fake.calls.some((c) => roleOfSystemPrompt(c.system) === "crow")
          ? true
          : undefined,
      30_000,
    );
    p.a.child.kill("SIGSTOP");
    // B takes the obligation over once A's lease lapses, nudges Pepper, and Pepper delivers there.
    await answered(p.b.url, requestId);
    p.a.child.kill("SIGCONT");
    await steppedDownLines(p.a, `obligation ${requestId}`, 30_000);
    // A marker asked after the thaw, and answered, proves the quiet: A's late reply was already in hand.
    const markerId = await ask(p.b.url, "one more short note, for the florist");
    await answered(p.b.url, markerId);
    const all = (await nestMessages(p.b.url)).filter((m) => m.msg_id !== markerId && m.refers_to !== markerId);
    const answers = answersTo(all, requestId);
    assert.is(answers.length, 1, `exactly one deliver or decline: ${JSON.stringify(answers)}`);
    assert.is(all.filter((m) => m.kind === "claim").length, 1, "the crow does not claim twice");
    const lines = p.a
      .output()
      .stderr.split("\n")
      .filter((l) => l.includes(`stepped down from obligation ${requestId}`));
    assert.is(lines.length, 1, lines.join("\n"));
    assert.match(lines[0]!, /this instance held epoch 1, it is at epoch 2/);
  } finally {
    await p.done();
  }
});

test.run();

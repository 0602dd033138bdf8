// A2A input-required naming several approvals, answered by one batch reply (docs/integrations.md
// "A2A"), driven by the official SDK's client only: the status names every approval waiting (its
// text, and `approvals` in its message's metadata); a reply whose data part holds `decisions`
// decides each through the engine; a decision the engine refuses is named and the others stand.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { type Message, type Task, TaskState } from "@a2a-js/sdk";
import type { Client } from "@a2a-js/sdk/client";
import { a2aClient, dataPart, messageOf, sendParams, statusText, textPart } from "../helpers/a2a-client.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { listStream } from "../../src/base/streams.ts";

const OWNER = "owner-token-for-a2a-batch-replies";
let server: TestServer;
let client: Client;

test.before(async () => {
  server = await startTestServer({ env: { CROWS_TOKEN: OWNER, CROWS_APPROVAL_WINDOW_MS: "600000" } });
  client = await a2aClient(server.url, OWNER);
});
test.after(async () => {
  await server.close();
});

const send = async (m: Message) => (await client.sendMessage(sendParams(m))) as Task;
const named = (task: Task) =>
  ((task.status?.message?.metadata?.approvals ?? []) as Array<{ item_id: string; target: string }>).map(
    (a) => `${a.item_id}/${a.target}`,
  );

/** Sends a list and waits until `count` triage approvals of it wait; the task as it then reads. */
async function waitingOn(lines: string[], count: number): Promise<{ task: Task; listId: string }> {
  const sent = await send(messageOf([textPart(lines.join("\n"))]));
  assert.is(sent.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED, statusText(sent));
  const listId = sent.metadata?.list_id as string;
  let asked = 0;
  for await (const event of server.app.log.follow(listStream(listId), 0)) {
    if (event.name === "item.triaged" && JSON.parse(event.payload).needs_approval) asked++;
    if (asked === count) break;
  }
  const task = await client.getTask({ tenant: "", id: sent.id, historyLength: undefined });
  return { task, listId };
}

const verdicts = async (listId: string) =>
  (await server.app.log.read(listStream(listId)))
    .filter((e) => e.name === "verdict")
    .map((e) => JSON.parse(e.payload))
    .map((v) => [v.item_id, v.target, v.verdict, v.reason ?? null]);

test("a batch with a bad id: the good decision stands, each refused one is named, the task asks again for what waits", async () => {
  const { task, listId } = await waitingOn(["Plan a birthday party", "Write a poem about rain"], 2);
  assert.is(task.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
  assert.equal(named(task), [`${listId}-1/triage`, `${listId}-2/triage`]);
  assert.match(
    statusText(task),
    new RegExp(`^${listId}-1 \\("[^"]+"\\) waits for your triage verdict[^\\n]*\\nReply "approve" or "reject"`),
    "the first named as a single approval is",
  );
  assert.match(statusText(task), new RegExp(`1 more waits for your verdict as well:\\n- ${listId}-2 `));

  const decisions = [
    { item_id: `${listId}-1`, approve: true },
    { item_id: "lst0000000000-7", approve: true },
    { item_id: `${listId}-1`, target: "triage", approve: false },
    { item_id: `${listId}-2`, approve: "yes" },
  ];
  const after = await send(messageOf([dataPart({ decisions })], task.id, task.contextId));
  assert.is(after.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED, statusText(after));
  const said = statusText(after);
  assert.match(said, /^Not decided: /);
  assert.match(said, /lst0000000000-7: lst0000000000-7 is not an item of this task's list/);
  assert.match(said, new RegExp(`${listId}-1: [^;]+`), "the second decision on item 1 is the engine's refusal");
  assert.match(said, new RegExp(`${listId}-2: "approve" must be true or false`));
  assert.match(said, /\(1 of 4 decided\)/);
  assert.equal(await verdicts(listId), [[`${listId}-1`, "triage", "approved", null]], "only the good decision");
  assert.ok(named(after).includes(`${listId}-2/triage`), "what still waits is named again");

  const cancelled = await client.cancelTask({ tenant: "", id: task.id, metadata: undefined });
  assert.is(cancelled.status?.state, TaskState.TASK_STATE_CANCELED);
});

test("an input-required naming several approvals: one batch reply decides them all (target left out, a reason kept)", async () => {
  const { task, listId } = await waitingOn(["Buy milk", "Write a haiku about crows", "Call the plumber"], 3);
  assert.equal(named(task), [`${listId}-1/triage`, `${listId}-2/triage`, `${listId}-3/triage`]);
  assert.match(statusText(task), /2 more wait for your verdict as well:/);
  assert.match(statusText(task), /Decide several at once in one reply with a data part \{"decisions"/);

  const after = await send(
    messageOf(
      [
        dataPart({
          decisions: [
            { item_id: `${listId}-1`, approve: true },
            { item_id: `${listId}-2`, target: "triage", approve: true },
            { item_id: `${listId}-3`, approve: false, reason: "the landlord calls" },
          ],
        }),
      ],
      task.id,
      task.contextId,
    ),
  );
  assert.not.match(statusText(after), /Not decided/, statusText(after));
  assert.equal(
    (await verdicts(listId)).filter((v) => v[1] === "triage"),
    [
      [`${listId}-1`, "triage", "approved", null],
      [`${listId}-2`, "triage", "approved", null],
      [`${listId}-3`, "triage", "rejected", "the landlord calls"],
    ],
  );

  // The outputs: each input-required answered by one batch of everything it names, to completed.
  let current = after;
  for (let turn = 0; turn < 5 && current.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED; turn++) {
    const approvals = current.status.message?.metadata?.approvals as Array<{ item_id: string; target: string }>;
    const decisions = approvals.map((a) => ({ item_id: a.item_id, target: a.target, approve: true }));
    current = await send(messageOf([dataPart({ decisions })], task.id, task.contextId));
  }
  assert.is(current.status?.state, TaskState.TASK_STATE_COMPLETED, statusText(current));
  assert.equal(
    (await verdicts(listId))
      .filter((v) => v[1] === "output")
      .map((v) => `${v[0]} ${v[2]}`)
      .sort(),
    [`${listId}-1 approved`, `${listId}-2 approved`],
    "the rejected triage skipped item 3",
  );
});

test("a batch that is no list, or longer than a list's approvals twice over, is refused whole; refusals named are bounded", async () => {
  const { task, listId } = await waitingOn(["Buy milk"], 1);
  const reply = (decisions: unknown) => send(messageOf([dataPart({ decisions })], task.id, task.contextId));

  const notList = await reply({ item_id: `${listId}-1`, approve: true });
  assert.is(notList.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED, statusText(notList));
  assert.match(
    statusText(notList),
    /^"decisions" must be a list of \{"item_id", "target"\?, "approve", "reason"\?\}\. Nothing was decided; reply again\./,
  );
  assert.equal(await verdicts(listId), [], "nothing decided");

  const good = { item_id: `${listId}-1`, approve: true };
  const tooMany = await reply([good, ...Array.from({ length: 100 }, (_, i) => ({ item_id: `x${i}`, approve: true }))]);
  assert.match(
    statusText(tooMany),
    /^A reply decides at most 100 approvals; this one holds 101\. Nothing was decided; reply again\./,
  );
  assert.equal(await verdicts(listId), [], "refused whole: not even its good decision");

  const unknown = await reply(
    Array.from({ length: 25 }, (_, i) => ({ item_id: `lst0000000000-${i + 1}`, approve: true })),
  );
  const said = statusText(unknown);
  assert.match(
    said,
    /^Not decided: lst0000000000-1: lst0000000000-1 is not an item of this task's list; lst0000000000-2: /,
  );
  assert.match(said, /lst0000000000-10: [^;]+; and 15 more \(0 of 25 decided\)\./);
  assert.not.match(said, /lst0000000000-11:/, "the eleventh on is counted, not named");
  assert.not.match(said, /\.;/, "no sentence's full stop before the separator");
  assert.ok(named(unknown).includes(`${listId}-1/triage`), "what waits is still named");

  const cancelled = await client.cancelTask({ tenant: "", id: task.id, metadata: undefined });
  assert.is(cancelled.status?.state, TaskState.TASK_STATE_CANCELED);
});

test.run();

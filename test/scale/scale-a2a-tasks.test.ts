// A2A tasks across two instances on one PostgreSQL and one Redis (docs/integrations.md "A2A", "Tasks
// are lists"): a task sent to A is read on B from its list's events (status, answers, its list), is
// replied to on B until completed, is resubscribed to on B while A streams it (B follows the list's
// log to the end), and is cancelled on B. Driven by the A2A SDK's client only.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { TaskState, type Task } from "@a2a-js/sdk";
import { instancePair, serviceTests } from "../helpers/scale-services.ts";
import { bearer, makeToken } from "../helpers/tokens.ts";
import { a2aClient, artifactIds, sendParams, statusText, userMessage } from "../helpers/a2a-client.ts";

const { svc, it } = serviceTests("scale-a2a-tasks");
const OWNER = "owner-token-for-scale-a2a-00000000";

const pair = svc ? instancePair(svc, { CROWS_TOKEN: OWNER, CROWS_APPROVAL_WINDOW_MS: "600000" }) : undefined;

const getTask = (client: Awaited<ReturnType<typeof a2aClient>>, id: string) =>
  client.getTask({ tenant: "", id, historyLength: undefined });

it("a task sent to A: B reads it, takes its replies to completed, and A reads the end", async () => {
  const { a, b } = pair!;
  const onA = await a2aClient(a.url, OWNER);
  const onB = await a2aClient(b.url, OWNER);
  const sent = (await onA.sendMessage(sendParams(userMessage("Buy milk\nWrite a haiku about crows")))) as Task;
  assert.is(sent.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED, statusText(sent));
  const listId = sent.metadata?.list_id as string;

  const read = await getTask(onB, sent.id);
  assert.is(read.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED, statusText(read));
  assert.match(
    statusText(read),
    new RegExp(
      `^${listId}-\\d \\("[^"]+"\\) waits for your (triage|output) verdict[\\s\\S]*Reply "approve" or "reject"`,
    ),
  );
  assert.equal([read.contextId, read.metadata?.list_id], [sent.contextId, listId]);

  const streamed: string[] = [];
  let last: TaskState | undefined;
  for (let turn = 0; turn < 8 && last !== TaskState.TASK_STATE_COMPLETED; turn++) {
    for await (const event of onB.sendMessageStream(sendParams(userMessage("approve", sent.id, sent.contextId)))) {
      if (event.payload?.$case === "artifactUpdate") streamed.push(event.payload.value.artifact!.artifactId);
      if (event.payload?.$case === "statusUpdate") last = event.payload.value.status?.state;
    }
  }
  assert.is(last, TaskState.TASK_STATE_COMPLETED);
  const ended = await getTask(onA, sent.id);
  assert.is(ended.status?.state, TaskState.TASK_STATE_COMPLETED, statusText(ended));
  assert.equal(artifactIds(ended), [`${listId}-1`, `${listId}-2`]);
  assert.equal(artifactIds(await getTask(onB, sent.id)), artifactIds(ended));
});

it("a task streamed on A, resubscribed on B: B follows its list to completed while the owner decides", async () => {
  const { a, b } = pair!;
  const writer = await makeToken(a, "a2a-scale-writer", ["read", "write"], bearer(OWNER));
  const onA = await a2aClient(a.url, writer.secret);
  const onB = await a2aClient(b.url, writer.secret);
  let task: Task | undefined;
  const streamOnA = (async () => {
    for await (const event of onA.sendMessageStream(sendParams(userMessage("Buy bread\nCall the plumber")))) {
      if (event.payload?.$case === "task") task ??= event.payload.value;
    }
  })();
  while (!task) await new Promise((r) => setTimeout(r, 20)); // polling for the task to appear
  const listId = task.metadata?.list_id as string;
  const states: TaskState[] = [];
  const artifacts = new Set<string>();
  let first: Task | undefined;
  const resubscribed = (async () => {
    for await (const event of onB.resubscribeTask({ tenant: "", id: task!.id })) {
      if (event.payload?.$case === "task") first ??= event.payload.value;
      if (event.payload?.$case === "statusUpdate") states.push(event.payload.value.status!.state);
      if (event.payload?.$case === "artifactUpdate") artifacts.add(event.payload.value.artifact!.artifactId);
    }
  })();
  let over = false;
  void resubscribed.finally(() => (over = true));
  while (!over) {
    for (const p of await b.app.prisma.approval.findMany({ where: { status: "pending", item: { listId } } }))
      await b.request("POST", "/api/verdicts", { item_id: p.itemId, target: p.target, approve: true }, bearer(OWNER));
    await new Promise((r) => setTimeout(r, 50)); // polling for work to do, never to prove an absence
  }
  await resubscribed;
  await streamOnA;
  assert.is(first?.id, task.id);
  assert.is(states[states.length - 1], TaskState.TASK_STATE_COMPLETED);
  assert.not.ok(states.includes(TaskState.TASK_STATE_INPUT_REQUIRED), "a caller without decide is never asked");
  for (const id of artifactIds(first!)) artifacts.add(id); // answers before B picked it up are in the task
  assert.equal([...artifacts].sort(), [`${listId}-1`, `${listId}-2`]);
});

it("a task waiting on A, cancelled on B: canceled on both, its list finished cancelled", async () => {
  const { a, b } = pair!;
  const onA = await a2aClient(a.url, OWNER);
  const onB = await a2aClient(b.url, OWNER);
  const sent = (await onA.sendMessage(sendParams(userMessage("Plan a picnic\nBuy bread")))) as Task;
  assert.is(sent.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED, statusText(sent));
  const cancelled = await onB.cancelTask({ tenant: "", id: sent.id, metadata: undefined });
  assert.is(cancelled.status?.state, TaskState.TASK_STATE_CANCELED, statusText(cancelled));
  assert.match(statusText(cancelled), /^Cancelled\./);
  assert.is((await getTask(onA, sent.id)).status?.state, TaskState.TASK_STATE_CANCELED);
  const list = await b.app.prisma.todoList.findUniqueOrThrow({ where: { id: sent.metadata?.list_id as string } });
  assert.equal([list.status, list.cancelledAt !== null], ["finished", true]);
});

test.run();

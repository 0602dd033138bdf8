// crows as an A2A agent (docs/integrations.md "A2A"), driven by the official SDK's client only:
// the card, a streamed list whose approvals come back as input-required and are answered by reply,
// answers as artifacts, a sent task read back, a task cancelled (its list cancelled: docs/rules.md),
// and the scopes: a read token cannot send, no token is a 401.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { TaskState, type Message, type Task } from "@a2a-js/sdk";
import type { Client } from "@a2a-js/sdk/client";
import { a2aClient, sendParams as send, statusText, userMessage } from "../helpers/a2a-client.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { bearer, makeToken } from "../helpers/tokens.ts";
import { listStream } from "../../src/base/streams.ts";

const OWNER = "owner-token-for-a2a-tests-000000";
let server: TestServer;

test.before(async () => {
  server = await startTestServer({ env: { CROWS_TOKEN: OWNER, CROWS_APPROVAL_WINDOW_MS: "600000" } });
});
test.after(async () => {
  await server.close();
});

const clientFor = (token: string): Promise<Client> => a2aClient(server.url, token);

test("the card names the skills, streaming, and the bearer scheme; without a token it is a 401", async () => {
  const client = await clientFor(OWNER);
  const card = await client.getAgentCard();
  assert.is(card.name, "crows");
  assert.equal(
    card.skills.map((s) => s.id),
    ["work-a-todo-list", "talk-in-a-nest"],
  );
  assert.is(card.capabilities?.streaming, true);
  assert.is(card.securitySchemes.bearer?.scheme?.$case, "httpAuthSecurityScheme");
  const anonymous = await fetch(`${server.url}/.well-known/agent-card.json`);
  assert.is(anonymous.status, 401);
});

test("a streamed list: status updates, input-required for each approval answered by reply, answers as artifacts, completed", async () => {
  const client = await clientFor(OWNER);
  let task: { id: string; contextId: string } | undefined;
  const artifacts: string[] = [];
  let message = userMessage("Buy milk\nWrite a haiku about crows");
  let last: TaskState | undefined;
  let replies = 0;
  const lines: string[] = [];
  for (let turn = 0; turn < 10; turn++) {
    for await (const event of client.sendMessageStream(send(message))) {
      const payload = event.payload;
      if (payload?.$case === "task") task ??= { id: payload.value.id, contextId: payload.value.contextId };
      if (payload?.$case === "artifactUpdate") artifacts.push(payload.value.artifact!.artifactId);
      if (payload?.$case === "statusUpdate") {
        last = payload.value.status?.state;
        if (last === TaskState.TASK_STATE_WORKING) lines.push(...statusLines(payload.value.status!));
      }
    }
    if (last !== TaskState.TASK_STATE_INPUT_REQUIRED) break;
    replies++;
    message = userMessage("approve", task!.id, task!.contextId);
  }
  assert.is(last, TaskState.TASK_STATE_COMPLETED);
  assert.is(replies, 4, "two triage and two output approvals, each answered by a reply");
  const got = await client.getTask({ tenant: "", id: task!.id, historyLength: undefined });
  assert.is(got.status?.state, TaskState.TASK_STATE_COMPLETED);
  const listId = got.metadata?.list_id as string;
  assert.equal(artifacts.sort(), [`${listId}-1`, `${listId}-2`]);
  assert.equal(got.artifacts.map((a) => a.artifactId).sort(), [`${listId}-1`, `${listId}-2`]);
  const events = await server.app.log.read(listStream(listId));
  const verdicts = events.filter((e) => e.name === "verdict").map((e) => JSON.parse(e.payload));
  assert.ok(verdicts.length === 4 && verdicts.every((v) => v.verdict === "approved" && v.actor.kind === "owner"));
  // Every event before list.finished is a line of one working update, once (batched: "Updates").
  assert.is(lines.length, events.length - 1, lines.join("\n"));
  assert.is((await server.app.prisma.todoList.findUniqueOrThrow({ where: { id: listId } })).requester, "a2a");
});

/** A working status's lines: one per event of its batch. */
const statusLines = (status: { message?: { parts: Array<{ content?: { $case: string; value?: unknown } }> } }) =>
  (status.message?.parts ?? []).flatMap((p) =>
    p.content?.$case === "text" ? String(p.content.value).split("\n") : [],
  );

test("a sent task (its requester named in metadata) waits as input-required; cancelling it cancels its list", async () => {
  const client = await clientFor(OWNER);
  // Who asks, named in the message's metadata as REST's requester (the rate limit keys on it).
  const message = userMessage("Plan a picnic\nBuy bread");
  message.metadata = { requester: "picnic-planner" };
  const result = await client.sendMessage(send(message));
  const task = result as Task;
  assert.is(task.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED, statusText(task));
  assert.match(statusText(task), /Reply "approve" or "reject"/);
  const listId = task.metadata?.list_id as string;
  assert.is(
    (await server.app.prisma.todoList.findUniqueOrThrow({ where: { id: listId } })).requester,
    "picnic-planner",
  );
  const cancelled = await client.cancelTask({ tenant: "", id: task.id, metadata: undefined });
  assert.is(cancelled.status?.state, TaskState.TASK_STATE_CANCELED);
  await server.app.flock.settled(listId);
  const events = await server.app.log.read(listStream(listId));
  const finished = JSON.parse(events[events.length - 1]!.payload);
  assert.equal([events[events.length - 1]!.name, finished.cancelled], ["list.finished", true]);
});

test("a stream dropped mid-list: resubscribing to the task gets the rest, to completed (a caller without decide: the owner decides elsewhere)", async () => {
  const writer = await makeToken(server, "a2a-writer", ["read", "write"], bearer(OWNER));
  const client = await clientFor(writer.secret);
  let taskId: string | undefined;
  let listId: string | undefined;
  for await (const event of client.sendMessageStream(send(userMessage("Buy milk\nCall the plumber")))) {
    if (event.payload?.$case === "task") {
      taskId = event.payload.value.id;
      listId = event.payload.value.metadata?.list_id as string;
      break; // the connection drops here
    }
  }
  assert.ok(taskId && listId);
  const states: TaskState[] = [];
  const artifacts: string[] = [];
  const resubscribed = (async () => {
    for await (const event of client.resubscribeTask({ tenant: "", id: taskId! })) {
      if (event.payload?.$case === "statusUpdate") states.push(event.payload.value.status!.state);
      if (event.payload?.$case === "artifactUpdate") artifacts.push(event.payload.value.artifact!.artifactId);
    }
  })();
  // The owner decides through REST meanwhile; this caller was never asked (no decide scope).
  let over = false;
  void resubscribed.finally(() => (over = true));
  while (!over) {
    for (const a of await server.app.prisma.approval.findMany({ where: { status: "pending", item: { listId } } }))
      await server.request(
        "POST",
        "/api/verdicts",
        { item_id: a.itemId, target: a.target, approve: true },
        bearer(OWNER),
      );
    await new Promise((r) => setTimeout(r, 50)); // polling for work to do, never to prove an absence
  }
  await resubscribed;
  assert.is(states[states.length - 1], TaskState.TASK_STATE_COMPLETED);
  assert.not.ok(states.includes(TaskState.TASK_STATE_INPUT_REQUIRED), "a caller without decide is never asked");
  assert.equal(artifacts.sort(), [`${listId}-1`, `${listId}-2`]);
});

test("the nest skill: a message with a nest_id is a post in that nest, answered with its record; a read token is refused naming write", async () => {
  const client = await clientFor(OWNER);
  const message = userMessage("Hello from another agent");
  message.metadata = { nest_id: "todo" };
  const reply = (await client.sendMessage(send(message))) as Message;
  const record = reply.metadata?.record as { msg_id: string; author: string; text: string };
  assert.equal([record.author, record.text], ["owner", "Hello from another agent"]);
  const stored = await server.request("GET", "/api/nests/todo/messages", undefined, bearer(OWNER));
  assert.ok((stored.body as Array<{ msg_id: string }>).some((m) => m.msg_id === record.msg_id));

  const reader = await makeToken(server, "a2a-nest-reader", ["read"], bearer(OWNER));
  const readOnly = await clientFor(reader.secret);
  const refused = userMessage("Not allowed");
  refused.metadata = { nest_id: "todo" };
  try {
    await readOnly.sendMessage(send(refused));
    assert.unreachable("a read token posted");
  } catch (error) {
    assert.match(String(error), /"write"/);
  }
});

test("a message refused before any task exists (a blank or overlong requester, an empty or too long list) is answered with a message saying why; nothing stored", async () => {
  const client = await clientFor(OWNER);
  const before = await server.app.prisma.todoList.count();
  const cases: Array<[string, unknown, RegExp]> = [
    ["Buy milk", "", /requester/],
    ["Buy milk", "x".repeat(101), /at most 100 characters/],
    ["", "a2a-refused", /./],
    [Array.from({ length: 51 }, (_, i) => `Item ${i + 1}`).join("\n"), "a2a-refused", /50/],
  ];
  for (const [text, requester, why] of cases) {
    const message = userMessage(text);
    message.metadata = { requester } as Record<string, unknown>;
    const answer = (await client.sendMessage(send(message))) as Message;
    assert.ok(
      "parts" in answer && !("status" in answer),
      `a message, not a task: ${JSON.stringify(answer).slice(0, 200)}`,
    );
    const said = answer.parts.map((p) => (p.content?.$case === "text" ? p.content.value : "")).join("");
    assert.match(said, /^Not accepted: /);
    assert.match(said, why);
    assert.is(answer.metadata?.refused, "bad_input");
  }
  assert.is(await server.app.prisma.todoList.count(), before, "nothing stored");
});

test("scopes: a read token reads the card but cannot send", async () => {
  const reader = await makeToken(server, "a2a-reader", ["read"], bearer(OWNER));
  const client = await clientFor(reader.secret);
  assert.is((await client.getAgentCard()).name, "crows");
  try {
    await client.sendMessage(send(userMessage("Buy milk")));
    assert.unreachable("a read token sent a list");
  } catch (error) {
    assert.match(String(error), /403|write/);
  }
  assert.is(await server.app.prisma.todoList.count({ where: { requester: "a2a", text: "Buy milk" } }), 0);
});

test("a reply's reason reaches the verdict (the rest of its text after the verdict word); one over the bound asks again and decides nothing", async () => {
  const client = await clientFor(OWNER);
  const task = (await client.sendMessage(send(userMessage("Plan a picnic")))) as Task;
  assert.is(task.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED, statusText(task));
  assert.match(statusText(task), /optionally followed by your reason/);
  const listId = task.metadata?.list_id as string;
  const verdicts = async () =>
    (await server.app.log.read(listStream(listId)))
      .filter((e) => e.name === "verdict")
      .map((e) => JSON.parse(e.payload));

  const tooLong = (await client.sendMessage(
    send(userMessage(`reject: ${"x".repeat(1001)}`, task.id, task.contextId)),
  )) as Task;
  assert.is(tooLong.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
  assert.match(statusText(tooLong), /at most 1,000/);
  assert.equal(await verdicts(), [], "nothing was decided");

  const after = (await client.sendMessage(
    send(userMessage("reject: not this weekend", task.id, task.contextId)),
  )) as Task;
  assert.is(after.status?.state, TaskState.TASK_STATE_COMPLETED, statusText(after));
  assert.equal(
    (await verdicts()).map((v) => [v.verdict, v.reason]),
    [["rejected", "not this weekend"]],
  );
});

test.run();

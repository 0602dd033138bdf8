// A2A push notifications (docs/integrations.md "Push notifications"), driven by the official SDK's
// client only: a push config set on message/send; the task's updates pushed to a real receiver on
// loopback through the webhook outbox, each signed (Standard Webhooks, the config's token as the
// key, checked by the standardwebhooks package) with the config's Authorization header, in order,
// a refused one retried under the same webhook-id; the token and credentials never read back by
// create, get or list; a read token refused; a bad URL a clear error; delete stops the pushes.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { StreamResponse, TaskState, type Message, type Task } from "@a2a-js/sdk";
import type { Client } from "@a2a-js/sdk/client";
import { a2aClient, sendParams, userMessage } from "../helpers/a2a-client.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { bearer, makeToken } from "../helpers/tokens.ts";
import { startReceiver, type Receiver } from "../helpers/webhook-receiver.ts";

const OWNER = "owner-token-for-a2a-push-tests-0";
const PUSH_TOKEN = "push-token-signing-key-0123456789";
const CREDENTIALS = "receiver-credential-abcdef0123456789";
let server: TestServer;
let receiver: Receiver;

test.before(async () => {
  receiver = await startReceiver([`whsec_${Buffer.from(PUSH_TOKEN).toString("base64")}`]);
  server = await startTestServer({
    env: {
      CROWS_TOKEN: OWNER,
      CROWS_APPROVAL_WINDOW_MS: "600000",
      CROWS_WEBHOOK_ALLOW_PRIVATE: "1",
      CROWS_WEBHOOK_RETRY_SCHEDULE_MS: "200,200,200",
      CROWS_WEBHOOK_POLL_MS: "50",
    },
  });
});
test.after(async () => {
  await server.close();
  await receiver.close();
});

const clientFor = (token: string): Promise<Client> => a2aClient(server.url, token);

const pushConfig = (url: string, id = "") => ({
  tenant: "",
  id,
  taskId: "",
  url,
  token: PUSH_TOKEN,
  authentication: { scheme: "Bearer", credentials: CREDENTIALS },
});

const sendWithPush = (message: Message, url: string) => ({
  tenant: "",
  message,
  configuration: {
    acceptedOutputModes: [],
    taskPushNotificationConfig: pushConfig(url, "to-my-receiver"),
    returnImmediately: false,
  },
  metadata: undefined,
});

const pushesOf = (taskId: string) =>
  receiver.received
    .map((r) => ({ ...r, update: StreamResponse.fromJSON(r.body) }))
    .filter((r) => {
      const p = r.update.payload;
      return p !== undefined && (p.$case === "task" ? p.value.id : p.value.taskId) === taskId;
    });

test("the card says push notifications", async () => {
  const card = await (await clientFor(OWNER)).getAgentCard();
  assert.is(card.capabilities?.pushNotifications, true);
});

test("a push config on message/send: every update pushed, signed, authorized, in order, retried; its secrets never read back", async () => {
  const client = await clientFor(OWNER);
  // The receiver refuses its first request: the sender retries it under the same webhook-id.
  receiver.answer = ({ n }) => (n === 0 ? { status: 503 } : {});
  let message = userMessage("Buy milk\nWrite a haiku about crows");
  let task = (await client.sendMessage(sendWithPush(message, receiver.url))) as Task;
  for (let turn = 0; turn < 10 && task.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED; turn++) {
    message = userMessage("approve", task.id, task.contextId);
    task = (await client.sendMessage(sendParams(message))) as Task;
  }
  assert.is(task.status?.state, TaskState.TASK_STATE_COMPLETED);

  await receiver.waitFor(
    () =>
      pushesOf(task.id).some(
        (r) =>
          r.update.payload?.$case === "statusUpdate" &&
          r.update.payload.value.status?.state === TaskState.TASK_STATE_COMPLETED,
      ),
    30_000,
    "the completed status pushed",
  );
  const pushes = pushesOf(task.id);
  assert.equal(receiver.unverified, [], "every push verifies with the token as the key");
  for (const push of pushes) {
    assert.is(push.headers.authorization, `Bearer ${CREDENTIALS}`);
    assert.is(push.headers["content-type"], "application/a2a+json");
    assert.match(push.id, /^push_\d+_pc_/);
  }
  // The refused one came again under its webhook-id; apart from that, each id once, in the order queued.
  assert.is(pushes[0]!.id, pushes[1]!.id, "the refused push is retried first, before any later one");
  const ids = [...new Set(pushes.map((p) => p.id))];
  const seqs = ids.map((id) => Number(id.split("_")[1]));
  assert.equal(
    seqs,
    [...seqs].sort((a, b) => a - b),
  );
  assert.is(ids.length, pushes.length - 1);
  const kinds = new Set(pushes.map((p) => p.update.payload?.$case));
  assert.ok(kinds.has("task") && kinds.has("statusUpdate") && kinds.has("artifactUpdate"), [...kinds].join(","));
  const states = pushes.flatMap((p) =>
    p.update.payload?.$case === "statusUpdate" ? [p.update.payload.value.status!.state] : [],
  );
  assert.ok(states.includes(TaskState.TASK_STATE_INPUT_REQUIRED));
  assert.is(states[states.length - 1], TaskState.TASK_STATE_COMPLETED);

  // Never read back: get and list show the URL and the scheme only.
  const got = await client.getTaskPushNotificationConfig({ tenant: "", taskId: task.id, id: "to-my-receiver" });
  assert.equal(
    [got.url, got.token, got.authentication?.scheme, got.authentication?.credentials],
    [receiver.url, "", "Bearer", ""],
  );
  const listed = await client.listTaskPushNotificationConfig({
    tenant: "",
    taskId: task.id,
    pageSize: 0,
    pageToken: "",
  });
  assert.equal(
    listed.configs.map((c) => [c.id, c.token, c.authentication?.credentials]),
    [["to-my-receiver", "", ""]],
  );
  // Nor by create: it answers the stored config, not what was sent.
  const created = await client.createTaskPushNotificationConfig({ ...pushConfig(receiver.url), taskId: task.id });
  assert.ok(created.id !== "");
  assert.equal([created.token, created.authentication?.credentials], ["", ""]);
  // No attempt record holds them either.
  const attempts = await server.app.prisma.webhookAttempt.findMany();
  assert.not.ok(JSON.stringify(attempts).includes(PUSH_TOKEN) || JSON.stringify(attempts).includes(CREDENTIALS));

  // Delete: the configs are gone.
  await client.deleteTaskPushNotificationConfig({ tenant: "", taskId: task.id, id: "to-my-receiver" });
  await client.deleteTaskPushNotificationConfig({ tenant: "", taskId: task.id, id: created.id });
  const after = await client.listTaskPushNotificationConfig({
    tenant: "",
    taskId: task.id,
    pageSize: 0,
    pageToken: "",
  });
  assert.equal(after.configs, []);
});

test("refusals: a read token cannot list or set push configs; a link-local URL and a short token are clear errors", async () => {
  const owner = await clientFor(OWNER);
  const task = (await owner.sendMessage({
    tenant: "",
    message: userMessage("Buy bread"),
    configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true },
    metadata: undefined,
  })) as Task;
  const reader = await makeToken(server, "a2a-push-reader", ["read"], bearer(OWNER));
  const readOnly = await clientFor(reader.secret);
  for (const attempt of [
    () => readOnly.listTaskPushNotificationConfig({ tenant: "", taskId: task.id, pageSize: 0, pageToken: "" }),
    () => readOnly.createTaskPushNotificationConfig({ ...pushConfig(receiver.url), taskId: task.id }),
  ]) {
    try {
      await attempt();
      assert.unreachable("a read token reached push configs");
    } catch (error) {
      assert.match(String(error), /403|write/);
    }
  }
  const refusals: Array<[Record<string, unknown>, RegExp]> = [
    [{ url: "http://169.254.169.254/latest" }, /link-local/],
    [{ token: "short" }, /"token" must be 16/],
  ];
  for (const [change, message] of refusals) {
    try {
      await owner.createTaskPushNotificationConfig({ ...pushConfig(receiver.url), taskId: task.id, ...change });
      assert.unreachable("a bad push config was stored");
    } catch (error) {
      assert.match(String(error), message);
      assert.not.match(String(error), /Internal/i);
    }
  }
  await owner.cancelTask({ tenant: "", id: task.id, metadata: undefined });
});

test.run();

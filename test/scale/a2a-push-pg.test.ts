// A2A push notifications on PostgreSQL + Redis (docs/integrations.md "Push notifications"): the
// config and the pushes in PostgreSQL, the sender's own statements (PgWebhookStore: the push
// configs as targets, a push's stored body) sending them. Driven by the A2A SDK's client only; a
// receiver on loopback checks every signature with the token as the key.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { StreamResponse, TaskState, type Task } from "@a2a-js/sdk";
import { a2aClient, sendParams, userMessage as message } from "../helpers/a2a-client.ts";
import { startTestServer } from "../helpers/server.ts";
import { startReceiver } from "../helpers/webhook-receiver.ts";
import { freshDatabase, serviceTests } from "../helpers/scale-services.ts";

const OWNER = "owner-token-for-a2a-push-on-pg-0";
const PUSH_TOKEN = "push-token-on-postgres-0123456789";
const { svc, it } = serviceTests("a2a-push-pg");

it("a task's updates pushed from PostgreSQL, signed, authorized, to completed; the config read back without its secrets", async () => {
  const db = await freshDatabase(svc!.pgUrl);
  const receiver = await startReceiver([`whsec_${Buffer.from(PUSH_TOKEN).toString("base64")}`]);
  const server = await startTestServer({
    env: {
      DATABASE_URL: db.url,
      REDIS_URL: svc!.redisUrl,
      CROWS_TOKEN: OWNER,
      CROWS_APPROVAL_WINDOW_MS: "600000",
      CROWS_WEBHOOK_ALLOW_PRIVATE: "1",
      CROWS_WEBHOOK_POLL_MS: "50",
    },
  });
  try {
    const client = await a2aClient(server.url, OWNER);
    const config = {
      tenant: "",
      id: "pg-receiver",
      taskId: "",
      url: receiver.url,
      token: PUSH_TOKEN,
      authentication: { scheme: "Bearer", credentials: "pg-credential-0123456789" },
    };
    let task = (await client.sendMessage({
      tenant: "",
      message: message("Buy milk"),
      configuration: { acceptedOutputModes: [], taskPushNotificationConfig: config, returnImmediately: false },
      metadata: undefined,
    })) as Task;
    for (let turn = 0; turn < 10 && task.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED; turn++)
      task = (await client.sendMessage(sendParams(message("approve", task.id, task.contextId)))) as Task;
    assert.is(task.status?.state, TaskState.TASK_STATE_COMPLETED);
    const states = () =>
      receiver.received.flatMap((r) => {
        const p = StreamResponse.fromJSON(r.body).payload;
        return p?.$case === "statusUpdate" ? [p.value.status!.state] : [];
      });
    await receiver.waitFor(() => states().includes(TaskState.TASK_STATE_COMPLETED), 30_000, "the completed push");
    assert.equal(receiver.unverified, []);
    assert.ok(receiver.received.every((r) => r.headers.authorization === "Bearer pg-credential-0123456789"));
    const ids = receiver.received.map((r) => Number(r.id.split("_")[1]));
    assert.equal(
      ids,
      [...ids].sort((a, b) => a - b),
      "in the order queued",
    );
    const listed = await client.listTaskPushNotificationConfig({
      tenant: "",
      taskId: task.id,
      pageSize: 0,
      pageToken: "",
    });
    assert.equal(
      listed.configs.map((c) => [c.id, c.url, c.token, c.authentication?.credentials]),
      [["pg-receiver", receiver.url, "", ""]],
    );
  } finally {
    await server.close();
    await receiver.close();
    await db.drop();
  }
});

test.run();

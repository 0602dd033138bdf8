// A server in-process with a webhook receiver on loopback subscribed to every event it sends, for
// the tests that check a verdict or a reminder both on the list's stream and as a delivery, and
// the lists such a test posts and follows.
import * as assert from "uvu/assert";
import { startTestServer, type TestServer } from "./server.ts";
import { openSse, type SseClient } from "./sse.ts";
import { startReceiver, type Receiver } from "./webhook-receiver.ts";

/** The receiver, then the server, then the subscription (its secret handed to the receiver to check signatures). */
export async function startSubscribedServer(env: Record<string, string>): Promise<{
  server: TestServer;
  receiver: Receiver;
}> {
  const receiver = await startReceiver();
  const server = await startTestServer({ env });
  const added = await server.post("/api/webhooks", { url: receiver.url });
  assert.is(added.status, 201, added.text);
  receiver.secrets.push(added.body.secret);
  return { server, receiver };
}

/**
 * Posts a list and follows its stream. Give each list a requester of its own: such a test posts
 * more lists a minute than one requester may.
 */
export async function startFollowedList(
  server: TestServer,
  text: string,
  requester: string,
): Promise<{ listId: string; sse: SseClient }> {
  const res = await server.post("/api/lists", { text, requester });
  assert.is(res.status, 202, res.text);
  const listId = res.body.list_id as string;
  return { listId, sse: await openSse(`${server.url}/api/events?list_id=${listId}`) };
}

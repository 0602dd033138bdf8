// The webhook sender's thread (src/webhooks/sender-host.ts): with a database file it sends from a
// thread of its own, and a thread that ends unasked is started again with nothing lost; with
// CROWS_WEBHOOK_SENDER=server it sends from the server's thread, and delivers the same. The outbox holds an
// event only while an endpoint is enabled, and drains once its deliveries are made.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { once } from "node:events";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { startReceiver, type Receiver } from "../helpers/webhook-receiver.ts";
import type { ThreadedSender } from "../../src/webhooks/sender-host.ts";

const ENV = {
  CROWS_WEBHOOK_ALLOW_PRIVATE: "1",
  CROWS_WEBHOOK_RETRY_SCHEDULE: "0,0.2,0.2",
  CROWS_WEBHOOK_POLL_S: "0.05",
  CROWS_WEBHOOK_TIMEOUT_S: "2",
};

async function addEndpoint(server: TestServer, receiver: Receiver) {
  const added = await server.app.webhooks.endpoints.add({ url: receiver.url });
  receiver.secrets.push(added.secret);
}

/** Appends `count` trust changes on `streams` streams: each fans out as trust.changed. */
async function appendTrust(server: TestServer, from: number, count: number, streams = 3) {
  for (let i = from; i < from + count; i++) {
    await server.app.log.append(`thread-test:${i % streams}`, "trust.changed", {
      list_id: `thread-${i % streams}`,
      holder: "flock",
      task_type: `type-${i}`,
      from: 0,
      to: 1,
      ts: new Date().toISOString(),
    });
  }
}

/** Waits until `count` deliveries are recorded as delivered. */
async function delivered(server: TestServer, count: number) {
  const deadline = Date.now() + 20_000;
  while ((await server.app.prisma.webhookDelivery.count({ where: { state: "delivered" } })) < count) {
    if (Date.now() > deadline) throw new Error(`fewer than ${count} deliveries recorded as delivered`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const outboxRows = (server: TestServer) => server.app.prisma.webhookOutbox.count();

test("with a database file the sender runs in its own thread and delivers every event once, each verified", async () => {
  const receiver = await startReceiver();
  const server = await startTestServer({ env: ENV });
  try {
    assert.is(server.app.webhooks.sender.runsIn, "own-thread");
    await addEndpoint(server, receiver);
    await appendTrust(server, 0, 40);
    await receiver.waitFor((r) => r.length >= 40, 20_000, "40 deliveries");
    assert.equal(receiver.unverified, []);
    const ids = receiver.received.map((r) => r.id);
    assert.is(new Set(ids).size, 40, "each delivery once");
    assert.equal(
      new Set(receiver.received.map((r) => r.body.data.task_type)),
      new Set(Array.from({ length: 40 }, (_, i) => `type-${i}`)),
    );
  } finally {
    await server.close();
    await receiver.close();
  }
});

test("a sender thread that ends unasked is started again, and what was appended meanwhile is delivered once", async () => {
  const receiver = await startReceiver();
  const lines: string[] = [];
  const server = await startTestServer({ env: ENV, deps: { logLine: (line) => lines.push(line) } });
  try {
    await addEndpoint(server, receiver);
    const sender = server.app.webhooks.sender as ThreadedSender;
    for (const round of [0, 1, 2]) {
      const thread = sender.currentThread();
      assert.ok(thread, `round ${round}: a thread sends`);
      await appendTrust(server, round * 100, 5);
      await receiver.waitFor((r) => r.length >= round * 10 + 5, 20_000, `round ${round}: before the thread ends`);
      // Ended once its sends are recorded (a thread ended between a send and its record sends it
      // again, with the same webhook-id: the kill -9 tests hold that).
      await delivered(server, round * 10 + 5);
      const exited = once(thread!, "exit");
      await thread!.terminate();
      await exited;
      await appendTrust(server, round * 100 + 50, 5); // appended while no thread runs
      await receiver.waitFor((r) => r.length >= round * 10 + 10, 20_000, `round ${round}: after the restart`);
      assert.ok(sender.currentThread() && sender.currentThread() !== thread, `round ${round}: a new thread`);
    }
    assert.equal(receiver.unverified, []);
    // Nothing twice: ended between sends, no delivery was left half done.
    assert.is(new Set(receiver.acked).size, receiver.acked.length);
    assert.ok(
      lines.some((l) => l.includes("the sender thread ended")),
      "the restart is in the log",
    );
    // The file's writer lock was not left held by an ended thread: the flock still writes.
    const { status } = await server.post("/api/lists", { text: "Buy milk", requester: "after-restarts" });
    assert.is(status, 202);
  } finally {
    await server.close();
    await receiver.close();
  }
});

test("with CROWS_WEBHOOK_SENDER=server the sender runs in the server's thread and delivers the same", async () => {
  const receiver = await startReceiver();
  const server = await startTestServer({ env: { ...ENV, CROWS_WEBHOOK_SENDER: "server" } });
  try {
    assert.is(server.app.webhooks.sender.runsIn, "server-thread");
    await addEndpoint(server, receiver);
    await appendTrust(server, 0, 12, 4);
    await receiver.waitFor((r) => r.length >= 12, 20_000, "12 deliveries");
    assert.equal(receiver.unverified, []);
    assert.is(new Set(receiver.received.map((r) => r.id)).size, 12);
  } finally {
    await server.close();
    await receiver.close();
  }
});

test("the outbox holds events only while an endpoint is enabled, and drains into deliveries", async () => {
  const receiver = await startReceiver();
  const server = await startTestServer({ env: ENV });
  try {
    await appendTrust(server, 0, 10);
    assert.is(await outboxRows(server), 0, "no endpoint: nothing kept for webhooks");
    assert.is(await server.app.prisma.webhookDelivery.count(), 0);
    await addEndpoint(server, receiver);
    await appendTrust(server, 10, 25, 5);
    await receiver.waitFor((r) => r.length >= 25, 20_000, "25 deliveries");
    const deadline = Date.now() + 10_000;
    while ((await outboxRows(server)) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.is(await outboxRows(server), 0, "every outbox row became deliveries and was removed");
    assert.is(
      await server.app.prisma.webhookDelivery.count(),
      25,
      "one delivery per event for the one endpoint; none for the events before it",
    );
  } finally {
    await server.close();
    await receiver.close();
  }
});

test.run();

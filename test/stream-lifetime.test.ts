// A stream's follower lives exactly as long as its client: a client that stops reading and then
// disconnects leaves nothing attached to the bus (issue 8, "Streams").
import { test } from "uvu";
import * as assert from "uvu/assert";
import net from "node:net";
import { getEventListeners } from "node:events";
import { startTestServer } from "./helpers/server.ts";
import { topicOf } from "../src/log/bus.ts";

const listenersOn = (bus: unknown, stream: string) => getEventListeners(bus as EventTarget, topicOf(stream)).length;

async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

for (const pauseBeforeDisconnect of [true, false]) {
  test(`a client that ${pauseBeforeDisconnect ? "stopped reading" : "was reading"} and disconnects leaves zero listeners`, async () => {
    const server = await startTestServer();
    try {
      const listId = `lifetime-${pauseBeforeDisconnect ? "paused" : "reading"}`;
      await server.app.prisma.todoList.create({ data: { id: listId, requester: "bench", text: "-", tokenBudget: 1, status: "finished" } });
      const stream = `list:${listId}`;
      const { port } = new URL(server.url);
      const socket = net.connect(Number(port), "127.0.0.1");
      await new Promise((resolve) => socket.once("connect", resolve));
      let received = 0;
      socket.on("data", (chunk: Buffer) => (received += chunk.length));
      socket.write(`GET /api/events?list_id=${listId} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n`);
      await until(() => received > 0, 5000, "the response head");
      await until(() => listenersOn(server.app.bus, stream) === 1, 5000, "the follower to attach");
      if (pauseBeforeDisconnect) socket.pause();
      // Far more than the socket buffers hold: the server's write() returns false and it waits.
      const big = "x".repeat(64 * 1024);
      for (let i = 0; i < 80; i++) await server.app.log.append(stream, "bench.big", { i, big });
      await new Promise((resolve) => setTimeout(resolve, 100));
      socket.destroy();
      await until(() => listenersOn(server.app.bus, stream) === 0, 5000, "the follower to detach");
      assert.is(listenersOn(server.app.bus, stream), 0);
    } finally {
      await server.close();
    }
  });
}

test.run();

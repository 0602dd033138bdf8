// A stream's follower lives exactly as long as its client: a client that stops reading and then
// disconnects leaves nothing attached to the bus, so
// dropped clients cannot grow the server's memory.
import { test } from "uvu";
import * as assert from "uvu/assert";
import net from "node:net";
import http from "node:http";
import { openSse } from "../helpers/sse.ts";
import { getEventListeners } from "node:events";
import { startTestServer } from "../helpers/server.ts";
import { topicOf } from "../../src/log/bus.ts";

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
      await server.app.prisma.todoList.create({
        data: { id: listId, requester: "bench", text: "-", tokenBudget: 1, status: "finished" },
      });
      const stream = `list:${listId}`;
      const { port } = new URL(server.url);
      const serverSide = new Promise<net.Socket>((resolve) => server.http.once("connection", resolve));
      const socket = net.connect(Number(port), "127.0.0.1");
      await new Promise((resolve) => socket.once("connect", resolve));
      const theirs = await serverSide;
      let received = 0;
      socket.on("data", (chunk: Buffer) => (received += chunk.length));
      socket.write(
        `GET /api/events?list_id=${listId} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n`,
      );
      await until(() => received > 0, 5000, "the response head");
      await until(() => listenersOn(server.app.bus, stream) === 1, 5000, "the follower to attach");
      if (pauseBeforeDisconnect) socket.pause();
      // Far more than the socket buffers hold: the server's write() returns false and it waits.
      const big = "x".repeat(64 * 1024);
      for (let i = 0; i < 80; i++) await server.app.log.append(stream, "bench.big", { i, big });
      // The state to disconnect in: a paused client has the server's writes backed up (its socket
      // wants a drain); a reading one has had every event.
      if (pauseBeforeDisconnect) await until(() => theirs.writableNeedDrain, 10_000, "the server's writes to back up");
      else await until(() => received >= 80 * big.length, 20_000, "every event to arrive");
      socket.destroy();
      await until(() => listenersOn(server.app.bus, stream) === 0, 5000, "the follower to detach");
      assert.is(listenersOn(server.app.bus, stream), 0);
    } finally {
      await server.close();
    }
  });
}

test("a client that falls behind catches up from the log: every event once, in order, while others stay live", async () => {
  const server = await startTestServer();
  try {
    const listId = "lifetime-lagging";
    await server.app.prisma.todoList.create({
      data: { id: listId, requester: "bench", text: "-", tokenBudget: 1, status: "finished" },
    });
    const stream = `list:${listId}`;
    for (let i = 0; i < 5; i++) await server.app.log.append(stream, "early", { i });
    const live = await openSse(`${server.url}/api/events?list_id=${listId}`);
    let text = "";
    let response!: http.IncomingMessage;
    await new Promise<void>((resolve) => {
      http.get(`${server.url}/api/events?list_id=${listId}`, { headers: { "last-event-id": "2" } }, (res) => {
        response = res;
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (text += chunk));
        resolve();
      });
    });
    await until(() => text.includes("id: 5\n"), 5000, "the slow client's replay");
    response.pause();
    const big = "y".repeat(32 * 1024);
    const total = 120;
    for (let i = 0; i < total; i++) await server.app.log.append(stream, "bench.big", { i, big });
    await live.waitForCount(5 + total, 10_000);
    response.resume();
    await until(() => text.includes(`id: ${5 + total}\n`), 10_000, "the slow client to catch up");
    const ids = [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
    assert.equal(
      ids,
      Array.from({ length: 3 + total }, (_, i) => i + 3),
      "no gap, no duplicate",
    );
    assert.equal(
      live.messages().map((m) => Number(m.id)),
      Array.from({ length: 5 + total }, (_, i) => i + 1),
    );
    response.destroy();
    live.close();
    await until(() => listenersOn(server.app.bus, stream) === 0, 5000, "the follower to detach");
  } finally {
    await server.close();
  }
});

test.run();

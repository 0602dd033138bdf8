// A request on its way in is bounded in time and always answered: a client that declares a body
// over the limit and waits (or trickles) gets its 413 within the drain time, never a close with no
// answer; one that stops halfway through its headers or body gets a 408 once
// CROWS_REQUEST_TIMEOUT_MS passes, never a connection held for Node's five minutes. A stream, a
// slow but steady upload and a kept-alive connection are not cut by it.
import { test } from "uvu";
import * as assert from "uvu/assert";
import net from "node:net";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { rawExchange, parseRaw, RawConnection, type RawResponse } from "../helpers/raw-http.ts";
import { openSse } from "../helpers/sse.ts";

// Above body.ts's 3 s drain, as the default (30 s) is, so an oversized body's 413 comes before any 408.
const REQUEST_TIMEOUT_MS = 5_000;
/** body.ts drains an oversized body for 3 s before answering anyway; this is that, with room for a loaded machine. */
const DRAIN_BOUND_MS = 8_000;

let server: TestServer;
let port: number;
let host: string;

test.before(async () => {
  server = await startTestServer({
    env: { CROWS_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS), CROWS_HEARTBEAT_MS: "200" },
  });
  port = Number(new URL(server.url).port);
  host = `127.0.0.1:${port}`;
});
test.after(async () => {
  await server.close();
});

const head = (path: string, length: number | "chunked", type = "application/json") =>
  `POST ${path} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: ${type}\r\n${length === "chunked" ? "Transfer-Encoding: chunked" : `Content-Length: ${length}`}\r\n\r\n`;

function assertJson(response: RawResponse, status: number, what: string): Record<string, unknown> {
  assert.is(response.status, status, `${what}: status (${JSON.stringify(response.text.slice(0, 120))})`);
  assert.match(response.headers["content-type"] ?? "", /application\/json/, `${what}: JSON`);
  const body = JSON.parse(response.body) as Record<string, unknown>;
  assert.type(body.message, "string", `${what}: a message`);
  return body;
}

async function stillServing(): Promise<void> {
  const { status } = await server.get("/api/nests");
  assert.is(status, 200, "the server still answers");
}

/** Writes `first`, then `chunk` every `everyMs` until the server answers or closes; the answer as read. */
function trickle(
  first: string,
  chunk: string,
  everyMs: number,
  waitMs: number,
): Promise<RawResponse & { sentBytes: number }> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    const received: Buffer[] = [];
    let sentBytes = 0;
    let settled = false;
    const timer = setInterval(() => {
      if (!socket.writable) return;
      socket.write(chunk);
      sentBytes += chunk.length;
    }, everyMs);
    const finish = (closed: boolean) => {
      if (settled) return;
      settled = true;
      clearInterval(timer);
      clearTimeout(giveUp);
      socket.destroy();
      resolve({ ...parseRaw(Buffer.concat(received).toString("latin1"), closed), sentBytes });
    };
    const giveUp = setTimeout(() => finish(false), waitMs);
    socket.on("connect", () => socket.write(first));
    socket.on("data", (data) => received.push(data));
    socket.on("close", () => finish(true));
    socket.on("error", () => finish(true)); // writes after the server closed: the answer is already read
  });
}

test("a body declared over the limit, with nothing sent after the headers, is a 413 within the drain time on every route", async () => {
  const listsBefore = await server.app.prisma.todoList.count();
  const cases: Array<[string, number]> = [];
  for (const path of ["/api/lists", "/api/nests", "/api/webhooks", "/api/verdicts", "/graphql", "/api/nowhere"]) {
    for (const length of [1_000_001, 5_000_000, 999_999_999_999]) cases.push([path, length]);
  }
  const started = Date.now();
  const answers = await Promise.all(
    cases.map(([path, length]) => rawExchange(port, head(path, length), DRAIN_BOUND_MS + 2_000)),
  );
  answers.forEach((answer, i) => {
    const [path, length] = cases[i]!;
    const body = assertJson(answer, 413, `${path} declaring ${length}`);
    assert.is(body.limit_bytes, 1_000_000);
    assert.is(answer.headers.connection?.toLowerCase(), "close", `${path} ${length}: Connection: close`);
    assert.ok(answer.closed, `${path} ${length}: the server closed the connection after answering`);
  });
  assert.ok(Date.now() - started < DRAIN_BOUND_MS, `answered in ${Date.now() - started} ms`);
  assert.is(await server.app.prisma.todoList.count(), listsBefore, "nothing stored");
  await stillServing();
});

test("a body over the limit sent slowly, or too large to drain, is answered with its 413 while the client still sends", async () => {
  const trickles = [
    ["a trickle of a declared 2 MB", head("/api/lists", 2_000_000), "x".repeat(100), 100],
    ["a trickle to GraphQL", head("/graphql", 1_500_000), "x".repeat(1_000), 20],
    [
      "a trickle of a chunked body",
      head("/api/lists", "chunked") + `f4240\r\n${"y".repeat(1_000_000)}\r\n`,
      "10\r\n" + "z".repeat(16) + "\r\n",
      50,
    ],
  ] as const;
  const answers = await Promise.all(
    trickles.map(([, first, chunk, everyMs]) => trickle(first, chunk, everyMs, DRAIN_BOUND_MS + 2_000)),
  );
  answers.forEach((answer, i) => {
    const what = trickles[i]![0];
    assertJson(answer, 413, what);
    assert.ok(answer.closed, `${what}: closed after the answer`);
  });
  // Past the 16 MB cap the 413 goes at once, but to a client that writes on flat out the close
  // may come as a reset before it reads the answer (TCP's rule, not the server's): it gets the
  // 413 or a closed connection, nothing else, and never a connection left open.
  const flood = await trickle(head("/graphql", 40_000_000), "w".repeat(1_000_000), 5, DRAIN_BOUND_MS + 2_000);
  assert.ok(flood.closed, "a flood past the cap: closed");
  assert.ok(flood.status === 413 || flood.status === 0, `a flood past the cap: ${flood.status}`);
  assert.ok(flood.sentBytes < 200_000_000, `cut off after ${flood.sentBytes} bytes`);
  await stillServing();
});

test("a write that is not JSON and declares a large body it never sends is a 415 that closes the connection", async () => {
  const types = ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"];
  const answers = await Promise.all(
    types.map((type) => rawExchange(port, head("/api/lists", 500_000, type), DRAIN_BOUND_MS + 2_000)),
  );
  answers.forEach((answer, i) => {
    const type = types[i]!;
    assertJson(answer, 415, type);
    assert.is(
      answer.headers.connection?.toLowerCase(),
      "close",
      `${type}: the unread body is not left on a kept-alive connection`,
    );
    assert.ok(answer.closed, `${type}: closed`);
  });
  await stillServing();
});

test("a request that stops halfway through its headers or body is a 408 once CROWS_REQUEST_TIMEOUT_MS passes", async () => {
  const listsBefore = await server.app.prisma.todoList.count();
  const halves: Array<[string, string]> = [
    ["the request line only", "POST /api/lists HTTP/1.1\r\n"],
    ["half a header", `POST /api/lists HTTP/1.1\r\nHost: ${host}\r\nContent-Ty`],
    ["headers without their blank line", `GET /api/nests HTTP/1.1\r\nHost: ${host}\r\n`],
    ["10 of 50 declared bytes", head("/api/lists", 50) + '{"text":"a'],
    ["a body with no byte of it", head("/api/nests", 30)],
    ["a chunk cut short", head("/api/lists", "chunked") + '40\r\n{"text":"- one", "req'],
    ["a GraphQL body cut short", head("/graphql", 200) + '{"query":"{ __typename'],
  ];
  const started = Date.now();
  const answers = await Promise.all(
    halves.map(([, request]) => rawExchange(port, request, REQUEST_TIMEOUT_MS * 3 + 5_000)),
  );
  answers.forEach((answer, i) => {
    const what = halves[i]![0];
    assertJson(answer, 408, what);
    assert.ok(answer.closed, `${what}: the connection closed`);
  });
  const took = Date.now() - started;
  assert.ok(took >= REQUEST_TIMEOUT_MS - 100, `not before the timeout: ${took} ms`);
  assert.ok(took < REQUEST_TIMEOUT_MS * 3, `not much after it: ${took} ms`);
  assert.is(await server.app.prisma.todoList.count(), listsBefore, "nothing half-sent was stored");
  await stillServing();
});

test("the timeout is for arriving only: a stream held past it, a slow steady upload and a kept-alive connection are not cut", async () => {
  const stream = await openSse(`${server.url}/api/events?nest_id=todo`);
  assert.is(stream.status, 200);

  // A 300 KB list sent in 20 pieces over about a second: within the time, so accepted.
  const body = JSON.stringify({ text: `- ${"slow ".repeat(60_000)}`, requester: "steady" });
  const pieces = Array.from({ length: 20 }, (_, i) => body.slice((i * body.length) / 20, ((i + 1) * body.length) / 20));
  const upload = await new Promise<RawResponse>((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    const received: Buffer[] = [];
    socket.on("connect", async () => {
      socket.write(
        `POST /api/lists HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`,
      );
      for (const piece of pieces) {
        socket.write(piece);
        await new Promise((r) => setTimeout(r, 50));
      }
    });
    socket.on("data", (data) => received.push(data));
    socket.on("close", () => resolve(parseRaw(Buffer.concat(received).toString("latin1"), true)));
  });
  assert.ok(
    upload.status === 202 || upload.status === 400,
    `judged on its content, not cut: ${upload.status} ${upload.body.slice(0, 120)}`,
  );
  if (upload.status === 400) assert.not.match(upload.body, /too long to arrive/);

  // A kept-alive connection used every 2 s (inside the 5 s keep-alive) for longer than the timeout
  // still answers: the time is each request's, not the connection's. The stream, open all along,
  // still gets its heartbeats.
  const connection = new RawConnection(port);
  const opened = Date.now();
  while (Date.now() - opened < REQUEST_TIMEOUT_MS * 1.5) {
    const answer = await connection.send(`GET /api/nests HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
    assert.is(answer.status, 200, `${Date.now() - opened} ms into the kept-alive connection`);
    await new Promise((r) => setTimeout(r, 2_000));
  }
  assert.not.ok(connection.isClosed());
  connection.close();
  await stream.waitForNextComment(2_000);
  assert.not.ok(stream.ended(), "the stream is still open");
  stream.close();
  await stillServing();
});

test.run();

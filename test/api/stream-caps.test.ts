// SSE stream caps: per client address and in all, on REST SSE and both GraphQL SSE transports.
// Past the per-address cap a 429, past the total a 503, each with Retry-After and a log line, while
// /healthz, REST reads and ordinary GraphQL queries keep being answered. A closed stream gives its
// slot back. The caps stay below the fd limit by a stated headroom; /metrics reports the fd limit.
// Streams are raw sockets on loopback, from several loopback addresses (127.0.0.x).
import { test } from "uvu";
import * as assert from "uvu/assert";
import net from "node:net";
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { fdLimit, headroomFor, streamCaps } from "../../src/server/stream-caps.ts";

const PER_CLIENT = 4;
const TOTAL = 7;

let server: TestServer;
let port: number;
const logLines: string[] = [];
const held: net.Socket[] = [];

test.before(async () => {
  server = await startTestServer({
    env: { CROWS_MAX_STREAMS: String(TOTAL), CROWS_MAX_STREAMS_PER_CLIENT: String(PER_CLIENT) },
    deps: { logLine: (line: string) => logLines.push(line) },
  });
  port = Number(new URL(server.url).port);
});
test.after(async () => {
  for (const socket of held) socket.destroy();
  await server.close();
});

interface Opened {
  status: number;
  head: string;
  socket: net.Socket;
}

/** Sends `request` from `localAddress` and resolves once the response head has arrived; the socket stays open. */
function openRaw(request: string, localAddress = "127.0.0.1"): Promise<Opened> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: "127.0.0.1", localAddress });
    let text = "";
    const timer = setTimeout(() => reject(new Error(`no answer to ${request.split("\r\n")[0]}`)), 10_000);
    socket.on("connect", () => socket.write(request));
    socket.on("data", (chunk) => {
      text += chunk.toString("latin1");
      const end = text.indexOf("\r\n\r\n");
      if (end === -1) return;
      clearTimeout(timer);
      socket.removeAllListeners("data");
      resolve({
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0),
        head: text.slice(0, end).toLowerCase(),
        socket,
      });
    });
    socket.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

const host = () => `Host: 127.0.0.1:${port}\r\n`;
const restStream = (listId: string) =>
  `GET /api/events?list_id=${listId} HTTP/1.1\r\n${host()}Accept: text/event-stream\r\n\r\n`;
const subscription = JSON.stringify({ query: "subscription { trustChanges(after: 0) { id } }" });
const yogaSse = () =>
  `POST /graphql HTTP/1.1\r\n${host()}Content-Type: application/json\r\nAccept: text/event-stream\r\nContent-Length: ${subscription.length}\r\n\r\n${subscription}`;
const yogaSseNoAccept = () =>
  `GET /graphql?query=${encodeURIComponent("subscription { trustChanges(after: 0) { id } }")} HTTP/1.1\r\n${host()}\r\n`;
const graphqlSse = () =>
  `POST /graphql/stream HTTP/1.1\r\n${host()}Content-Type: application/json\r\nAccept: text/event-stream\r\nContent-Length: ${subscription.length}\r\n\r\n${subscription}`;

async function hold(request: string, from: string): Promise<void> {
  const opened = await openRaw(request, from);
  assert.is(opened.status, 200, `${request.split("\r\n")[0]} from ${from}: ${opened.head}`);
  assert.match(opened.head, /content-type: text\/event-stream/);
  held.push(opened.socket);
}

async function assertRefused(request: string, from: string, status: number): Promise<void> {
  const opened = await openRaw(request, from);
  opened.socket.destroy();
  assert.is(opened.status, status, `${request.split("\r\n")[0]} from ${from}: ${opened.head.split("\r\n")[0]}`);
  assert.match(opened.head, /retry-after: 5/);
}

async function ordinaryRequestsAnswer(): Promise<void> {
  assert.is((await fetch(server.url + "/healthz")).status, 200, "/healthz");
  assert.is((await server.get("/api/nests")).status, 200, "a REST read");
  const query = await fetch(server.url + "/graphql", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ query: "{ roster }" }),
  });
  assert.is(query.status, 200, "an ordinary GraphQL query");
  const noAccept = await fetch(`${server.url}/graphql?query=${encodeURIComponent("{ roster }")}`, {
    headers: { accept: "*/*" },
  });
  assert.is(noAccept.status, 200, "a GraphQL GET that takes any type");
}

test("the caps: below the fd limit by the headroom, configured values held to it", () => {
  for (const [fd, headroom] of [
    [1024, 256],
    [4096, 409],
    [20_000, 1024],
    [1_048_576, 1024],
    [300, 256],
  ] as const) {
    assert.is(headroomFor(fd), headroom, `headroom for ${fd}`);
    const caps = streamCaps({}, fd);
    assert.is(caps.total, Math.max(1, fd - headroom), `total for ${fd}`);
    assert.is(caps.perClient, Math.max(1, Math.floor(caps.total / 2)), `per client for ${fd}`);
    assert.ok(caps.total + caps.headroom <= Math.max(fd, 1 + caps.headroom));
  }
  assert.equal(
    streamCaps({ maxStreams: 50_000, maxStreamsPerClient: 60_000 }, 20_000),
    { total: 18_976, perClient: 18_976, fdLimit: 20_000, headroom: 1024 },
    "never above the fd limit less the headroom",
  );
  assert.equal(streamCaps({ maxStreams: 10, maxStreamsPerClient: 3 }, 20_000), {
    total: 10,
    perClient: 3,
    fdLimit: 20_000,
    headroom: 1024,
  });
  assert.equal(streamCaps({}, undefined), { total: 10_000, perClient: 5_000, fdLimit: undefined, headroom: 0 });
  const dir = mkdtempSync(path.join(os.tmpdir(), "crows-limits-"));
  const file = path.join(dir, "limits");
  writeFileSync(
    file,
    "Limit                     Soft Limit           Hard Limit           Units\nMax open files            4096                 524288               files\n",
  );
  assert.is(fdLimit(file), 4096);
  writeFileSync(file, "Max open files            unlimited            unlimited            files\n");
  assert.is(fdLimit(file), undefined);
  assert.is(fdLimit(path.join(dir, "absent")), undefined);
});

test("/metrics reports the fd limit and the caps in force", async () => {
  const text = await (await fetch(server.url + "/metrics")).text();
  assert.match(text, new RegExp(`^crows_fd_limit ${fdLimit() ?? 0}$`, "m"));
  assert.match(text, new RegExp(`^crows_sse_stream_caps\\{cap="total"\\} ${TOTAL}$`, "m"));
  assert.match(text, new RegExp(`^crows_sse_stream_caps\\{cap="per_client"\\} ${PER_CLIENT}$`, "m"));
});

test("past the per-address cap a 429, past the total a 503, on every transport; everything else is served", async () => {
  const list = await server.post("/api/lists", { text: "buy milk", requester: "streams" });
  const listId = list.body.list_id as string;
  // 127.0.0.1 fills its own cap with one stream of each kind.
  const kinds = [restStream(listId), yogaSse(), graphqlSse(), yogaSseNoAccept()];
  for (const request of kinds) await hold(request, "127.0.0.1");
  for (const request of kinds) await assertRefused(request, "127.0.0.1", 429);
  await ordinaryRequestsAnswer();
  // Another address still gets streams, until the total is reached.
  for (let i = PER_CLIENT; i < TOTAL; i++) await hold(kinds[i % kinds.length]!, "127.0.0.2");
  for (const request of kinds) await assertRefused(request, "127.0.0.3", 503);
  await ordinaryRequestsAnswer();
  const lines = logLines.filter((l) => l.startsWith("streams: refused"));
  assert.ok(
    lines.some((l) => l.includes("per address")),
    lines.join("\n"),
  );
  assert.ok(
    lines.some((l) => l.includes("total cap of 7")),
    lines.join("\n"),
  );
  assert.ok(lines.length <= 2, `a line per cap, not per refusal: ${lines.length}`);
  const metrics = await (await fetch(server.url + "/metrics")).text();
  assert.match(metrics, /crows_sse_streams_refused_total\{reason="client"\} 4/);
  assert.match(metrics, /crows_sse_streams_refused_total\{reason="total"\} 4/);

  // A closed stream gives its slot back: once the server has seen the close, a new one opens.
  held.shift()!.destroy();
  const until = Date.now() + 10_000;
  for (;;) {
    const opened = await openRaw(restStream(listId), "127.0.0.4");
    if (opened.status === 200) {
      held.push(opened.socket);
      break;
    }
    opened.socket.destroy();
    assert.is(opened.status, 503);
    if (Date.now() > until) assert.unreachable("the slot never came back");
    await new Promise((resolve) => setImmediate(resolve));
  }
  await ordinaryRequestsAnswer();
});

test("many refused streams in a row leave the server answering", async () => {
  for (let i = 0; i < 200; i++) {
    const opened = await openRaw(restStream("x"), `127.0.0.${5 + (i % 50)}`);
    opened.socket.destroy();
    assert.is(opened.status, 503);
  }
  await ordinaryRequestsAnswer();
});

test.run();

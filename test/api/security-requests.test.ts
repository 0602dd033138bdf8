// No request crashes the server or wedges a connection: broken request targets, broken
// percent-encoding, broken JSON, a Host that is not ours, wrong content types and oversized bodies
// all get a 4xx with {"message"} over a raw socket, and the server keeps serving.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { rawExchange, RawConnection } from "../helpers/raw-http.ts";

let server: TestServer;
let port: number;
let host: string;

test.before(async () => {
  server = await startTestServer({ env: { CROWS_PUBLIC_HOSTS: "crows.example.org" } });
  port = Number(new URL(server.url).port);
  host = `127.0.0.1:${port}`;
});
test.after(async () => {
  await server.close();
});

const get = (target: string, headers = `Host: ${host}\r\n`) =>
  rawExchange(port, `GET ${target} HTTP/1.1\r\n${headers}Connection: close\r\n\r\n`);

async function stillServing(): Promise<void> {
  const { status, body } = await server.get("/api/nests");
  assert.is(status, 200, "the server still answers");
  assert.ok(Array.isArray(body.nests));
}

async function listCount(): Promise<number> {
  return server.app.prisma.todoList.count();
}

function assertJsonMessage(
  response: { status: number; headers: Record<string, string>; body: string },
  status: number,
  what: string,
): void {
  assert.is(response.status, status, `${what}: status`);
  assert.match(response.headers["content-type"] ?? "", /application\/json/, `${what}: JSON`);
  const parsed = JSON.parse(response.body) as { message?: unknown };
  assert.type(parsed.message, "string", `${what}: a message`);
  assert.not.match(String(parsed.message), /\/work\/|node_modules|at .+\(/, `${what}: no paths or stack`);
}

test("request targets the URL parser rejects are a 400 with a JSON message, and the server keeps serving", async () => {
  const targets = [
    "//[",
    "//%",
    "//a:99999/",
    "http://[",
    "//xn--/",
    "//1.2.3.4.5/",
    "//",
    "///api/nests",
    "//attacker.example/api/nests",
    "//[::1/api",
    "//@/",
    "//a b",
    "*",
    "api/nests",
    "ftp://x/",
    "http://",
    "http://[::1/api/nests",
    "/%",
    "/%zz",
    "/api/%",
    "/api/nests/%E0%A4%A/messages",
    "/api/nests/%E0%A4/messages",
    "/api/nests/%FF/messages",
    "/api/nests/%C0%80/messages",
    "/api/nests/%ED%A0%80/messages",
    "/graphql%",
  ];
  for (const target of targets) {
    const response = await get(target);
    assertJsonMessage(response, 400, JSON.stringify(target));
  }
  await stillServing();
});

test("a broken request line or header still gets JSON, and the server keeps serving", async () => {
  const broken = [
    "GET / HTTP/9.9\r\n\r\n",
    "GET\r\n\r\n",
    "BREW /api/nests HTTP/1.1\r\nHost: x\r\n\r\n",
    `GET /api/nests HTTP/1.1\r\nHost: ${host}\r\nBad Header\r\n\r\n`,
    `GET /api/nests HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n`,
    `POST /api/lists HTTP/1.1\r\nHost: ${host}\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\nZZ\r\n`,
    `GET /api/nests HTTP/1.1\r\nHost: ${host}\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`,
  ];
  for (const request of broken) {
    const response = await rawExchange(port, request);
    assert.ok(
      response.status >= 400 && response.status < 500,
      `${JSON.stringify(request.slice(0, 40))}: got ${response.status}`,
    );
    assert.ok(response.closed, "the connection is closed, not left hanging");
    if (response.body) assert.type(JSON.parse(response.body).message, "string");
  }
  await stillServing();
});

test("headers over the parser's limit are a 431 with a JSON message and a closed connection, however they are made big", async () => {
  const oversized = [
    `GET /api/nests HTTP/1.1\r\nHost: ${host}\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`,
    `GET /api/nests HTTP/1.1\r\nHost: ${host}\r\n${Array.from({ length: 600 }, (_, i) => `X-H${i}: ${"v".repeat(30)}\r\n`).join("")}\r\n`,
    `GET /api/nests HTTP/1.1\r\nHost: ${host}\r\nCookie: ${Array.from({ length: 900 }, (_, i) => `c${i}=${"x".repeat(20)}`).join("; ")}\r\n\r\n`,
    `GET /api/nests?q=${"q".repeat(20_000)} HTTP/1.1\r\nHost: ${host}\r\n\r\n`,
    `POST /api/lists HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nX-Pad: ${"p".repeat(17_000)}\r\nContent-Length: 2\r\n\r\n{}`,
  ];
  const before = await listCount();
  for (const request of oversized) {
    const response = await rawExchange(port, request);
    const what = JSON.stringify(request.slice(0, 50));
    assertJsonMessage(response, 431, what);
    assert.equal(JSON.parse(response.body), { message: "The request headers are too large." }, what);
    assert.is(response.headers.connection?.toLowerCase(), "close", `${what}: connection close`);
    assert.ok(response.closed, `${what}: the connection is closed`);
  }
  assert.is(await listCount(), before, "nothing was stored");
  await stillServing();
});

test("a Host that is not the server's own is a 421; its own loopback names and a configured public name pass", async () => {
  for (const bad of [
    "attacker.example",
    `attacker.example:${port}`,
    "127.0.0.1.nip.io",
    "localhost.attacker.example",
    "localhost.",
    "10.0.0.1",
    "[::2]",
    "a b",
    "127.0.0.1:1:2",
    "0.0.0.0",
  ]) {
    const response = await get("/api/nests", `Host: ${bad}\r\n`);
    assertJsonMessage(response, 421, `Host ${JSON.stringify(bad)}`);
  }
  assertJsonMessage(await get("/api/nests", ""), 421, "no Host (HTTP/1.1)");
  assertJsonMessage(await rawExchange(port, "GET /api/nests HTTP/1.0\r\n\r\n"), 421, "no Host (HTTP/1.0)");
  for (const good of [
    `127.0.0.1:${port}`,
    `localhost:${port}`,
    `LOCALHOST:${port}`,
    `[::1]:${port}`,
    "localhost",
    "crows.example.org",
    `crows.example.org:443`,
  ]) {
    const response = await get("/api/nests", `Host: ${good}\r\n`);
    assert.is(response.status, 200, `Host ${good}`);
  }
  // GraphQL sits behind the same check.
  assertJsonMessage(
    await get("/graphql?query=%7B__typename%7D", "Host: attacker.example\r\n"),
    421,
    "GraphQL with a foreign Host",
  );
});

test("writes accept only application/json: text/plain, forms and friends are a 415 and store nothing", async () => {
  const before = await listCount();
  const body = JSON.stringify({ text: "buy milk", requester: "ana" });
  for (const type of [
    "text/plain",
    "text/plain;charset=UTF-8",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x",
    "application/jsonx",
    "text/json",
    "",
  ]) {
    const headers: Record<string, string> = type ? { "content-type": type } : {};
    const response = await fetch(server.url + "/api/lists", { method: "POST", headers, body });
    assert.is(response.status, 415, `content-type ${JSON.stringify(type)}`);
    assert.type((await response.json()).message, "string");
  }
  const form = await fetch(server.url + "/graphql", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: `query=${encodeURIComponent('mutation { submitList(text: "x", requester: "ana") { __typename } }')}`,
  });
  assert.is(form.status, 415);
  assert.is(await listCount(), before, "nothing was stored");
  const json = await server.request("POST", "/api/lists", body, { "content-type": "Application/JSON; charset=utf-8" });
  assert.is(json.status, 202, "JSON with a charset and any case is fine");
});

test("a 415 on a keep-alive connection leaves it usable: the body is drained", async () => {
  const connection = new RawConnection(port);
  const body = "x".repeat(50_000);
  const refused = await connection.send(
    `POST /api/lists HTTP/1.1\r\nHost: ${host}\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
  );
  assert.is(refused.status, 415);
  const next = await connection.send(`GET /api/nests HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
  assert.is(next.status, 200, "the next request on the same connection is answered");
  connection.close();
});

test("a body over the limit is a 413 that reaches the client, the connection closes cleanly, nothing hangs", async () => {
  const big = JSON.stringify({ text: "x".repeat(2_000_000), requester: "ana" });
  // Declared too large, whole body sent: the 413 arrives and the server closes the connection.
  const declared = await rawExchange(
    port,
    `POST /api/lists HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: ${big.length}\r\n\r\n${big}`,
  );
  assertJsonMessage(declared, 413, "declared length");
  assert.is(declared.headers.connection?.toLowerCase(), "close");
  assert.ok(declared.closed, "closed, not hanging");

  // Chunked, no length: found out while reading.
  const chunk = "y".repeat(100_000);
  const parts = [
    `POST /api/nests HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
  ];
  for (let i = 0; i < 15; i++) parts.push(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
  parts.push("0\r\n\r\n");
  const chunked = await rawExchange(port, parts);
  assertJsonMessage(chunked, 413, "chunked");
  assert.ok(chunked.closed);

  // On a keep-alive connection: 413, then the connection is closed (the next request goes on a new one).
  const connection = new RawConnection(port);
  const refused = await connection.send(
    `POST /api/lists HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: ${big.length}\r\n\r\n${big}`,
  );
  assert.is(refused.status, 413);
  assert.ok(await connection.closesWithin(10_000), "the server closed the connection instead of leaving it half-read");
  connection.close();

  // GraphQL shares the limit: a 3 MB variable is refused the same way.
  const variables = { text: "z".repeat(3_000_000) };
  const graphql = await fetch(server.url + "/graphql", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      query: 'mutation($text: String!) { submitList(text: $text, requester: "ana") { __typename } }',
      variables,
    }),
  });
  assert.is(graphql.status, 413);
  assert.type((await graphql.json()).message, "string");

  // A body just under the limit is read (and judged on its content).
  const under = await server.post("/api/lists", { text: "x".repeat(900_000), requester: "ana" });
  assert.ok(under.status === 400 || under.status === 202, `under the limit: ${under.status}`);
  await stillServing();
});

test("bad JSON and bad GraphQL GET parameters are a 400, never a 500", async () => {
  for (const [path, body] of [
    ["/api/lists", "{nope"],
    ["/api/lists", "[1,2"],
    ["/api/lists", '"\\ud800"x'],
    ["/api/verdicts", "null"],
    ["/api/nests", "123"],
  ] as const) {
    const response = await server.request("POST", path, body, { "content-type": "application/json" });
    assert.is(response.status, 400, `${path} ${body}`);
    assert.type(response.body.message, "string");
  }
  for (const search of [
    "query={__typename}&variables={",
    "query={__typename}&variables=[",
    "query={__typename}&extensions={x",
    "query={",
    "query=" + "{a".repeat(2000),
  ]) {
    const response = await get(`/graphql?${search.replace(/[{}[\] ]/g, (c) => encodeURIComponent(c))}`);
    assert.ok(response.status === 400 || response.status === 200, `${search.slice(0, 40)}: ${response.status}`);
    assert.not.match(response.body, /\/work\/|node_modules|\n\s+at /);
    const parsed = JSON.parse(response.body);
    assert.ok(parsed.errors?.length > 0, "a GraphQL error, not data");
  }
  // The exact target, raw braces and all, as curl sends it.
  const exact = await get("/graphql?query={__typename}&variables={");
  assert.is(exact.status, 400);
  await stillServing();
});

test.run();

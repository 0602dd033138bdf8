// Tokens and origins: with CROWS_TOKEN set every path asks for it (Bearer or the crows_token cookie
// that GET /?token= sets); read-only tokens query and subscribe but never write; CORS answers only
// the origins in CROWS_CORS_ORIGINS and never reflects another; the token never shows up in a log
// line, a stored event or an error. Plus the configuration rules that guard them.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { openSse } from "../helpers/sse.ts";
import { loadConfig, ConfigError } from "../../src/base/config.ts";

const OWNER = "owner-token-0123456789abcdef";
const READER = "reader-token-0123456789abcdef";
const LISTED = "http://localhost:5173";
const UNLISTED = "http://evil.example";

let server: TestServer;
const logs: string[] = [];

test.before(async () => {
  server = await startTestServer({
    env: {
      CROWS_TOKEN: OWNER,
      CROWS_READ_TOKENS: `other-reader-token-000000,${READER}`,
      CROWS_CORS_ORIGINS: `${LISTED}, http://127.0.0.1:9`,
    },
    deps: { logLine: (line) => logs.push(line) },
  });
});
test.after(async () => {
  await server.close();
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const call = (path: string, init: RequestInit = {}) => fetch(server.url + path, { redirect: "manual", ...init });
const submit = (headers: Record<string, string>) =>
  call("/api/lists", {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ text: "buy milk", requester: "ana" }),
  });
const graphql = (query: string, headers: Record<string, string>) =>
  call("/graphql", {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ query }),
  });

test("without a token every path is a 401 with a message; with a wrong one too", async () => {
  for (const headers of [
    {} as Record<string, string>,
    bearer("wrong-token-0123456789abcdef"),
    bearer(OWNER.slice(0, -1)),
    bearer(OWNER + "x"),
    { authorization: OWNER },
    { authorization: `Basic ${OWNER}` },
    { cookie: "crows_token=nope" },
    { cookie: `other=${OWNER}` },
  ]) {
    for (const path of [
      "/api/nests",
      "/api/trust",
      "/graphql?query=%7B__typename%7D",
      "/api/events?list_id=x",
      "/",
      "/nope",
    ]) {
      const response = await call(path, { headers });
      assert.is(response.status, 401, `${path} with ${JSON.stringify(headers)}`);
      assert.match(response.headers.get("www-authenticate") ?? "", /^Bearer/);
      const body = await response.json();
      assert.type(body.message, "string");
    }
  }
  const post = await submit({});
  assert.is(post.status, 401);
  assert.is(await server.app.prisma.todoList.count(), 0, "nothing was stored");
});

test("the owner's token works as a Bearer header (any case of the scheme) and as the cookie", async () => {
  assert.is((await call("/api/nests", { headers: bearer(OWNER) })).status, 200);
  assert.is((await call("/api/nests", { headers: { authorization: `bearer  ${OWNER}` } })).status, 200);
  assert.is((await call("/api/nests", { headers: { cookie: `a=b; crows_token=${OWNER}; c=d` } })).status, 200);
  assert.is((await submit(bearer(OWNER))).status, 202);
  const gql = await graphql(
    'mutation { createNest(name: "Owner room", crows: ["Pepper"]) { __typename } }',
    bearer(OWNER),
  );
  assert.equal((await gql.json()).data.createNest.__typename, "Nest");
});

test("GET /?token= sets an HttpOnly, SameSite=Strict cookie and redirects to / so the token leaves the address bar", async () => {
  const response = await call(`/?token=${OWNER}`);
  assert.is(response.status, 303);
  assert.is(response.headers.get("location"), "/");
  const cookie = response.headers.get("set-cookie") ?? "";
  assert.match(cookie, new RegExp(`^crows_token=${OWNER};`));
  assert.match(cookie, /HttpOnly/);
  assert.match(cookie, /SameSite=Strict/);
  assert.match(cookie, /Path=\//);
  assert.match(response.headers.get("referrer-policy") ?? "", /no-referrer/);

  const reader = await call(`/?token=${READER}`);
  assert.is(reader.status, 303);
  assert.match(reader.headers.get("set-cookie") ?? "", new RegExp(`^crows_token=${READER};`));

  for (const bad of ["nope", "", OWNER.toUpperCase(), `${OWNER};Path=/`]) {
    const refused = await call(`/?token=${encodeURIComponent(bad)}`);
    assert.is(refused.status, 401, `token ${JSON.stringify(bad)}`);
    assert.is(refused.headers.get("set-cookie"), null);
  }
});

test("a read-only token queries and subscribes but never writes (REST 403, GraphQL mutation 403), and stores nothing", async () => {
  const lists = await server.app.prisma.todoList.count();
  const nests = await server.app.prisma.nest.count();
  assert.is((await call("/api/nests", { headers: bearer(READER) })).status, 200);
  const refused = await submit(bearer(READER));
  assert.is(refused.status, 403);
  assert.type((await refused.json()).message, "string");
  for (const path of ["/api/verdicts", "/api/nests", "/api/nests/todo/messages"]) {
    const response = await call(path, {
      method: "POST",
      headers: { "content-type": "application/json", ...bearer(READER) },
      body: "{}",
    });
    assert.is(response.status, 403, path);
  }
  const query = await graphql("{ personas { name } }", bearer(READER));
  assert.is(query.status, 200);
  assert.is((await query.json()).data.personas.length, 12);
  for (const mutation of [
    'mutation { createNest(name: "Reader room", crows: ["Pepper"]) { __typename } }',
    'mutation M { submitList(text: "x", requester: "ana") { __typename } }',
    'query Q { personas { name } } mutation Sneaky { submitList(text: "x", requester: "ana") { __typename } }',
  ]) {
    const body = JSON.stringify({ query: mutation, operationName: mutation.includes("Sneaky") ? "Sneaky" : undefined });
    const response = await call("/graphql", {
      method: "POST",
      headers: { "content-type": "application/json", ...bearer(READER) },
      body,
    });
    assert.is(response.status, 403, mutation);
    const json = await response.json();
    assert.is(json.errors[0].extensions.code, "forbidden");
    assert.ok(json.data == null, "nothing ran");
  }
  // Over graphql-sse too.
  const stream = await call("/graphql/stream", {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream", ...bearer(READER) },
    body: JSON.stringify({ query: 'mutation { createNest(name: "Stream room", crows: ["Pepper"]) { __typename } }' }),
  });
  assert.match(await stream.text(), /lacks the \\"write\\" scope/);
  assert.is(await server.app.prisma.todoList.count(), lists, "no list stored");
  assert.is(await server.app.prisma.nest.count(), nests, "no nest stored");

  // Subscribing is reading.
  const sub = await openSse(`${server.url}/graphql/stream`, {
    headers: bearer(READER),
    json: { query: "subscription { trustChanges(after: 0) { id } }" },
  });
  assert.is(sub.status, 200);
  sub.close();
  const sse = await openSse(`${server.url}/api/events?nest_id=todo`, { headers: bearer(READER) });
  assert.is(sse.status, 200);
  sse.close();
});

test("CORS: a listed origin gets its own origin back (preflights, JSON, SSE, GraphQL); an unlisted one gets nothing and is refused", async () => {
  const preflight = await call("/api/lists", {
    method: "OPTIONS",
    headers: {
      origin: LISTED,
      "access-control-request-method": "POST",
      "access-control-request-headers": "content-type, authorization",
    },
  });
  assert.is(preflight.status, 204, "a preflight needs no token");
  assert.is(preflight.headers.get("access-control-allow-origin"), LISTED);
  assert.is(preflight.headers.get("access-control-allow-credentials"), "true");
  assert.match(preflight.headers.get("access-control-allow-methods") ?? "", /POST/);
  assert.match(preflight.headers.get("access-control-allow-headers") ?? "", /content-type/);
  assert.match(preflight.headers.get("access-control-allow-headers") ?? "", /authorization/);
  assert.match(preflight.headers.get("access-control-allow-headers") ?? "", /last-event-id/);
  for (const path of ["/graphql", "/graphql/stream"]) {
    // GraphQL refuses OPTIONS with a 405, but a preflight is answered before it gets there.
    const graphqlPreflight = await call(path, {
      method: "OPTIONS",
      headers: { origin: LISTED, "access-control-request-method": "POST" },
    });
    assert.is(graphqlPreflight.status, 204, path);
    assert.is(graphqlPreflight.headers.get("access-control-allow-origin"), LISTED, path);
  }

  const json = await call("/api/nests", { headers: { origin: LISTED, ...bearer(OWNER) } });
  assert.is(json.status, 200);
  assert.is(json.headers.get("access-control-allow-origin"), LISTED);
  assert.match(json.headers.get("vary") ?? "", /Origin/);

  const noToken = await call("/api/nests", { headers: { origin: LISTED } });
  assert.is(noToken.status, 401);
  assert.is(noToken.headers.get("access-control-allow-origin"), LISTED, "the listed page can read why");

  const sse = await openSse(`${server.url}/api/events?nest_id=todo`, { headers: { origin: LISTED, ...bearer(OWNER) } });
  assert.is(sse.status, 200);
  assert.is(sse.headers.get("access-control-allow-origin"), LISTED);
  sse.close();

  const gql = await graphql("{ __typename }", { origin: LISTED, ...bearer(OWNER) });
  assert.is(gql.status, 200);
  assert.is(gql.headers.get("access-control-allow-origin"), LISTED);

  const before = await server.app.prisma.todoList.count();
  for (const origin of [
    UNLISTED,
    "http://localhost:5174",
    "https://localhost:5173",
    "http://localhost:5173.evil.example",
    "null",
    "http://LOCALHOST:5173x",
  ]) {
    for (const [path, init] of [
      ["/api/lists", { method: "OPTIONS", headers: { origin, "access-control-request-method": "POST" } }],
      ["/api/nests", { headers: { origin, ...bearer(OWNER) } }],
      ["/api/events?nest_id=todo", { headers: { origin, ...bearer(OWNER) } }],
      [
        "/graphql",
        {
          method: "POST",
          headers: { origin, "content-type": "application/json", ...bearer(OWNER) },
          body: '{"query":"{ __typename }"}',
        },
      ],
      [
        "/api/lists",
        {
          method: "POST",
          headers: { origin, "content-type": "text/plain", ...bearer(OWNER) },
          body: '{"text":"x","requester":"ana"}',
        },
      ],
      [
        "/api/lists",
        {
          method: "POST",
          headers: { origin, "content-type": "application/json", ...bearer(OWNER) },
          body: '{"text":"x","requester":"ana"}',
        },
      ],
    ] as const) {
      const response = await call(path, init as RequestInit);
      assert.is(response.status, 403, `${origin} ${init.method ?? "GET"} ${path}`);
      assert.is(response.headers.get("access-control-allow-origin"), null, "never reflected");
      assert.is(response.headers.get("access-control-allow-credentials"), null, "never credentials");
    }
  }
  assert.is(await server.app.prisma.todoList.count(), before, "no unlisted origin stored anything");

  // The server's own origin (its console, GraphiQL) is not cross-origin at all.
  const own = await call("/api/nests", { headers: { origin: server.url, ...bearer(OWNER) } });
  assert.is(own.status, 200);
  assert.is(own.headers.get("access-control-allow-origin"), null);
});

test("the token never appears in a log line, a stored event or an error body", async () => {
  const bodies: string[] = [];
  for (const token of [OWNER, READER]) {
    for (const init of [
      { path: `/?token=${token}x` },
      { path: `/api/nope?token=${token}`, headers: bearer(token) },
      {
        path: `/api/lists`,
        method: "POST",
        headers: { "content-type": "application/json", ...bearer(token) },
        body: `{"text": "${token}`,
      },
      {
        path: `/graphql`,
        method: "POST",
        headers: { "content-type": "application/json", ...bearer(token) },
        body: JSON.stringify({ query: `{ nope(x: "${token}") }` }),
      },
      { path: `/api/nests`, headers: bearer(`${token}-wrong`) },
    ]) {
      const response = await call(init.path, { method: init.method ?? "GET", headers: init.headers, body: init.body });
      bodies.push(
        `${response.status} ${[...response.headers].join(" ")} ${await response.text()}`.replace(
          /crows_token=[^;]+;/,
          "",
        ),
      );
    }
  }
  const events = await server.app.prisma.event.findMany();
  for (const token of [OWNER, READER]) {
    for (const line of logs) assert.not.ok(line.includes(token), `log line: ${line}`);
    for (const event of events) assert.not.ok(event.payload.includes(token), "stored event");
  }
  // Error bodies never echo a presented token (the GraphQL one quotes the query it was sent, which we wrote).
  for (const body of bodies.filter((b) => !b.includes("nope(x:"))) {
    assert.not.ok(body.includes(OWNER) || body.includes(READER), body.slice(0, 200));
  }
});

const isConfigError = (error: unknown) => error instanceof ConfigError;

test("configuration: off loopback without CROWS_TOKEN refuses to start with one line; tokens and origins are checked", () => {
  for (const host of ["0.0.0.0", "::", "192.168.1.20", "10.0.0.5", "crows.example.org"]) {
    assert.throws(
      () => loadConfig({ CROWS_HOST: host }),
      (error: unknown) =>
        error instanceof ConfigError && error.message.includes("CROWS_TOKEN") && !error.message.includes("\n"),
      host,
    );
    assert.is(loadConfig({ CROWS_HOST: host, CROWS_TOKEN: OWNER }).host, host);
  }
  for (const host of ["127.0.0.1", "localhost", "::1", "127.0.0.2"])
    assert.is(loadConfig({ CROWS_HOST: host }).token, undefined);
  for (const token of ["short", "has space in it 0123456789", "semi;colon0123456789abc", 'quote"0123456789abcdef']) {
    assert.throws(
      () => loadConfig({ CROWS_TOKEN: token }),
      (error: unknown) => error instanceof ConfigError && !error.message.includes(token),
    );
  }
  assert.throws(() => loadConfig({ CROWS_READ_TOKENS: READER }), isConfigError, "read tokens need an owner token");
  assert.throws(() => loadConfig({ CROWS_TOKEN: OWNER, CROWS_READ_TOKENS: OWNER }), isConfigError);
  for (const origin of ["localhost:5173", "http://localhost:5173/app", "*", "file:///x", "http://a b"]) {
    assert.throws(() => loadConfig({ CROWS_CORS_ORIGINS: origin }), isConfigError, origin);
  }
  assert.equal(loadConfig({ CROWS_CORS_ORIGINS: " http://localhost:5173 ,https://App.Example.org/ " }).corsOrigins, [
    "http://localhost:5173",
    "https://app.example.org",
  ]);
  assert.equal(loadConfig({}).corsOrigins, [], "no origin by default");
  assert.throws(() => loadConfig({ CROWS_PUBLIC_HOSTS: "https://crows.example.org" }), isConfigError);
});

test.run();

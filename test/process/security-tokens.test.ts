// Named tokens against every route family: each scope opens exactly what docs/security.md's table
// says, on REST reads and writes, SSE, GraphQL queries and mutations, both subscription transports,
// the console, /metrics and health; every refusal is a 403 whose message names the missing scope,
// an unknown token a 401. A token never mints a wider one. Revocation and expiry hold on the next
// request without a restart, and a streaming client of a revoked or expired token is cut within a
// heartbeat. The secret shows up nowhere but in its creation answer.
import { readFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { openSse } from "../helpers/sse.ts";
import { bearer, makeToken, type MadeToken } from "../helpers/tokens.ts";
import { filesUnder } from "../helpers/crows-cli.ts";

const OWNER = "owner-token-for-scopes-0123456789";
const LEGACY = "legacy-reader-token-0123456789";
const HEARTBEAT_MS = 400;

let server: TestServer;
const logs: string[] = [];
const seenSecrets: string[] = [];

test.before(async () => {
  server = await startTestServer({
    env: {
      CROWS_TOKEN: OWNER,
      CROWS_READ_TOKENS: LEGACY,
      CROWS_HEARTBEAT_MS: String(HEARTBEAT_MS),
      CROWS_BANTER_WAIT_MS: "0",
    },
    deps: { logLine: (line) => logs.push(line) },
  });
});
test.after(async () => {
  await server.close();
});

type Scope = "read" | "decide" | "write" | "admin" | "metrics";
interface Answer {
  status: number;
  text: string;
}
interface Family {
  name: string;
  /** The scope it needs; "any" for every valid token. */
  needs: Scope | "any";
  call(headers: Record<string, string>): Promise<Answer>;
}

const json = { "content-type": "application/json" };
async function plain(p: string, init: RequestInit & { headers: Record<string, string> }): Promise<Answer> {
  const response = await fetch(server.url + p, { redirect: "manual", ...init });
  return { status: response.status, text: await response.text() };
}
/** A stream's status, and its first bytes when it is a refusal; hung up at once either way. */
async function stream(p: string, headers: Record<string, string>, body?: unknown): Promise<Answer> {
  const abort = new AbortController();
  const response = await fetch(server.url + p, {
    method: body === undefined ? "GET" : "POST",
    headers: { accept: "text/event-stream", ...(body === undefined ? {} : json), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: abort.signal,
  });
  let text = "";
  if (response.status !== 200 || !(response.headers.get("content-type") ?? "").includes("event-stream"))
    text = await response.text();
  else {
    // A refusal over Yoga's SSE still streams: read its first event.
    const reader = response.body!.getReader();
    const first = await Promise.race([
      reader.read(),
      new Promise<{ value: undefined }>((r) => setTimeout(() => r({ value: undefined }), 300)),
    ]);
    text = first.value ? new TextDecoder().decode(first.value) : "";
  }
  abort.abort();
  return { status: response.status, text };
}
const gql = (query: string) => (headers: Record<string, string>) =>
  plain("/graphql", { method: "POST", headers: { ...json, ...headers }, body: JSON.stringify({ query }) });
let n = 0;

const FAMILIES: Family[] = [
  { name: "REST GET /api/nests", needs: "read", call: (h) => plain("/api/nests", { headers: h }) },
  { name: "REST GET /api/trust", needs: "read", call: (h) => plain("/api/trust", { headers: h }) },
  { name: "REST GET /api/audit", needs: "read", call: (h) => plain("/api/audit?limit=5", { headers: h }) },
  {
    name: "REST GET /api/nests/todo/messages",
    needs: "read",
    call: (h) => plain("/api/nests/todo/messages", { headers: h }),
  },
  // Writes with a body the guardrails refuse: passing the gate shows as a 400, and nothing is stored.
  {
    name: "REST POST /api/lists",
    needs: "write",
    call: (h) =>
      plain("/api/lists", {
        method: "POST",
        headers: { ...json, ...h },
        body: JSON.stringify({ text: "", requester: `r${n++}` }),
      }),
  },
  {
    name: "REST POST /api/nests",
    needs: "write",
    call: (h) =>
      plain("/api/nests", {
        method: "POST",
        headers: { ...json, ...h },
        body: JSON.stringify({ name: "", crows: [] }),
      }),
  },
  {
    name: "REST POST /api/nests/todo/messages",
    needs: "write",
    call: (h) =>
      plain("/api/nests/todo/messages", {
        method: "POST",
        headers: { ...json, ...h },
        body: JSON.stringify({ author: "owner", text: "" }),
      }),
  },
  {
    name: "REST POST /api/verdicts",
    needs: "decide",
    call: (h) =>
      plain("/api/verdicts", {
        method: "POST",
        headers: { ...json, ...h },
        body: JSON.stringify({ item_id: "lstnone-1", target: "triage", approve: true }),
      }),
  },
  { name: "REST GET /api/tokens", needs: "admin", call: (h) => plain("/api/tokens", { headers: h }) },
  {
    name: "REST POST /api/tokens",
    needs: "admin",
    call: (h) =>
      plain("/api/tokens", {
        method: "POST",
        headers: { ...json, ...h },
        body: JSON.stringify({ name: "", scopes: [] }),
      }),
  },
  {
    name: "REST DELETE /api/tokens/{id}",
    needs: "admin",
    call: (h) => plain("/api/tokens/tok_0000000000000000", { method: "DELETE", headers: h }),
  },
  { name: "SSE GET /api/events", needs: "read", call: (h) => stream("/api/events?nest_id=todo", h) },
  { name: "GraphQL query (POST)", needs: "read", call: gql("{ personas { name } }") },
  {
    name: "GraphQL query (GET)",
    needs: "read",
    call: (h) =>
      plain("/graphql?query=%7B%20nests%20%7B%20id%20%7D%20%7D", { headers: { accept: "application/json", ...h } }),
  },
  // A root the read cache answers again (src/server/graphql-read-cache.ts): refused before any cached answer.
  { name: "GraphQL query trust (cacheable)", needs: "read", call: gql("{ trust { holder level } }") },
  {
    name: "GraphQL query auditEntries",
    needs: "read",
    call: gql("{ auditEntries(limit: 3) { ... on AuditPage { nextCursor } } }"),
  },
  { name: "GraphQL query tokens", needs: "admin", call: gql("{ tokens { id name } }") },
  {
    name: "GraphQL mutation submitList",
    needs: "write",
    call: gql('mutation { submitList(text: "", requester: "nobody") { __typename } }'),
  },
  {
    name: "GraphQL mutation createNest",
    needs: "write",
    call: gql('mutation { createNest(name: "", crows: []) { __typename } }'),
  },
  {
    name: "GraphQL mutation postVerdict",
    needs: "decide",
    call: gql('mutation { postVerdict(itemId: "lstnone-1", target: triage, approve: true) { __typename } }'),
  },
  {
    name: "GraphQL mutation createToken",
    needs: "admin",
    call: gql('mutation { createToken(name: "", scopes: []) { __typename } }'),
  },
  {
    name: "GraphQL mutation revokeToken",
    needs: "admin",
    call: gql('mutation { revokeToken(id: "tok_0000000000000000") { __typename } }'),
  },
  {
    name: "GraphQL subscription (Yoga SSE)",
    needs: "read",
    call: (h) => stream("/graphql", h, { query: "subscription { trustChanges(after: 0) { id } }" }),
  },
  {
    name: "GraphQL subscription (graphql-sse)",
    needs: "read",
    call: (h) => stream("/graphql/stream", h, { query: "subscription { trustChanges(after: 0) { id } }" }),
  },
  { name: "console /", needs: "read", call: (h) => plain("/", { headers: { accept: "text/html", ...h } }) },
  { name: "/metrics", needs: "metrics", call: (h) => plain("/metrics", { headers: h }) },
  { name: "/healthz", needs: "any", call: (h) => plain("/healthz", { headers: h }) },
  { name: "/readyz", needs: "any", call: (h) => plain("/readyz", { headers: h }) },
];

const SETS: Scope[][] = [
  ["read"],
  ["decide"],
  ["write"],
  ["admin"],
  ["metrics"],
  ["read", "decide"],
  ["write", "admin"],
  ["read", "decide", "write", "admin", "metrics"],
];

/** A 403 whose message names the scope (JSON-escaped or not). */
function refusedFor(answer: Answer, scope: string): boolean {
  return answer.status === 403 && answer.text.replaceAll('\\"', '"').includes(`lacks the "${scope}" scope`);
}

test("each scope opens exactly its routes on every family; every refusal is a 403 naming the missing scope", async () => {
  const tokens: Array<{ scopes: Scope[]; token: MadeToken }> = [];
  for (const scopes of SETS)
    tokens.push({ scopes, token: await makeToken(server, `t-${scopes.join("-")}`, scopes, bearer(OWNER)) });
  for (const { token } of tokens) seenSecrets.push(token.secret);
  const nestsBefore = await server.app.prisma.nest.count();
  for (const family of FAMILIES) {
    for (const { scopes, token } of tokens) {
      const answer = await family.call(bearer(token.secret));
      const allowed = family.needs === "any" || scopes.includes(family.needs);
      const where = `${family.name} with [${scopes}]: ${answer.status} ${answer.text.slice(0, 200)}`;
      if (allowed) {
        assert.ok(
          answer.status !== 401 && answer.status !== 403 && !answer.text.includes("lacks the"),
          `allowed: ${where}`,
        );
        assert.ok(answer.status < 500, where);
      } else {
        assert.ok(refusedFor(answer, family.needs), `refused naming "${family.needs}": ${where}`);
        if (answer.status === 403 && answer.text.startsWith("{")) {
          const body = JSON.parse(answer.text);
          assert.type(body.message ?? body.errors?.[0]?.message, "string", where);
        }
      }
    }
    // The owner's token opens every family; the old CROWS_READ_TOKENS form reads (and scrapes /metrics, as before).
    const owner = await family.call(bearer(OWNER));
    assert.ok(owner.status !== 401 && owner.status !== 403, `owner on ${family.name}: ${owner.status}`);
    const legacy = await family.call(bearer(LEGACY));
    const legacyAllowed = family.needs === "any" || family.needs === "read" || family.needs === "metrics";
    assert.is(
      legacyAllowed ? legacy.status !== 403 && legacy.status !== 401 : refusedFor(legacy, family.needs),
      true,
      `legacy reader on ${family.name}: ${legacy.status}`,
    );
  }
  assert.is(await server.app.prisma.nest.count(), nestsBefore, "no refused write stored anything");
});

test("an unknown, malformed or truncated token is a 401 on every family", async () => {
  const real = await makeToken(server, "to-truncate", ["read"], bearer(OWNER));
  seenSecrets.push(real.secret);
  const bad = [
    "crows_" + "A".repeat(40),
    real.secret.slice(0, -1),
    real.secret + "x",
    real.secret.toLowerCase() === real.secret ? "crows_x" : real.secret.toLowerCase(),
    "tok_0000000000000000",
    real.prefix,
  ];
  for (const secret of bad) {
    for (const family of FAMILIES) {
      const answer = await family.call(bearer(secret));
      assert.is(answer.status, 401, `${family.name} with a bad token`);
    }
  }
});

test("a token never mints a token with a scope it does not hold (REST and GraphQL)", async () => {
  const admin = await makeToken(server, "admin-only", ["admin"], bearer(OWNER));
  const adminReader = await makeToken(server, "admin-reader", ["admin", "read"], bearer(OWNER));
  seenSecrets.push(admin.secret, adminReader.secret);
  for (const [holder, scopes, ok] of [
    [admin, ["read"], false],
    [admin, ["admin", "decide"], false],
    [admin, ["admin"], true],
    [adminReader, ["read"], true],
    [adminReader, ["read", "admin"], true],
    [adminReader, ["metrics"], false],
    [adminReader, ["write", "read"], false],
  ] as const) {
    const before = await server.app.prisma.token.count();
    const rest = await server.request("POST", "/api/tokens", { name: "minted", scopes }, bearer(holder.secret));
    if (ok) {
      assert.is(rest.status, 201, `${holder.name} minting [${scopes}]`);
      seenSecrets.push(rest.body.secret);
    } else {
      assert.is(rest.status, 403, `${holder.name} minting [${scopes}]`);
      const missing = scopes.find((s) => !holder.scopes.includes(s))!;
      assert.ok(rest.body.message.includes(`"${missing}" scope`), rest.body.message);
      assert.is(await server.app.prisma.token.count(), before, "nothing minted");
    }
    const graphql = await server.request(
      "POST",
      "/graphql",
      {
        query:
          'mutation M($s: [String!]!) { createToken(name: "minted", scopes: $s) { __typename ... on CreatedToken { secret } ... on Error { code message } } }',
        variables: { s: scopes },
      },
      bearer(holder.secret),
    );
    const result = graphql.body.data.createToken;
    assert.is(result.__typename, ok ? "CreatedToken" : "ForbiddenError", `GraphQL: ${holder.name} minting [${scopes}]`);
    if (ok) seenSecrets.push(result.secret);
  }
});

test("POST /api/tokens answers 201 with the secret once; GET /api/tokens never shows it; bad input is a 400", async () => {
  const response = await server.request(
    "POST",
    "/api/tokens",
    { name: "  ci bot  ", scopes: ["decide", "read", "read"], expires_in_s: 3600 },
    bearer(OWNER),
  );
  assert.is(response.status, 201);
  assert.equal(Object.keys(response.body), ["id", "name", "scopes", "secret", "prefix", "created_at", "expires_at"]);
  assert.match(response.body.id, /^tok_[0-9a-f]{16}$/);
  assert.is(response.body.name, "ci bot");
  assert.equal(response.body.scopes, ["read", "decide"]);
  assert.match(response.body.secret, /^crows_[A-Za-z0-9]{40}$/);
  assert.is(response.body.prefix, response.body.secret.slice(0, 10));
  assert.is(Date.parse(response.body.expires_at) - Date.parse(response.body.created_at), 3_600_000);
  seenSecrets.push(response.body.secret);
  const list = await server.request("GET", "/api/tokens", undefined, bearer(OWNER));
  const listed = list.body.tokens.find((t: any) => t.id === response.body.id);
  assert.equal(Object.keys(listed), [
    "id",
    "name",
    "prefix",
    "scopes",
    "created_at",
    "expires_at",
    "last_used_at",
    "revoked_at",
  ]);
  for (const bad of [
    {},
    { name: "x" },
    { name: "x", scopes: [] },
    { name: "x", scopes: ["root"] },
    { name: "x", scopes: "read" },
    { name: "", scopes: ["read"] },
    { name: "x".repeat(65), scopes: ["read"] },
    { name: "a\u0000b", scopes: ["read"] },
    { name: "x", scopes: ["read"], expires_in_s: 0 },
    { name: "x", scopes: ["read"], expires_in_s: 1.5 },
    { name: "x", scopes: ["read"], expires_in_s: "30d" },
    [],
    "nope",
  ]) {
    const answer = await server.request("POST", "/api/tokens", bad, bearer(OWNER));
    assert.is(answer.status, 400, JSON.stringify(bad));
    assert.type(answer.body.message, "string");
  }
  // An unknown id is a 404; revoking twice is still a 204.
  assert.is((await server.request("DELETE", "/api/tokens/tok_ffffffffffffffff", undefined, bearer(OWNER))).status, 404);
  assert.is((await server.request("DELETE", "/api/tokens/nope", undefined, bearer(OWNER))).status, 404);
  assert.is((await server.request("DELETE", `/api/tokens/${response.body.id}`, undefined, bearer(OWNER))).status, 204);
  assert.is((await server.request("DELETE", `/api/tokens/${response.body.id}`, undefined, bearer(OWNER))).status, 204);
  const revoked = (await server.request("GET", "/api/tokens", undefined, bearer(OWNER))).body.tokens.find(
    (t: any) => t.id === response.body.id,
  );
  assert.type(revoked.revoked_at, "string");
});

/** Waits for a stream to be ended by the server; the milliseconds it took. */
async function endedWithin(sse: { ended(): boolean }, deadlineMs: number): Promise<number> {
  const started = Date.now();
  while (!sse.ended()) {
    if (Date.now() - started > deadlineMs) throw new Error("the stream was not cut");
    await new Promise((r) => setTimeout(r, 10));
  }
  return Date.now() - started;
}

test("revocation holds on the next request and cuts the token's open streams (REST SSE and both GraphQL transports) at once", async () => {
  const token = await makeToken(server, "to-revoke", ["read"], bearer(OWNER));
  seenSecrets.push(token.secret);
  const other = await makeToken(server, "bystander", ["read"], bearer(OWNER));
  seenSecrets.push(other.secret);
  const streams = [
    await openSse(`${server.url}/api/events?nest_id=todo`, { headers: bearer(token.secret) }),
    await openSse(`${server.url}/graphql/stream`, {
      headers: bearer(token.secret),
      json: { query: "subscription { trustChanges(after: 0) { id } }" },
    }),
    await openSse(`${server.url}/graphql`, {
      headers: bearer(token.secret),
      json: { query: "subscription { trustChanges(after: 0) { id } }" },
    }),
  ];
  const bystander = await openSse(`${server.url}/api/events?nest_id=todo`, { headers: bearer(other.secret) });
  for (const s of streams) assert.is(s.status, 200);
  assert.is((await server.request("GET", "/api/nests", undefined, bearer(token.secret))).status, 200);
  assert.is((await server.request("DELETE", `/api/tokens/${token.id}`, undefined, bearer(OWNER))).status, 204);
  assert.is(
    (await server.request("GET", "/api/nests", undefined, bearer(token.secret))).status,
    401,
    "refused on the very next request",
  );
  for (const s of streams) assert.ok((await endedWithin(s, HEARTBEAT_MS)) <= HEARTBEAT_MS, "cut within a heartbeat");
  assert.not.ok(bystander.ended(), "another token's stream stays open");
  assert.is((await server.request("GET", "/api/nests", undefined, bearer(other.secret))).status, 200);
  bystander.close();
});

test("a revocation written straight to the database (as crows token revoke does) holds on the next request; the sweep cuts streams within a heartbeat", async () => {
  const token = await makeToken(server, "cli-revoked", ["read"], bearer(OWNER));
  seenSecrets.push(token.secret);
  assert.is(
    (await server.request("GET", "/api/trust", undefined, bearer(token.secret))).status,
    200,
    "cached as valid",
  );
  const sse = await openSse(`${server.url}/api/events?nest_id=todo`, { headers: bearer(token.secret) });
  await server.app.prisma.token.update({ where: { id: token.id }, data: { revokedAt: new Date() } });
  assert.is((await server.request("GET", "/api/trust", undefined, bearer(token.secret))).status, 401);
  assert.ok((await endedWithin(sse, HEARTBEAT_MS * 2 + 200)) <= HEARTBEAT_MS * 2 + 200);
});

test("an expired token is refused without a restart, and its open stream is cut within a heartbeat of the expiry", async () => {
  const token = await makeToken(server, "short-lived", ["read"], bearer(OWNER), 1);
  seenSecrets.push(token.secret);
  const expiry = Date.parse(token.expires_at!);
  assert.is((await server.request("GET", "/api/nests", undefined, bearer(token.secret))).status, 200);
  const sse = await openSse(`${server.url}/api/events?nest_id=todo`, { headers: bearer(token.secret) });
  for (;;) {
    const status = (await server.request("GET", "/api/nests", undefined, bearer(token.secret))).status;
    if (status === 401) break;
    assert.is(status, 200);
    assert.ok(Date.now() < expiry + 5000, "refused soon after its expiry");
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.ok(Date.now() >= expiry, "not refused before it expired");
  await endedWithin(sse, Math.max(0, expiry - Date.now()) + HEARTBEAT_MS + 300);
});

test("last use is recorded, and not on every request", async () => {
  const token = await makeToken(server, "used", ["read"], bearer(OWNER));
  seenSecrets.push(token.secret);
  assert.is((await server.app.prisma.token.findUniqueOrThrow({ where: { id: token.id } })).lastUsedAt, null);
  for (let i = 0; i < 5; i++) await server.request("GET", "/api/nests", undefined, bearer(token.secret));
  const first = await (async () => {
    for (let i = 0; i < 100; i++) {
      const row = await server.app.prisma.token.findUniqueOrThrow({ where: { id: token.id } });
      if (row.lastUsedAt) return row.lastUsedAt;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error("last use never recorded");
  })();
  for (let i = 0; i < 5; i++) await server.request("GET", "/api/nests", undefined, bearer(token.secret));
  const again = (await server.app.prisma.token.findUniqueOrThrow({ where: { id: token.id } })).lastUsedAt;
  assert.is(again?.getTime(), first.getTime(), "within the minute it is not written again");
});

test("the secret appears nowhere but its creation answer: not in the log, an event, an error, /metrics, a listing or the data folder", async () => {
  // Send every secret seen so far where a client could: a header, a cookie, a path, a query, a body.
  for (const secret of seenSecrets.slice(0, 4)) {
    await server.request("GET", `/api/nests/${secret}/messages`, undefined, bearer(secret));
    await server.request("GET", `/api/events?list_id=${secret}`, undefined, { cookie: `crows_token=${secret}` });
    await server.request("POST", "/api/lists", { text: secret, requester: secret }, bearer("crows_" + "B".repeat(40)));
    await server.request("POST", "/api/tokens", { name: secret, scopes: ["read"] }, bearer(secret));
  }
  assert.ok(seenSecrets.length >= 10);
  const surfaces: string[] = [
    logs.join("\n"),
    (await server.app.prisma.event.findMany()).map((e) => e.payload).join("\n"),
    (await server.request("GET", "/metrics", undefined, bearer(OWNER))).text,
    (await server.request("GET", "/api/tokens", undefined, bearer(OWNER))).text,
    (
      await server.request(
        "POST",
        "/graphql",
        {
          query:
            "{ tokens { id name prefix scopes } auditEntries(limit: 500) { ... on AuditPage { entries { payload } } } }",
        },
        bearer(OWNER),
      )
    ).text,
    (await server.request("GET", "/api/audit?limit=500", undefined, bearer(OWNER))).text,
    JSON.stringify(await server.app.prisma.token.findMany()),
  ];
  await new Promise((r) => setTimeout(r, 50));
  for (const file of filesUnder(server.dataDir)) surfaces.push(readFileSync(file).toString("latin1"));
  for (const secret of seenSecrets) {
    for (const [i, surface] of surfaces.entries())
      assert.not.ok(surface.includes(secret), `secret found in surface ${i}`);
  }
  // And the events do record the token changes, by id and prefix.
  const created = await server.app.prisma.event.findMany({ where: { stream: "tokens", name: "token.created" } });
  assert.ok(created.length >= seenSecrets.length - 4);
});

test.run();

// Managing tool servers over REST and GraphQL: the admin scope (a read token is refused with the
// scope named, on both), bad input as 400s naming the field, a taken name a 409, GraphQL's add,
// list, policy and remove, and every change audited with the token that made it.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { bearer, makeToken } from "../helpers/tokens.ts";
import { hostile } from "../helpers/tool-servers.ts";

const OWNER = "owner-token-for-tools-manage";
let server: TestServer;
let admin: Record<string, string>;
let reader: Record<string, string>;
let adminId: string;

test.before(async () => {
  server = await startTestServer({ env: { CROWS_TOKEN: OWNER } });
  const made = await makeToken(server, "tool-admin", ["admin", "read"], bearer(OWNER));
  adminId = made.id;
  admin = bearer(made.secret);
  reader = bearer((await makeToken(server, "reader", ["read", "write", "decide"], bearer(OWNER))).secret);
});
test.after(async () => {
  await server.close();
});

const gql = async (query: string, variables: Record<string, unknown>, headers: Record<string, string>) =>
  server.request("POST", "/graphql", { query, variables }, headers);

test("REST needs the admin scope: a read token is refused with the scope named; admin manages", async () => {
  for (const [method, path, body] of [
    ["GET", "/api/tools/servers", undefined],
    ["POST", "/api/tools/servers", hostile("nope", "polite")],
    ["GET", "/api/tools/servers/ts_0000000000000000", undefined],
    ["DELETE", "/api/tools/servers/ts_0000000000000000", undefined],
    ["POST", "/api/tools/servers/ts_0000000000000000/policies", { policies: { a: "allow" } }],
  ] as const) {
    const refused = await server.request(method, path, body, reader);
    assert.is(refused.status, 403, `${method} ${path}`);
    assert.match(refused.body.message, /"admin" scope/);
  }
  assert.equal((await server.request("GET", "/api/tools/servers", undefined, admin)).body, { servers: [] });
  const added = await server.request(
    "POST",
    "/api/tools/servers",
    hostile("notes", "polite", { env: { K: "v" } }),
    admin,
  );
  assert.is(added.status, 201, added.text);
  assert.match(added.body.id, /^ts_[0-9a-f]{16}$/);
  assert.equal(
    [added.body.transport, added.body.env_names, added.body.nests, added.body.policies],
    ["stdio", ["K"], null, {}],
  );
  assert.not.ok("env" in added.body);
  const taken = await server.request("POST", "/api/tools/servers", hostile("notes", "polite"), admin);
  assert.is(taken.status, 409);
  const listed = (await server.request("GET", "/api/tools/servers", undefined, admin)).body.servers;
  assert.equal(
    listed.map((s: any) => [s.name, s.state.status]),
    [["notes", "idle"]],
    "a list never starts a server",
  );
  const audit = (await server.request("GET", "/api/audit?kind=tool_server.added", undefined, bearer(OWNER))).body
    .entries;
  assert.equal(audit[0].actor, { kind: "token", token_id: adminId, token_name: "tool-admin" });
  assert.equal(audit[0].payload.env_names, ["K"]);
});

test("bad input is a 400 naming the field, never a 500", async () => {
  const bad: Array<[unknown, RegExp]> = [
    [{}, /"name"/],
    [{ name: "has space", command: "x" }, /"name"/],
    [{ name: "a" }, /"command"/],
    [{ name: "a", command: "x", url: "http://127.0.0.1:1/" }, /takes "url"/],
    [{ name: "a", url: "ftp://x" }, /"url"/],
    [{ name: "a", url: "http://127.0.0.1:1/", env: { A: "b" } }, /Streamable HTTP/],
    [{ name: "a", command: "x", args: "not a list" }, /"args"/],
    [{ name: "a", command: "x", env: { "1BAD": "v" } }, /"env" names/],
    [{ name: "a", command: "x", env: { OK: 5 } }, /"env" values/],
    [{ name: "a", url: "http://127.0.0.1:1/", headers: { "content-type": "x" } }, /"headers"/],
    [{ name: "a", url: "http://127.0.0.1:1/", headers: { "x-k": "a\r\nb" } }, /"headers" values/],
    [{ name: "a", command: "x", cwd: "relative/dir" }, /"cwd"/],
    [{ name: "a", command: "x", nests: "some" }, /"nests"/],
    [{ name: "a", command: "x", nests: ["no-such"] }, /no nest no-such/],
    [{ name: "a", command: "x", policies: { t: "maybe" } }, /"policies.t"/],
    [{ name: "a", command: "x", transport: "ws" }, /"transport"/],
  ];
  for (const [body, message] of bad) {
    const answer = await server.request("POST", "/api/tools/servers", body, admin);
    assert.is(answer.status, 400, JSON.stringify(body));
    assert.match(answer.body.message, message, JSON.stringify(body));
  }
  const secretEcho = await server.request(
    "POST",
    "/api/tools/servers",
    { name: "a", url: "http://127.0.0.1:1/", headers: { "x-k": "topsecret\nvalue" } },
    admin,
  );
  assert.not.ok(secretEcho.text.includes("topsecret"), "a refused value is not repeated");
  const id = (await server.request("GET", "/api/tools/servers", undefined, admin)).body.servers[0].id;
  assert.is((await server.request("POST", `/api/tools/servers/${id}/policies`, { policies: {} }, admin)).status, 400);
  assert.is(
    (await server.request("POST", `/api/tools/servers/${id}/policies`, { policies: { t: "x" } }, admin)).status,
    400,
  );
  assert.is(
    (await server.request("POST", "/api/tools/servers/ts_nope/policies", { policies: { t: "allow" } }, admin)).status,
    404,
  );
  assert.is((await server.request("GET", "/api/tools/servers/ts_nope", undefined, admin)).status, 404);
});

test("GraphQL: the admin scope per operation; add, list with tools, set a policy, remove", async () => {
  const refused = await gql("{ toolServers { __typename } }", {}, reader);
  assert.equal(refused.body.errors[0].extensions.scope, "admin", refused.text);
  assert.is(refused.body.data ?? null, null);
  const refusedMutation = await gql(`mutation { removeToolServer(id: "x") { __typename } }`, {}, reader);
  assert.is(refusedMutation.body.errors[0].extensions.code, "forbidden");

  const added = await gql(
    `mutation($args: [String!], $command: String) {
      addToolServer(name: "gq", command: $command, args: $args, env: [{ name: "TOKEN", value: "gq-secret-value" }]) {
        __typename ... on ToolServer { id envNames state { status } } ... on Error { message }
      }
    }`,
    hostile("gq", "polite"),
    admin,
  );
  assert.is(added.status, 200, added.text);
  const server1 = added.body.data.addToolServer;
  assert.is(server1.__typename, "ToolServer", added.text);
  assert.equal(server1.envNames, ["TOKEN"]);
  const one = await gql(
    `query($id: ID!) { toolServer(id: $id) { __typename ... on ToolServer { state { status tools } tools { name policy defaultPolicy readOnlyHint } } } }`,
    { id: server1.id },
    admin,
  );
  const shown = one.body.data.toolServer;
  assert.is(shown.state.status, "up", one.text);
  assert.equal(
    shown.tools.find((t: any) => t.name === "echo_env"),
    { name: "echo_env", policy: "allow", defaultPolicy: "allow", readOnlyHint: true },
  );
  assert.is(shown.tools.find((t: any) => t.name === "write_note").policy, "ask");
  const set = await gql(
    `mutation($id: ID!) { setToolPolicies(id: $id, policies: [{ tool: "echo_env", policy: "deny" }]) { __typename ... on ToolServer { policies { tool policy } } } }`,
    { id: server1.id },
    admin,
  );
  assert.equal(set.body.data.setToolPolicies.policies, [{ tool: "echo_env", policy: "deny" }]);
  const badPolicy = await gql(
    `mutation($id: ID!) { setToolPolicies(id: $id, policies: [{ tool: "echo_env", policy: "sometimes" }]) { __typename ... on Error { code } } }`,
    { id: server1.id },
    admin,
  );
  assert.equal(badPolicy.body.data.setToolPolicies, { __typename: "BadInputError", code: "bad_input" });
  const all = await gql("{ toolServers { ... on QueryToolServersSuccess { data { name envNames } } } }", {}, admin);
  assert.ok(
    all.body.data.toolServers.data.some((s: any) => s.name === "gq" && s.envNames[0] === "TOKEN"),
    all.text,
  );
  const removed = await gql(
    `mutation($id: ID!) { removeToolServer(id: $id) { __typename } }`,
    { id: server1.id },
    admin,
  );
  assert.is(removed.status, 200, removed.text);
  assert.not.ok(removed.text.includes("Error"), removed.text);
  assert.not.ok(JSON.stringify(await server.app.prisma.event.findMany()).includes("gq-secret-value"));
  const audit = (await server.request("GET", "/api/audit?kind=tool_server.removed", undefined, bearer(OWNER))).body
    .entries;
  assert.is(audit[0].payload.name, "gq");
});

test.run();

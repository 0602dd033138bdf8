// Real tool servers as child processes and on loopback: the filesystem server on a temporary folder
// (its read-only tools allow, its writes ask, the owner's policies over both), a Streamable HTTP
// server built with the SDK (its headers sent, never shown; list_changed refreshes the cache), a
// stdio server's clean environment and working folder, and secrets kept out of every answer, event
// and log line.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { startMcpHttpServer, type McpHttpServer } from "../helpers/mcp-http.ts";
import { call, errorOf, FILESYSTEM, hostile, textOf, waitForState } from "../helpers/tool-servers.ts";

const SECRET = "sk-live-do-not-leak-0123456789abcdef";
const HEADER_SECRET = "Bearer hdr-secret-9876543210fedcba";
let server: TestServer;
let mcp: McpHttpServer;
let folder: string;
const lines: string[] = [];

test.before(async () => {
  folder = mkdtempSync(path.join(os.tmpdir(), "crows-fs-"));
  writeFileSync(path.join(folder, "notes.txt"), "espresso needs 9 bars\n");
  mcp = await startMcpHttpServer();
  server = await startTestServer({
    // crows's own secrets, which no tool server may see
    env: { CROWS_TOKEN: "owner-token-abcdefghijklmnop", OPENAI_API_KEY: "sk-crows-own-key-zzzz" },
    deps: { logLine: (line) => lines.push(line) },
  });
});
test.after(async () => {
  await server.close();
  await mcp.close();
  rmSync(folder, { recursive: true, force: true });
});

const owner = { authorization: "Bearer owner-token-abcdefghijklmnop" };
const post = (p: string, body: unknown) => server.request("POST", p, body, owner);
const get = (p: string) => server.request("GET", p, undefined, owner);

test("the filesystem server: reads allowed by default, writes ask; the owner's policy overrides", async () => {
  const added = await post("/api/tools/servers", {
    name: "files",
    command: process.execPath,
    args: [FILESYSTEM, folder],
  });
  assert.is(added.status, 201, added.text);
  const id = added.body.id;
  const offered = (await server.app.tools.toolsFor({ nestId: "todo" })).filter((t) => t.serverId === id);
  const policy = (name: string) => offered.find((t) => t.name === name)?.policy;
  assert.is(policy("read_text_file"), "allow");
  assert.is(policy("write_file"), "ask");
  assert.is(offered.find((t) => t.name === "write_file")!.serverName, "files");
  assert.ok(
    offered.find((t) => t.name === "read_text_file")!.inputSchema.properties,
    "the schema as the server gave it",
  );

  const read = await call(server.app.tools, id, "read_text_file", { path: path.join(folder, "notes.txt") });
  assert.match(textOf(read), /9 bars/);
  const wrote = await call(server.app.tools, id, "write_file", { path: path.join(folder, "out.txt"), content: "hi" });
  assert.ok(wrote.ok && !wrote.isError, JSON.stringify(wrote));
  assert.is(readFileSync(path.join(folder, "out.txt"), "utf8"), "hi");

  const set = await post(`/api/tools/servers/${id}/policies`, {
    policies: { write_file: "deny", read_text_file: "ask" },
  });
  assert.is(set.status, 200, set.text);
  const after = (await server.app.tools.toolsFor({ nestId: "todo" })).filter((t) => t.serverId === id);
  assert.ok(!after.some((t) => t.name === "write_file"), "deny is never offered");
  assert.is(after.find((t) => t.name === "read_text_file")!.policy, "ask");
  assert.is(errorOf(await call(server.app.tools, id, "write_file", { path: "x", content: "y" })).code, "tool_denied");
  const shown = (await get(`/api/tools/servers/${id}`)).body;
  const shownTool = shown.tools.find((t: any) => t.name === "write_file");
  assert.equal([shownTool.policy, shownTool.default_policy], ["deny", "ask"]);
  assert.is(shown.state.status, "up");
  assert.ok(shown.state.calls >= 2);

  const back = await post(`/api/tools/servers/${id}/policies`, { policies: { write_file: null } });
  assert.equal(back.body.policies, { read_text_file: "ask" });
  const audit = (await get("/api/audit?kind=tool_server.policies_set")).body.entries;
  assert.is(audit.length, 2);
  assert.equal(audit[0].payload.changes, [{ tool: "write_file", from: "deny", to: null }]);
  assert.equal(audit[0].actor, { kind: "owner" });
});

test("a stdio server starts with a clean environment, in its own folder under the data folder", async () => {
  const added = await post("/api/tools/servers", hostile("envcheck", "polite", { env: { API_KEY: SECRET } }));
  assert.is(added.status, 201, added.text);
  const id = added.body.id;
  const seen = JSON.parse(textOf(await call(server.app.tools, id, "echo_env"))) as {
    env: Record<string, string>;
    cwd: string;
  };
  assert.is(seen.env.API_KEY, SECRET, "what the registration names is given");
  const leaked = Object.keys(seen.env).filter(
    (k) => k.startsWith("CROWS_") || k === "DATABASE_URL" || k === "OPENAI_API_KEY",
  );
  assert.equal(leaked, []);
  assert.ok(
    Object.keys(seen.env).every((k) => ["API_KEY", "HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"].includes(k)),
    Object.keys(seen.env).join(),
  );
  assert.is(seen.cwd, path.join(server.dataDir, "tools", id));
});

test("secrets are write-only: never in an answer, a list, an event or a log line", async () => {
  const added = await post("/api/tools/servers", {
    name: "remote",
    url: mcp.url,
    headers: { authorization: HEADER_SECRET },
  });
  assert.is(added.status, 201, added.text);
  assert.equal(added.body.header_names, ["authorization"]);
  const id = added.body.id;
  assert.match(textOf(await call(server.app.tools, id, "greet", { who: "owner" })), /hello, owner/);
  assert.ok(
    mcp.headers.some((h) => h.authorization === HEADER_SECRET),
    "the header reaches the server",
  );
  const everything = [
    added.text,
    (await get("/api/tools/servers")).text,
    (await get(`/api/tools/servers/${id}`)).text,
    (
      await server.request(
        "POST",
        "/graphql",
        { query: "{ toolServers { ... on QueryToolServersSuccess { data { id envNames headerNames } } } }" },
        owner,
      )
    ).text,
    JSON.stringify(await server.app.prisma.event.findMany()),
    lines.join("\n"),
  ].join("\n");
  for (const secret of [SECRET, HEADER_SECRET, "hdr-secret"]) assert.not.ok(everything.includes(secret), secret);
});

test("Streamable HTTP: non-text content summarised; list_changed refreshes the cached tools", async () => {
  const id = (await get("/api/tools/servers")).body.servers.find((s: any) => s.name === "remote").id;
  const stamped = textOf(await call(server.app.tools, id, "stamp"));
  assert.match(stamped, /^stamped\n\[image image\/png, 4 bytes\]$/);
  const before = (await server.app.tools.toolsFor({ nestId: "todo" })).filter((t) => t.serverId === id);
  assert.equal(before.map((t) => t.name).sort(), ["greet", "stamp"]);
  const listed = waitForState(server.app.tools, id, (s) => s.tools === 3);
  mcp.addTool("late_arrival");
  await listed;
  const after = (await server.app.tools.toolsFor({ nestId: "todo" })).filter((t) => t.serverId === id);
  assert.ok(after.some((t) => t.name === "late_arrival" && t.policy === "allow"));
});

test("/metrics: per server, up, calls, errors, tools", async () => {
  const text = await (await fetch(`${server.url}/metrics`, { headers: owner })).text();
  const value = (line: string) =>
    Number(
      text
        .split("\n")
        .find((l) => l.startsWith(line))
        ?.split(" ")
        .pop(),
    );
  assert.is(value('crows_tool_server_up{server="files"}'), 1, text);
  assert.is(value('crows_tool_server_calls{server="files"}'), 2, "a read and a write (a denied call never reaches it)");
  assert.is(value('crows_tool_server_errors{server="files"}'), 0);
  assert.is(value('crows_tool_server_tools{server="remote"}'), 3);
});

test("which nests may use a server", async () => {
  const id = (await get("/api/tools/servers")).body.servers.find((s: any) => s.name === "remote").id;
  const bad = await post(`/api/tools/servers/${id}/nests`, { nests: ["no-such-nest"] });
  assert.is(bad.status, 400);
  const set = await post(`/api/tools/servers/${id}/nests`, { nests: ["todo"] });
  assert.equal(set.body.nests, ["todo"]);
  assert.ok((await server.app.tools.toolsFor({ nestId: "todo" })).some((t) => t.serverId === id));
  assert.not.ok((await server.app.tools.toolsFor({ nestId: "elsewhere" })).some((t) => t.serverId === id));
});

test("removing a server stops its process; its calls are tool_not_found", async () => {
  const id = (await get("/api/tools/servers")).body.servers.find((s: any) => s.name === "envcheck").id;
  const stopped = waitForState(server.app.tools, id, (s) => s.status === "stopped");
  assert.is((await server.request("DELETE", `/api/tools/servers/${id}`, undefined, owner)).status, 204);
  await stopped;
  assert.is(errorOf(await call(server.app.tools, id, "echo_env")).code, "tool_not_found");
  assert.is((await server.request("DELETE", `/api/tools/servers/${id}`, undefined, owner)).status, 404);
});

test.run();

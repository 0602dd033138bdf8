// Tool servers on PostgreSQL with two instances: a server registered on A (its env secret stored in
// PostgreSQL, never shown) is started by B when B first needs it, in B's own data folder; a policy
// set on B holds on A at once (policies are read from the row on every need); a server removed on A
// is gone from B's next tool list, B's process stopped, and its calls tool_not_found.
import { test } from "uvu";
import * as assert from "uvu/assert";
import path from "node:path";
import { instancePair, services } from "../helpers/scale-services.ts";
import { call, errorOf, hostile, textOf, waitForState } from "../helpers/tool-servers.ts";

const svc = services("tools-postgres");
const it = svc ? test : test.skip;
const pair = svc ? instancePair(svc) : undefined;
const SECRET = "pg-stored-secret-0a1b2c3d4e";

it("registered on A, used on B; a policy set on B holds on A; removed on A, gone on B", async () => {
  const { a, b } = pair!;
  const added = await a.post("/api/tools/servers", hostile("shared", "polite", { env: { API_KEY: SECRET } }));
  assert.is(added.status, 201, added.text);
  const id = added.body.id;
  const onB = (await b.app.tools.toolsFor({ nestId: "todo" })).filter((t) => t.serverId === id);
  assert.equal(onB.map((t) => [t.name, t.policy]).sort(), [
    ["add_tool", "ask"],
    ["crash_once", "ask"],
    ["echo_env", "allow"],
    ["write_note", "ask"],
  ]);
  const seen = JSON.parse(textOf(await call(b.app.tools, id, "echo_env")));
  assert.is(seen.env.API_KEY, SECRET, "B read the secret from PostgreSQL and passed it");
  assert.is(seen.cwd, path.join(b.dataDir, "tools", id), "in B's own data folder");
  assert.not.ok((await b.get("/api/tools/servers")).text.includes(SECRET));

  assert.is((await b.post(`/api/tools/servers/${id}/policies`, { policies: { echo_env: "deny" } })).status, 200);
  assert.not.ok((await a.app.tools.toolsFor({ nestId: "todo" })).some((t) => t.name === "echo_env"));
  assert.is(errorOf(await call(a.app.tools, id, "echo_env")).code, "tool_denied");

  const stopped = waitForState(b.app.tools, id, (s) => s.status === "stopped");
  assert.is((await a.request("DELETE", `/api/tools/servers/${id}`)).status, 204);
  assert.not.ok((await b.app.tools.toolsFor({ nestId: "todo" })).some((t) => t.serverId === id));
  await stopped;
  assert.is(errorOf(await call(b.app.tools, id, "write_note")).code, "tool_not_found");
  const audit = (await b.get("/api/audit?kind=tool_server.added,tool_server.policies_set,tool_server.removed")).body;
  assert.equal(
    audit.entries.map((e: any) => e.kind),
    ["tool_server.removed", "tool_server.policies_set", "tool_server.added"],
  );
  assert.not.ok(JSON.stringify(audit).includes(SECRET));
});

test.run();

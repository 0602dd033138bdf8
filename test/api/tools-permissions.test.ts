// Standing permissions ("always, for this crow and this task type": granted, used, revoked,
// audited) and who may decide a tool call (the decide scope: a read token cannot). The offline
// brain's tool rule drives the calls (docs/tools.md "Without a key"); the tool is a real MCP server.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startTestServer } from "../helpers/server.ts";
import { ownerFollows } from "../helpers/owner.ts";
import { openSse, type SseMessage } from "../helpers/sse.ts";
import { startFilesystemCatalog } from "../helpers/mcp-catalog.ts";
import { bearer, makeToken } from "../helpers/tokens.ts";
import { TASK_TYPES } from "../../src/base/roster.ts";

const of = (events: SseMessage[], name: string) => events.filter((e) => e.event === name);

test("approve always: a standing permission for this crow and task type is listed, used without asking, revoked, then asks again", async () => {
  const folder = mkdtempSync(path.join(os.tmpdir(), "crows-tools-"));
  const catalog = await startFilesystemCatalog(folder);
  const server = await startTestServer({ deps: { tools: catalog }, env: { CROWS_APPROVAL_WINDOW_MS: "60000" } });
  // A nest of one crow: every item in it is flown by Hugin.
  assert.is((await server.post("/api/nests", { name: "desk", crows: ["Hugin"] })).status, 201);
  const run = async (text: string, onAsked?: (asked: SseMessage) => Promise<void>) => {
    const res = await server.post("/api/lists", { text, requester: "tools", nest_id: "desk" });
    const owner = await ownerFollows(server.url, res.body.list_id);
    if (onAsked) await onAsked(await owner.sse.waitFor((m) => m.event === "tool.asked", 20_000));
    const events = await owner.finished;
    owner.sse.close();
    return events;
  };
  try {
    const first = await run("write one to a.txt", async (asked) => {
      const decided = await server.post(`/api/tool-calls/${asked.data.call_id}/decision`, {
        approve: true,
        always: true,
      });
      assert.is(decided.status, 200);
    });
    assert.is(of(first, "tool.decided")[0]!.data.always, true);
    const listed = await server.get("/api/tool-permissions");
    assert.is(listed.body.permissions.length, 1);
    const permission = listed.body.permissions[0];
    const taskType = of(first, "item.triaged")[0]!.data.task_type;
    assert.equal(
      [permission.crow, permission.task_type, permission.tool, permission.granted_by],
      ["Hugin", taskType, "write_file", "owner"],
    );

    const second = await run("write two to b.txt");
    assert.is(of(second, "item.triaged")[0]!.data.task_type, taskType);
    assert.is(of(second, "tool.asked").length, 0, "the permission answered for the owner");
    const called = of(second, "tool.called")[0]!.data;
    assert.is(called.allowed_by, "permission");
    assert.equal(called.approved_by, { kind: "owner" }, "the actor of the approval: who granted it");
    assert.is(readFileSync(path.join(folder, "b.txt"), "utf8"), "two");

    const revoked = await server.request("DELETE", `/api/tool-permissions/${permission.permission_id}`);
    assert.is(revoked.status, 204);
    assert.is((await server.request("DELETE", `/api/tool-permissions/${permission.permission_id}`)).status, 404);
    assert.equal((await server.get("/api/tool-permissions")).body.permissions, []);
    const audit = (await server.get("/api/tool-permissions?revoked=true")).body.permissions;
    assert.ok(audit[0].revoked_at !== null, "a revoked permission stays on record");
    const trail = await server.get("/api/audit?kind=tool.permission_revoked");
    assert.is(trail.status, 200);
    assert.is(trail.body.entries.length, 1, "the revocation is in the audit trail, with its actor");
    assert.equal(trail.body.entries[0].actor, { kind: "owner" });

    const third = await run("write three to c.txt", async (asked) => {
      await server.post(`/api/tool-calls/${asked.data.call_id}/decision`, { approve: false });
    });
    assert.is(of(third, "tool.asked").length, 1, "revoked: it asks again");
    assert.is(existsSync(path.join(folder, "c.txt")), false);
  } finally {
    await server.close();
    await catalog.close();
    rmSync(folder, { recursive: true, force: true });
  }
});

test("trust stands apart: a trusted crow's ask call still asks, and refusing it does not demote the crow", async () => {
  const folder = mkdtempSync(path.join(os.tmpdir(), "crows-tools-"));
  const catalog = await startFilesystemCatalog(folder);
  const server = await startTestServer({ deps: { tools: catalog }, env: { CROWS_APPROVAL_WINDOW_MS: "60000" } });
  try {
    assert.is((await server.post("/api/nests", { name: "desk", crows: ["Hugin"] })).status, 201);
    for (const holder of ["flock", "Hugin"])
      for (const taskType of TASK_TYPES) await server.app.prisma.trust.create({ data: { holder, taskType, level: 2 } });
    const res = await server.post("/api/lists", {
      text: "write hello to out.txt",
      requester: "tools",
      nest_id: "desk",
    });
    const owner = await ownerFollows(server.url, res.body.list_id);
    const asked = await owner.sse.waitFor((m) => m.event === "tool.asked", 20_000);
    assert.is(asked.data.crow, "Hugin");
    await server.post(`/api/tool-calls/${asked.data.call_id}/decision`, { approve: false, reason: "no" });
    const events = await owner.finished;
    owner.sse.close();
    assert.is(of(events, "item.triaged")[0]!.data.needs_approval, false, "the flock is trusted");
    assert.is(of(events, "item.answered")[0]!.data.needs_approval, false, "Hugin is trusted");
    assert.is(of(events, "tool.asked").length, 1, "yet the write asked");
    assert.is(of(events, "trust.changed").length, 0, "and its refusal moved no trust");
    const ledger = (await server.get("/api/trust")).body.ledger as Array<{ holder: string; level: number }>;
    assert.ok(ledger.filter((r) => r.holder === "Hugin").every((r) => r.level === 2));
    assert.is(existsSync(path.join(folder, "out.txt")), false);
  } finally {
    await server.close();
    await catalog.close();
    rmSync(folder, { recursive: true, force: true });
  }
});

test("a read token cannot decide a tool call; a decide token can, and is its actor; bad bodies are 400s", async () => {
  const OWNER = "owner-token-0123456789abcdef";
  const READER = "reader-token-0123456789abcdef";
  const folder = mkdtempSync(path.join(os.tmpdir(), "crows-tools-"));
  const catalog = await startFilesystemCatalog(folder);
  const server = await startTestServer({
    deps: { tools: catalog },
    env: { CROWS_APPROVAL_WINDOW_MS: "60000", CROWS_TOKEN: OWNER, CROWS_READ_TOKENS: READER },
  });
  try {
    const approver = await makeToken(server, "approver", ["decide"], bearer(OWNER));
    const res = await server.request(
      "POST",
      "/api/lists",
      { text: "write hello to out.txt", requester: "tools" },
      bearer(OWNER),
    );
    assert.is(res.status, 202);
    const sse = await openSse(`${server.url}/api/events?list_id=${res.body.list_id}`, { headers: bearer(OWNER) });
    const triaged = await sse.waitFor((m) => m.event === "item.triaged", 20_000);
    if (triaged.data.needs_approval) {
      const verdict = { item_id: triaged.data.item_id, target: "triage", approve: true };
      assert.is((await server.request("POST", "/api/verdicts", verdict, bearer(OWNER))).status, 204);
    }
    const asked = await sse.waitFor((m) => m.event === "tool.asked", 20_000);
    const decision = `/api/tool-calls/${asked.data.call_id}/decision`;
    assert.is((await server.request("GET", "/api/tool-calls", undefined, bearer(READER))).status, 200, "read may look");
    const byReader = await server.request("POST", decision, { approve: true }, bearer(READER));
    assert.is(byReader.status, 403);
    assert.ok(/decide/.test(byReader.body.message));
    for (const bad of [{}, { approve: "yes" }, { approve: false, always: true }, { approve: true, reason: 5 }]) {
      const refused = await server.request("POST", decision, bad, bearer(approver.secret));
      assert.is(refused.status, 400, JSON.stringify(bad));
    }
    assert.is(
      (await server.request("POST", "/api/tool-calls/tcnosuch/decision", { approve: true }, bearer(OWNER))).status,
      404,
    );
    const byApprover = await server.request("POST", decision, { approve: true }, bearer(approver.secret));
    assert.is(byApprover.status, 200);
    const decided = await sse.waitFor((m) => m.event === "tool.decided", 20_000);
    assert.equal(decided.data.actor, { kind: "token", token_id: approver.id, token_name: "approver" });
    const returned = await sse.waitFor((m) => m.event === "tool.returned", 20_000);
    assert.is(returned.data.ok, true);
    sse.close();
    assert.is(readFileSync(path.join(folder, "out.txt"), "utf8"), "hello");
  } finally {
    await server.close();
    await catalog.close();
    rmSync(folder, { recursive: true, force: true });
  }
});

test("GraphQL: pending tool calls with their whole arguments, decideToolCall refusing with a reason, then standing permissions", async () => {
  const folder = mkdtempSync(path.join(os.tmpdir(), "crows-tools-"));
  const catalog = await startFilesystemCatalog(folder);
  const server = await startTestServer({ deps: { tools: catalog }, env: { CROWS_APPROVAL_WINDOW_MS: "60000" } });
  const gql = async (query: string, variables: Record<string, unknown> = {}) => {
    const res = await server.post("/graphql", { query, variables });
    assert.is(res.status, 200, res.text);
    assert.is(res.body.errors, undefined, JSON.stringify(res.body.errors));
    return res.body.data;
  };
  try {
    const res = await server.post("/api/lists", { text: "write hello to out.txt", requester: "tools" });
    const owner = await ownerFollows(server.url, res.body.list_id);
    const asked = await owner.sse.waitFor((m) => m.event === "tool.asked", 20_000);
    const pending = await gql("{ pendingToolCalls { callId tool server args status deadline crow } }");
    assert.equal(pending.pendingToolCalls.length, 1);
    assert.equal(pending.pendingToolCalls[0].args, { path: "out.txt", content: "hello" });
    assert.is(pending.pendingToolCalls[0].status, "asked");
    assert.is(pending.pendingToolCalls[0].deadline, asked.data.deadline);
    const DECIDE = `mutation ($id: ID!, $reason: String) {
      decideToolCall(callId: $id, approve: false, reason: $reason) {
        __typename ... on ToolCallDecided { callId decision } ... on Error { code message }
      }
    }`;
    const decided = await gql(DECIDE, { id: asked.data.call_id, reason: "not now" });
    assert.equal(decided.decideToolCall, {
      __typename: "ToolCallDecided",
      callId: asked.data.call_id,
      decision: "refused",
    });
    const again = await gql(DECIDE, { id: asked.data.call_id });
    assert.is(again.decideToolCall.code, "not_found", "decided once");
    const events = await owner.finished;
    owner.sse.close();
    assert.is(of(events, "tool.decided")[0]!.data.reason, "not now");
    assert.is(existsSync(path.join(folder, "out.txt")), false);
    assert.equal((await gql("{ toolPermissions { permissionId } }")).toolPermissions, []);
  } finally {
    await server.close();
    await catalog.close();
    rmSync(folder, { recursive: true, force: true });
  }
});

test.run();

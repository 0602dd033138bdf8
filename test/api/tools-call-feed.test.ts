// toolCallChanges (schema/tool-call-changes.ts): every tool call asked and decided, across lists,
// with the call's server, tool, whole arguments, the item's text and, once decided, who decided and
// how; resumable by global id; toolCallChangesCursor is the start the console takes. The offline
// brain's tool rule asks for a write (docs/tools.md "Without a key"); the tool is a real MCP server.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { ownerFollows } from "../helpers/owner.ts";
import { openSse, type SseClient } from "../helpers/sse.ts";
import { startFilesystemCatalog, type TestCatalog } from "../helpers/mcp-catalog.ts";

const FEED = `subscription($after: Int) { toolCallChanges(after: $after) {
  id change listId itemId callId decision reason always decidedBy { kind }
  call { crow taskType server tool args deadline status itemText always decidedBy { kind } }
} }`;

let server: TestServer;
let catalog: TestCatalog;
let folder: string;

test.before(async () => {
  folder = mkdtempSync(path.join(os.tmpdir(), "crows-tool-feed-"));
  catalog = await startFilesystemCatalog(folder);
  server = await startTestServer({ deps: { tools: catalog }, env: { CROWS_APPROVAL_WINDOW_MS: "60000" } });
});
test.after(async () => {
  await server.close();
  await catalog.close();
  rmSync(folder, { recursive: true, force: true });
});

const subscribe = (after?: number): Promise<SseClient> =>
  openSse(`${server.url}/graphql/stream`, { json: { query: FEED, variables: after === undefined ? {} : { after } } });

const changes = (sse: SseClient) =>
  sse
    .messages()
    .filter((m) => m.event === "next" && m.data?.data)
    .map((m) => m.data.data.toolCallChanges);

async function gql(query: string, variables: Record<string, unknown> = {}) {
  const response = await server.post("/graphql", { query, variables });
  assert.is(response.status, 200, response.text);
  assert.is(response.body.errors, undefined, JSON.stringify(response.body.errors));
  return response.body.data;
}

test("asked with the whole call and the item's text, decided with who and how; resume sends only what followed", async () => {
  const sse = await subscribe();
  const res = await server.post("/api/lists", { text: "write feed to feed.txt", requester: "tools" });
  const listId = res.body.list_id as string;
  const owner = await ownerFollows(server.url, listId);
  await sse.waitFor(() => changes(sse).some((c) => c.change === "asked"), 20_000);
  const asked = changes(sse).find((c) => c.change === "asked");
  assert.equal([asked.listId, asked.itemId, asked.decision, asked.decidedBy], [listId, `${listId}-1`, null, null]);
  assert.equal([asked.call.server, asked.call.tool, asked.call.status], ["fs", "write_file", "asked"]);
  assert.is(asked.call.args.path, "feed.txt");
  assert.is(asked.call.itemText, "write feed to feed.txt");
  assert.ok(Date.parse(asked.call.deadline) > Date.now(), "the deadline is ahead");
  assert.is((await gql("{ toolCallChangesCursor }")).toolCallChangesCursor, asked.id, "the cursor is the newest");

  const decided = await gql(
    `mutation($id: ID!) { decideToolCall(callId: $id, approve: false, reason: "not now") { __typename } }`,
    { id: asked.callId },
  );
  assert.is(decided.decideToolCall.__typename, "ToolCallDecided");
  await sse.waitFor(() => changes(sse).some((c) => c.change === "decided"), 20_000);
  const closed = changes(sse).find((c) => c.change === "decided");
  assert.equal(
    [closed.callId, closed.decision, closed.reason, closed.always, closed.decidedBy],
    [asked.callId, "refused", "not now", false, { kind: "owner" }],
  );
  assert.equal([closed.call.status, closed.call.decidedBy], ["refused", { kind: "owner" }]);
  await owner.finished;
  owner.sse.close();
  assert.is(existsSync(path.join(folder, "feed.txt")), false, "refused: not written");
  sse.close();

  const resumed = await subscribe(asked.id);
  await resumed.waitFor(() => changes(resumed).length >= 1, 20_000);
  assert.equal(
    changes(resumed).map((c) => c.id),
    [closed.id],
    "after the asked one: only its decision",
  );
  resumed.close();
});

test("a resume point the stream never sent is refused", async () => {
  const response = await fetch(`${server.url}/graphql/stream`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify({ query: FEED, variables: { after: 999_999 } }),
  });
  const text = await response.text();
  assert.ok(response.status === 400 || /bad_input/.test(text), `${response.status} ${text.slice(0, 200)}`);
});

test.run();

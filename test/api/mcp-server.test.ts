// crows as an MCP server (docs/integrations.md), driven by the official SDK's Client over
// Streamable HTTP only: tools listed with honest annotations, a list submitted and followed by
// progress to its answer while its approvals are decided through the same door, a dropped
// connection resumed with the SDK's resumption token, a list resource subscribed to, and the
// scopes: a read token lists and reads but is refused every write and decision, naming the scope;
// no token is a 401.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CallToolResultSchema,
  ResourceUpdatedNotificationSchema,
  type CallToolResult,
} from "@modelcontextprotocol/sdk/types.js";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { bearer, makeToken } from "../helpers/tokens.ts";
import { listStream } from "../../src/base/streams.ts";

const OWNER = "owner-token-for-mcp-tests-000000";
let server: TestServer;

test.before(async () => {
  server = await startTestServer({ env: { CROWS_TOKEN: OWNER, CROWS_APPROVAL_WINDOW_MS: "600000" } });
});
test.after(async () => {
  await server.close();
});

function transportFor(token: string | undefined, sessionId?: string) {
  return new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
    requestInit: token ? { headers: bearer(token) } : {},
    ...(sessionId ? { sessionId } : {}),
  });
}

async function connect(
  token: string | undefined,
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: "crows-test", version: "1.0.0" });
  const transport = transportFor(token);
  await client.connect(transport);
  return { client, transport };
}

const structured = (r: unknown) => (r as CallToolResult).structuredContent as Record<string, any>;
const textOf = (r: unknown) => ((r as CallToolResult).content[0] as { text: string }).text;

/** Approves everything waiting on `listId` through the door until `done` settles. */
async function approveUntil(client: Client, listId: () => string | undefined, done: Promise<unknown>) {
  let over = false;
  void done.finally(() => (over = true)).catch(() => {});
  while (!over) {
    const id = listId();
    if (id) {
      const waiting = structured(await client.callTool({ name: "pending_approvals", arguments: { list_id: id } }));
      for (const a of waiting.approvals as Array<{ item_id: string; target: string }>) {
        const decided = await client.callTool({
          name: "decide_approval",
          arguments: { item_id: a.item_id, target: a.target, approve: true },
        });
        assert.not.ok(decided.isError, textOf(decided));
      }
    }
    await new Promise((r) => setTimeout(r, 50)); // polling for work to do, never to prove an absence
  }
}

test("tools: the reads are readOnlyHint, the writes and decisions are not", async () => {
  const { client } = await connect(OWNER);
  try {
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    assert.equal(Object.keys(byName).sort(), [
      "cancel_list",
      "decide_approval",
      "decide_approvals",
      "pending_approvals",
      "post_to_nest",
      "read_list",
      "read_nest",
      "submit_list",
    ]);
    for (const name of ["read_list", "pending_approvals", "read_nest"])
      assert.is(byName[name]!.annotations?.readOnlyHint, true, name);
    for (const name of ["submit_list", "decide_approval", "decide_approvals", "cancel_list", "post_to_nest"])
      assert.is(byName[name]!.annotations?.readOnlyHint, false, name);
  } finally {
    await client.close();
  }
});

test("submit_list follows the list with progress to its answers; approvals decided through the door; the list resource notifies its subscriber", async () => {
  const { client } = await connect(OWNER);
  const decider = await connect(OWNER);
  try {
    const progress: string[] = [];
    let listId: string | undefined;
    const updated: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updated.push(n.params.uri);
    });
    const call = client.callTool(
      { name: "submit_list", arguments: { text: "Buy milk\nWrite a haiku about crows", requester: "mcp-test" } },
      CallToolResultSchema,
      {
        timeout: 120_000,
        resetTimeoutOnProgress: true,
        onprogress: (p) => {
          progress.push(p.message ?? "");
        },
      },
    );
    // The list id: the list, once it exists (the call answers only at its end).
    while (!listId) {
      listId = (await server.app.prisma.todoList.findFirst({ where: { requester: "mcp-test" } }))?.id;
      if (!listId) await new Promise((r) => setTimeout(r, 20));
    }
    await client.subscribeResource({ uri: `crows://lists/${listId}` });
    await approveUntil(decider.client, () => listId, call);
    const result = await call;
    assert.not.ok(result.isError, textOf(result));
    const list = structured(result);
    assert.is(list.list_id, listId);
    assert.is(list.status, "finished");
    assert.ok(
      (list.items as Array<{ answer: string | null; stage: string }>).every((i) => i.stage === "done" && i.answer),
      JSON.stringify(list.items),
    );
    // Every event of the list is a line of one notification, once, in order (batched: "Updates").
    const lines = progress.flatMap((m) => m.replace(/^\d+\/2 items done: /, "").split("; "));
    const events = await server.app.log.read(listStream(listId!));
    assert.is(lines.length, events.length, `a line per event: ${JSON.stringify(progress)}`);
    assert.match(progress[progress.length - 1]!, /^2\/2 items done: .*list finished$/);
    assert.ok(progress.some((m) => /waits for a triage verdict/.test(m)));
    const read = structured(await client.callTool({ name: "read_list", arguments: { list_id: listId } }));
    assert.equal(
      read.items.map((i: any) => i.verdicts.output),
      ["approved", "approved"],
    );
    assert.ok(updated.includes(`crows://lists/${listId}`), "the subscribed resource was updated");
    const resource = await client.readResource({ uri: `crows://lists/${listId}` });
    assert.is(JSON.parse((resource.contents[0] as { text: string }).text).list_id, listId);
  } finally {
    await client.close();
    await decider.client.close();
  }
});

test("a connection dropped mid-list: the SDK client resumes the call's stream with Last-Event-ID and gets every event and the result", async () => {
  // The drop: the server's side of the call's stream is cut, as a network failure would.
  const open: Array<{ req: import("node:http").IncomingMessage; res: import("node:http").ServerResponse }> = [];
  const resumes: string[] = [];
  const watch = (req: import("node:http").IncomingMessage, res: import("node:http").ServerResponse) => {
    if (req.url !== "/mcp") return;
    if (req.method === "POST") open.push({ req, res });
    const last = req.headers["last-event-id"];
    if (req.method === "GET" && typeof last === "string") resumes.push(last);
  };
  server.http.on("request", watch);
  const { client } = await connect(OWNER);
  const decider = await connect(OWNER);
  try {
    const messages: string[] = [];
    const steps: number[] = [];
    let dropped = false;
    let afterDrop = 0;
    let cut!: () => void;
    const progressed = new Promise<void>((resolve) => (cut = resolve));
    const call = client.callTool(
      { name: "submit_list", arguments: { text: "Plan a picnic\nBuy bread", requester: "mcp-drop" } },
      CallToolResultSchema,
      {
        timeout: 120_000,
        onprogress: (p) => {
          messages.push(p.message ?? "");
          steps.push(p.progress);
          if (dropped) afterDrop++;
          if (messages.length === 3) cut();
        },
      },
    );
    await progressed;
    for (const { res } of open) if (!res.writableEnded) res.socket?.destroy(); // only the call's stream is still open
    dropped = true;
    const listId = (await server.app.prisma.todoList.findFirstOrThrow({ where: { requester: "mcp-drop" } })).id;
    await approveUntil(decider.client, () => listId, call);
    const result = await call;
    assert.not.ok(result.isError, textOf(result));
    assert.is(structured(result).list_id, listId);
    assert.is(structured(result).status, "finished");
    assert.ok(resumes.length >= 1, "the client came back with Last-Event-ID");
    assert.ok(afterDrop > 0, "progress went on after the drop");
    assert.match(messages[messages.length - 1]!, /list finished/);
    assert.ok(
      steps.every((n, i) => i === 0 || n > steps[i - 1]!),
      `each event once, in order: ${steps.join(",")}`,
    );
  } finally {
    server.http.off("request", watch);
    await client.close();
    await decider.client.close();
  }
});

test("scopes: a read token lists and reads, and is refused every write and decision naming the scope; no token is a 401", async () => {
  const reader = await makeToken(server, "mcp-reader", ["read"], bearer(OWNER));
  const { client } = await connect(reader.secret);
  try {
    assert.ok((await client.listTools()).tools.length > 0);
    const nest = await client.callTool({ name: "read_nest", arguments: { nest_id: "todo" } });
    assert.not.ok(nest.isError, textOf(nest));
    for (const [name, args, scope] of [
      ["submit_list", { text: "Buy milk" }, "write"],
      ["cancel_list", { list_id: "lst0000000000" }, "write"],
      ["decide_approval", { item_id: "lst0000000000-1", target: "triage", approve: true }, "decide"],
      ["decide_approvals", { decisions: [{ item_id: "lst0000000000-1", target: "triage", approve: true }] }, "decide"],
      ["post_to_nest", { nest_id: "todo", text: "hello" }, "write"],
    ] as const) {
      const refused = await client.callTool({ name, arguments: args });
      assert.ok(refused.isError, name);
      assert.match(textOf(refused), `"${scope}"`);
    }
    assert.is(await server.app.prisma.todoList.count({ where: { requester: "mcp" } }), 0);
  } finally {
    await client.close();
  }
  const anonymous = new Client({ name: "crows-test", version: "1.0.0" });
  try {
    await anonymous.connect(transportFor(undefined));
    assert.unreachable("connected without a token");
  } catch (error) {
    assert.instance(error, StreamableHTTPError);
    assert.is((error as StreamableHTTPError).code, 401);
  }
});

/** The approvals waiting on `listId`, once at least one waits. */
async function someWaiting(client: Client, listId: string): Promise<Array<{ item_id: string; target: string }>> {
  for (;;) {
    const waiting = structured(await client.callTool({ name: "pending_approvals", arguments: { list_id: listId } }));
    if (waiting.approvals.length > 0) return waiting.approvals;
    await new Promise((r) => setTimeout(r, 50)); // polling for work to do
  }
}

test("decide_approvals: each decision on its own (one refused names why, the others stand); none recorded is a tool error; over the bound refused whole", async () => {
  const { client } = await connect(OWNER);
  try {
    const submitted = structured(
      await client.callTool({ name: "submit_list", arguments: { text: "Plan a picnic", wait: false } }),
    );
    const listId = submitted.list_id as string;
    const [first] = await someWaiting(client, listId);
    const unknown = { item_id: `${listId}-9`, target: "triage", approve: true };
    const mixed = await client.callTool({
      name: "decide_approvals",
      arguments: { decisions: [{ ...first!, approve: true, reason: " Fine by me " }, unknown] },
    });
    assert.not.ok(mixed.isError, textOf(mixed));
    assert.is(structured(mixed).decided, 1);
    assert.equal(
      structured(mixed).refused.map((r: Record<string, string>) => [r.item_id, r.target]),
      [[unknown.item_id, "triage"]],
    );
    assert.match(structured(mixed).refused[0].why, /No item/);
    const verdicts = (await server.app.log.read(listStream(listId)))
      .filter((e) => e.name === "verdict")
      .map((e) => JSON.parse(e.payload));
    assert.equal(
      verdicts.map((v) => [v.item_id, v.target, v.verdict, v.reason]),
      [[first!.item_id, first!.target, "approved", "Fine by me"]],
    );

    const none = await client.callTool({ name: "decide_approvals", arguments: { decisions: [unknown] } });
    assert.ok(none.isError, "nothing recorded");
    assert.is(structured(none).decided, 0);

    const [next] = await someWaiting(client, listId);
    const tooMany = await client.callTool({
      name: "decide_approvals",
      arguments: { decisions: Array.from({ length: 101 }, () => ({ ...next!, approve: false })) },
    });
    assert.ok(tooMany.isError, "101 decisions are refused");
    assert.match(textOf(tooMany), /100/);
    assert.ok(
      (await someWaiting(client, listId)).some((a) => a.item_id === next!.item_id && a.target === next!.target),
      "nothing of it was decided",
    );
  } finally {
    await client.close();
  }
});

test("decide_approval carries the owner's reason to the verdict; one over the bound is a tool error and decides nothing", async () => {
  const { client } = await connect(OWNER);
  try {
    const submitted = structured(
      await client.callTool({ name: "submit_list", arguments: { text: "Plan a picnic", wait: false } }),
    );
    const listId = submitted.list_id as string;
    let waiting: Array<{ item_id: string; target: string }> = [];
    while (waiting.length === 0) {
      waiting = structured(
        await client.callTool({ name: "pending_approvals", arguments: { list_id: listId } }),
      ).approvals;
      if (waiting.length === 0) await new Promise((r) => setTimeout(r, 50)); // polling for work to do
    }
    const { item_id, target } = waiting[0]!;
    const tooLong = await client.callTool({
      name: "decide_approval",
      arguments: { item_id, target, approve: false, reason: "x".repeat(1001) },
    });
    assert.ok(tooLong.isError);
    assert.match(textOf(tooLong), /at most 1,000/);
    const still = structured(await client.callTool({ name: "pending_approvals", arguments: { list_id: listId } }));
    assert.ok(
      still.approvals.some((a: { item_id: string }) => a.item_id === item_id),
      "nothing was decided",
    );
    const decided = await client.callTool({
      name: "decide_approval",
      arguments: { item_id, target, approve: false, reason: "  Not this weekend  " },
    });
    assert.not.ok(decided.isError, textOf(decided));
    const verdicts = (await server.app.log.read(listStream(listId)))
      .filter((e) => e.name === "verdict")
      .map((e) => JSON.parse(e.payload));
    assert.equal(
      verdicts.map((v) => [v.verdict, v.reason]),
      [["rejected", "Not this weekend"]],
    );
  } finally {
    await client.close();
  }
});

test.run();

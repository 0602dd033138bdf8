// The batching rule at both agent doors (docs/integrations.md "Updates"), through the official
// clients, on a server whose interval no run reaches (CROWS_AGENT_UPDATE_MS=60000): only the first
// batch, an approval asked and the list's end may send what is held, so every update is one of
// those, and still every event of the list is a line of one of them, once, in order.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { TaskState } from "@a2a-js/sdk";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { a2aClient, userMessage, sendParams } from "../helpers/a2a-client.ts";
import { bearer, makeToken } from "../helpers/tokens.ts";
import { listStream } from "../../src/base/streams.ts";
import { approvalAsked } from "../../src/server/agents/list-view.ts";

const OWNER = "owner-token-for-agent-updates-00000";
let server: TestServer;
test.before(async () => {
  server = await startTestServer({ env: { CROWS_AGENT_UPDATE_MS: "60000", CROWS_TOKEN: OWNER } });
});
test.after(async () => {
  await server.close();
});

/** The list's events, and how many of them must be sent at once (the approvals asked, the end). */
async function eventsOf(listId: string) {
  const events = await server.app.log.read(listStream(listId));
  const urgent = events.filter(
    (e) => e.name === "list.finished" || approvalAsked(e.name, JSON.parse(e.payload)) !== undefined,
  ).length;
  return { events, urgent };
}

test("MCP: progress only at the first batch, an approval asked and the end; every event a line", async () => {
  const client = new Client({ name: "crows-test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: bearer(OWNER) },
    }),
  );
  try {
    const messages: string[] = [];
    const decisions: Array<Promise<unknown>> = [];
    const result = await client.callTool(
      { name: "submit_list", arguments: { text: "Plan a picnic\nBuy bread", requester: "batch-mcp" } },
      CallToolResultSchema,
      {
        timeout: 120_000,
        onprogress: (p) => {
          messages.push(p.message ?? "");
          const waits = (p as { _meta?: Record<string, any> })._meta?.["crows/waits"] ?? [];
          if (waits.length > 0)
            decisions.push(
              client.callTool({
                name: "decide_approvals",
                arguments: { decisions: waits.map((w: object) => ({ ...w, approve: true })) },
              }),
            );
        },
      },
    );
    await Promise.all(decisions);
    const list = (result as CallToolResult).structuredContent as { list_id: string; status: string };
    assert.is(list.status, "finished");
    const { events, urgent } = await eventsOf(list.list_id);
    assert.ok(urgent >= 3, "the list asked approvals");
    assert.ok(messages.length <= urgent + 1, `${messages.length} notifications for ${urgent} urgent events`);
    const lines = messages.flatMap((m) => m.replace(/^\d+\/2 items done: /, "").split("; "));
    assert.is(lines.length, events.length, messages.join("\n"));
    assert.match(lines[lines.length - 1]!, /^list finished$/);
  } finally {
    await client.close();
  }
});

test("A2A: working updates only at the first batch and before a question, which never names an approval not yet said; every event but the end a line", async () => {
  const client = await a2aClient(server.url, OWNER);
  let message = userMessage("Plan a picnic\nBuy bread");
  message.metadata = { requester: "batch-a2a" };
  let task: { id: string; contextId: string } | undefined;
  let listId: string | undefined;
  let last: TaskState | undefined;
  let summary = "";
  const working: string[] = [];
  let streams = 0;
  for (let turn = 0; turn < 10; turn++) {
    streams++;
    for await (const event of client.sendMessageStream(sendParams(message))) {
      const payload = event.payload;
      if (payload?.$case === "task") {
        task ??= { id: payload.value.id, contextId: payload.value.contextId };
        listId ??= payload.value.metadata?.list_id as string;
      }
      if (payload?.$case !== "statusUpdate") continue;
      last = payload.value.status?.state;
      const part = payload.value.status?.message?.parts[0]?.content;
      const text = part?.$case === "text" ? part.value : "";
      if (last === TaskState.TASK_STATE_WORKING) working.push(text);
      if (last === TaskState.TASK_STATE_COMPLETED) summary = text;
      if (last === TaskState.TASK_STATE_INPUT_REQUIRED) {
        // A question never runs ahead of the lines: each approval it names was said first.
        const said = working.flatMap((w) => w.split("\n"));
        const named = (payload.value.status?.message?.metadata?.approvals ?? []) as Array<Record<string, string>>;
        assert.ok(named.length > 0, text);
        for (const a of named) {
          const asked = `${a.item_id} ${a.target === "triage" ? "triaged" : "answered"} `;
          assert.ok(
            said.some((l) => l.startsWith(asked) && l.endsWith("(waits on the owner)")),
            `${a.item_id} ${a.target} named before its line:\n${said.join("\n")}`,
          );
        }
      }
    }
    if (last !== TaskState.TASK_STATE_INPUT_REQUIRED) break;
    message = userMessage("approve", task!.id, task!.contextId);
  }
  assert.is(last, TaskState.TASK_STATE_COMPLETED);
  assert.match(summary, /2 of 2 items answered/);
  const { events, urgent } = await eventsOf(listId!);
  // Each stream (the first, and one per reply) sends its first batch at once; the rest only go
  // before a question or the end.
  assert.ok(
    working.length <= urgent + streams,
    `${working.length} working updates for ${urgent} urgent events and ${streams} streams, ${events.length} events`,
  );
  // Held to the end, the last lines came in the batch with list.finished: said before it all the same.
  const lines = working.flatMap((w) => w.split("\n"));
  assert.is(lines.length, events.length - 1, working.join("\n---\n"));
});

test("A2A, a caller who may not decide: the lines held to the end are said before it", async () => {
  // The owner decides elsewhere (here in-process, as REST's route would), so this caller's one stream
  // follows the whole list, and what comes after the last approval asked is held until the end.
  const writer = await makeToken(server, "agent-updates-writer", ["read", "write"], bearer(OWNER));
  const client = await a2aClient(server.url, writer.secret);
  const message = userMessage("Plan a picnic\nBuy bread");
  message.metadata = { requester: "batch-a2a-writer" };
  let listId: string | undefined;
  let over = false;
  const owner = (async () => {
    while (!over) {
      const pending = await server.app.prisma.approval.findMany({ where: { status: "pending" } });
      for (const a of pending)
        await server.app.flock
          .postVerdict({ itemId: a.itemId, target: a.target as "triage" | "output", approve: true })
          .catch(() => {}); // decided meanwhile by the window: the list goes on either way
      await new Promise((r) => setTimeout(r, 20)); // polling for work to do, never to prove an absence
    }
  })();
  const working: string[] = [];
  let last: TaskState | undefined;
  try {
    for await (const event of client.sendMessageStream(sendParams(message))) {
      const payload = event.payload;
      if (payload?.$case === "task") listId ??= payload.value.metadata?.list_id as string;
      if (payload?.$case !== "statusUpdate") continue;
      last = payload.value.status?.state;
      const part = payload.value.status?.message?.parts[0]?.content;
      if (last === TaskState.TASK_STATE_WORKING) working.push(part?.$case === "text" ? part.value : "");
    }
  } finally {
    over = true;
    await owner;
  }
  assert.is(last, TaskState.TASK_STATE_COMPLETED);
  const { events } = await eventsOf(listId!);
  const lines = working.flatMap((w) => w.split("\n"));
  assert.is(lines.length, events.length - 1, working.join("\n---\n"));
  // The last working update holds the events after the last approval asked, the verdict on it first.
  assert.match(working[working.length - 1]!, /output verdict: approved/);
});

test.run();

// Benchmark: one 50-item list (BENCH_ITEMS) submitted and followed to list.finished through each
// door, in the same run on one in-process server (offline brain, no token: the caller is the owner):
//   REST: POST /api/lists, a scripted owner follows the SSE stream and answers each approval at once;
//   MCP:  submit_list through the SDK's Client, followed by its progress; the same scripted owner
//         (over REST) answers the approvals, found from the first progress line's item id;
//   A2A:  SendStreamingMessage through the SDK's client; each input-required is answered by a reply
//         on the task (approvals through the door itself).
// Prints the wall time of each, and MCP's and A2A's ratio to REST's (goal: within 1.2x).
// Run: npm run bench:agents   (BENCH_ITEMS, BENCH_ROUNDS)
import { randomUUID } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { Role, TaskState, type Message } from "@a2a-js/sdk";
import { ClientFactory, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
import { startTestServer, type TestServer } from "../harness/server.ts";
import { ownerFollows } from "../harness/owner.ts";

const ITEMS = Number(process.env.BENCH_ITEMS ?? 50);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const TEXT = Array.from({ length: ITEMS }, (_, i) => `Write a short note number ${i + 1} about crows`).join("\n");
const FOLLOW_MS = 600_000;

async function viaRest(server: TestServer): Promise<number> {
  const t0 = performance.now();
  const posted = await server.post("/api/lists", { text: TEXT, requester: "bench-rest" });
  const owner = await ownerFollows(server.url, posted.body.list_id as string, {}, FOLLOW_MS);
  await owner.finished;
  owner.sse.close();
  return performance.now() - t0;
}

async function viaMcp(server: TestServer): Promise<number> {
  const client = new Client({ name: "bench", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
  const t0 = performance.now();
  let owner: Promise<unknown> | undefined;
  const result = await client.callTool(
    { name: "submit_list", arguments: { text: TEXT, requester: "bench-mcp" } },
    CallToolResultSchema,
    {
      timeout: FOLLOW_MS,
      onprogress: (p) => {
        const listId = /\b(lst[0-9a-f]{10})-\d+/.exec(p.message ?? "")?.[1];
        if (listId && !owner)
          owner = ownerFollows(server.url, listId, {}, FOLLOW_MS).then((o) => o.finished.then(() => o.sse.close()));
      },
    },
  );
  const ms = performance.now() - t0;
  await owner;
  await client.close();
  if (result.isError) throw new Error(`MCP: ${JSON.stringify(result.content)}`);
  return ms;
}

function message(text: string, taskId = "", contextId = ""): Message {
  return {
    messageId: randomUUID(),
    contextId,
    taskId,
    role: Role.ROLE_USER,
    parts: [{ content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "text/plain" }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

async function viaA2a(server: TestServer): Promise<number> {
  const client = await new ClientFactory({ transports: [new JsonRpcTransportFactory()] }).createFromUrl(server.url);
  const t0 = performance.now();
  let next = message(TEXT);
  let task: { id: string; contextId: string } | undefined;
  for (;;) {
    let last: TaskState | undefined;
    for await (const event of client.sendMessageStream({
      tenant: "",
      message: next,
      configuration: undefined,
      metadata: undefined,
    })) {
      if (event.payload?.$case === "task")
        task ??= { id: event.payload.value.id, contextId: event.payload.value.contextId };
      if (event.payload?.$case === "statusUpdate") last = event.payload.value.status?.state;
    }
    if (last === TaskState.TASK_STATE_COMPLETED) break;
    if (last !== TaskState.TASK_STATE_INPUT_REQUIRED) throw new Error(`A2A: the task ended ${last}`);
    next = message("approve", task!.id, task!.contextId);
  }
  return performance.now() - t0;
}

const server = await startTestServer({ env: { CROWS_TOKEN_BUDGET: "400000", CROWS_APPROVAL_WINDOW_MS: "600000" } });
try {
  const times: Record<string, number[]> = { rest: [], mcp: [], a2a: [] };
  for (let round = 0; round < ROUNDS; round++) {
    times.rest!.push(await viaRest(server));
    times.mcp!.push(await viaMcp(server));
    times.a2a!.push(await viaA2a(server));
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const rest = median(times.rest!);
  console.log(
    JSON.stringify({
      items: ITEMS,
      rounds: ROUNDS,
      rest_ms: Math.round(rest),
      mcp_ms: Math.round(median(times.mcp!)),
      a2a_ms: Math.round(median(times.a2a!)),
      mcp_vs_rest: +(median(times.mcp!) / rest).toFixed(2),
      a2a_vs_rest: +(median(times.a2a!) / rest).toFixed(2),
      all_ms: Object.fromEntries(Object.entries(times).map(([k, v]) => [k, v.map(Math.round)])),
    }),
  );
} finally {
  await server.close();
}

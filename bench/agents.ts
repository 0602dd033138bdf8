// Benchmark: one 50-item list (BENCH_ITEMS) submitted and followed to list.finished through each
// door, in the same run on one in-process server (offline brain, no token: the caller is the owner):
//   REST: POST /api/lists, a scripted owner follows the SSE stream and answers each approval at once;
//   MCP:  submit_list through the SDK's Client, followed by its progress; the client is the owner,
//         deciding the approvals each progress notification names with one decide_approvals on its session;
//   A2A:  SendStreamingMessage through the SDK's client; each input-required is answered by one reply
//         on the task deciding every approval it names (a batch; approvals through the door itself).
// Prints the median wall time of each, every round's, and MCP's and A2A's ratio to REST's (goal:
// within 1.2x). An uncounted warm-up round runs first; each round starts at another door.
// Run: npm run bench:agents   (BENCH_ITEMS, BENCH_ROUNDS, BENCH_DOORS=rest,mcp,a2a, BENCH_WARMUP=0,
//      BENCH_FRESH=1 for a server of its own per list: every list then asks its approvals)
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

// Each list its own requester: the flock's rate limit (5 lists a minute a requester, docs/rules.md)
// would otherwise refuse a run's later lists.
let lists = 0;
const requester = (door: string) => `bench-${door}-${++lists}`;

async function viaRest(server: TestServer): Promise<number> {
  const t0 = performance.now();
  const posted = await server.post("/api/lists", { text: TEXT, requester: requester("rest") });
  if (posted.status !== 202) throw new Error(`REST: ${posted.status} ${posted.text}`);
  const owner = await ownerFollows(server.url, posted.body.list_id as string, {}, FOLLOW_MS);
  await owner.finished;
  owner.sse.close();
  return performance.now() - t0;
}

async function viaMcp(server: TestServer): Promise<number> {
  const client = new Client({ name: "bench", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
  const t0 = performance.now();
  // The client is the owner: each approval a progress notification names is decided at once over
  // the same session (decide_approvals, one call for what a notification names), beside the
  // submit_list call still running.
  const decisions: Array<Promise<void>> = [];
  const result = await client.callTool(
    { name: "submit_list", arguments: { text: TEXT, requester: requester("mcp") } },
    CallToolResultSchema,
    {
      timeout: FOLLOW_MS,
      onprogress: (p) => {
        // The SDK hands the notification's params over whole (its type names only progress, total, message).
        const meta = (p as { _meta?: Record<string, unknown> })._meta;
        const waits = (meta?.["crows/waits"] ?? []) as Array<{ item_id: string; target: string }>;
        if (waits.length > 0)
          decisions.push(
            client
              .callTool({
                name: "decide_approvals",
                arguments: { decisions: waits.map((w) => ({ ...w, approve: true })) },
              })
              .then((r) => {
                const refused = (r.structuredContent as { refused?: unknown[] } | undefined)?.refused ?? [];
                if (r.isError || refused.length > 0) throw new Error(`MCP decide: ${JSON.stringify(r.content)}`);
              }),
          );
      },
    },
  );
  const ms = performance.now() - t0;
  await Promise.all(decisions);
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

function dataPart(value: unknown): Message["parts"][number] {
  return { content: { $case: "data", value }, metadata: undefined, filename: "", mediaType: "application/json" };
}

async function viaA2a(server: TestServer): Promise<number> {
  const client = await new ClientFactory({ transports: [new JsonRpcTransportFactory()] }).createFromUrl(server.url);
  const t0 = performance.now();
  let next = message(TEXT);
  next.metadata = { requester: requester("a2a") };
  let task: { id: string; contextId: string } | undefined;
  for (;;) {
    let last: TaskState | undefined;
    let asked: Array<{ item_id: string; target: string }> = [];
    for await (const event of client.sendMessageStream({
      tenant: "",
      message: next,
      configuration: undefined,
      metadata: undefined,
    })) {
      if (event.payload?.$case === "task")
        task ??= { id: event.payload.value.id, contextId: event.payload.value.contextId };
      if (event.payload?.$case === "statusUpdate") {
        last = event.payload.value.status?.state;
        asked = event.payload.value.status?.message?.metadata?.approvals ?? [];
      }
    }
    if (last === TaskState.TASK_STATE_COMPLETED) break;
    if (last !== TaskState.TASK_STATE_INPUT_REQUIRED) throw new Error(`A2A: the task ended ${last}`);
    // One reply decides every approval the input-required named (a batch: docs/integrations.md "A2A").
    next = message("", task!.id, task!.contextId);
    next.parts = [dataPart({ decisions: asked.map((a) => ({ item_id: a.item_id, target: a.target, approve: true })) })];
  }
  return performance.now() - t0;
}

const start = () => startTestServer({ env: { CROWS_TOKEN_BUDGET: "400000", CROWS_APPROVAL_WINDOW_MS: "600000" } });
// BENCH_FRESH=1: each list on a server of its own, whose trust starts empty, so every list asks its
// approvals (on one server, trust earned by the first lists approves the later ones' by itself).
const FRESH = process.env.BENCH_FRESH === "1";
const server = await start();
try {
  const doors: Record<string, (server: TestServer) => Promise<number>> = { rest: viaRest, mcp: viaMcp, a2a: viaA2a };
  const chosen = (process.env.BENCH_DOORS ?? "rest,mcp,a2a").split(",").filter((d) => d in doors);
  // One uncounted round first: the first door measured would otherwise pay the JIT's warm-up.
  if (process.env.BENCH_WARMUP !== "0") for (const door of chosen) await doors[door]!(server);
  const times: Record<string, number[]> = Object.fromEntries(chosen.map((d) => [d, []]));
  // The process's CPU time through each door (server and client are in this one process): on a
  // shared, loaded machine it moves far less than the wall time does.
  const cpu: Record<string, number[]> = Object.fromEntries(chosen.map((d) => [d, []]));
  for (let round = 0; round < ROUNDS; round++) {
    // Each round starts at another door, so none always runs first (or last).
    for (let i = 0; i < chosen.length; i++) {
      const door = chosen[(round + i) % chosen.length]!;
      const on = FRESH ? await start() : server;
      const before = process.cpuUsage();
      times[door]!.push(await doors[door]!(on));
      const used = process.cpuUsage(before);
      if (FRESH) await on.close();
      cpu[door]!.push((used.user + used.system) / 1000);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const summary: Record<string, unknown> = { items: ITEMS, rounds: ROUNDS };
  for (const door of chosen) summary[`${door}_ms`] = Math.round(median(times[door]!));
  for (const door of chosen) summary[`${door}_cpu_ms`] = Math.round(median(cpu[door]!));
  if (times.rest)
    for (const door of chosen.filter((d) => d !== "rest")) {
      summary[`${door}_vs_rest`] = +(median(times[door]!) / median(times.rest)).toFixed(2);
      summary[`${door}_cpu_vs_rest`] = +(median(cpu[door]!) / median(cpu.rest!)).toFixed(2);
    }
  summary.all_ms = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, v.map(Math.round)]));
  summary.all_cpu_ms = Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, v.map(Math.round)]));
  console.log(JSON.stringify(summary));
} finally {
  await server.close();
}

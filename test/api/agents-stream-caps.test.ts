// The stream caps (src/server/stream-caps.ts, docs/security.md) count the agents' doors too: an
// MCP GET stream, an A2A SendStreamingMessage and SubscribeToTask each hold a slot, and past the
// per-address cap each is refused with the contract's 429 and Retry-After before anything opens.
// Driven by the official clients only (MCP SDK Client, A2A SDK client), with a cap of one stream
// per address, so each stream the test opens is the one the next request is refused for.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { randomUUID } from "node:crypto";
import { Client as McpClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { Role, TaskState, type Message } from "@a2a-js/sdk";
import { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory, type Client } from "@a2a-js/sdk/client";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { bearer, makeToken } from "../helpers/tokens.ts";

const OWNER = "owner-token-for-agent-stream-caps";
let server: TestServer;
const logLines: string[] = [];

test.before(async () => {
  server = await startTestServer({
    env: {
      CROWS_TOKEN: OWNER,
      CROWS_APPROVAL_WINDOW_MS: "600000",
      CROWS_MAX_STREAMS: "10",
      CROWS_MAX_STREAMS_PER_CLIENT: "1",
    },
    deps: { logLine: (line: string) => logLines.push(line) },
  });
});
test.after(async () => {
  await server.close();
});

async function a2aClient(token: string): Promise<Client> {
  const fetchImpl: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set("authorization", `Bearer ${token}`);
    return fetch(input, { ...init, headers });
  };
  return new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
  }).createFromUrl(server.url);
}

const message = (text: string): Message => ({
  messageId: randomUUID(),
  contextId: "",
  taskId: "",
  role: Role.ROLE_USER,
  parts: [{ content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "text/plain" }],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});
const send = (m: Message) => ({ tenant: "", message: m, configuration: undefined, metadata: undefined });

/** An MCP client whose standalone GET stream's refusal, if any, is `refused`. */
async function mcpClient(): Promise<{ client: McpClient; refused: Promise<StreamableHTTPError> }> {
  const client = new McpClient({ name: "crows-caps-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
    requestInit: { headers: bearer(OWNER) },
  });
  const refused = new Promise<StreamableHTTPError>((resolve) => {
    client.onerror = (error) => {
      if (error instanceof StreamableHTTPError) resolve(error);
    };
  });
  await client.connect(transport);
  return { client, refused };
}

async function refusal(work: () => Promise<unknown>): Promise<string> {
  try {
    await work();
  } catch (error) {
    return String(error);
  }
  throw new Error("a stream past the cap was served");
}

test("an A2A stream holds the address's one slot: an MCP GET stream and another A2A stream or resubscribe get a 429; an MCP GET stream holds it too", async () => {
  // A caller without decide: its stream stays open while the list waits on the owner.
  const writer = await makeToken(server, "caps-writer", ["read", "write"], bearer(OWNER));
  const a2a = await a2aClient(writer.secret);
  const stream = a2a.sendMessageStream(send(message("Plan a picnic")))[Symbol.asyncIterator]();
  const first = (await stream.next()).value?.payload;
  if (first?.$case !== "task") throw new Error(`the stream began with ${first?.$case}, not the task`);
  const taskId = first.value.id;

  // The MCP client's GET stream is refused at the cap (its session still works: POSTs are no stream).
  const mcp = await mcpClient();
  const refused = await mcp.refused;
  assert.is(refused.code, 429);
  assert.ok((await mcp.client.listTools()).tools.length > 0);
  await mcp.client.close();

  const other = await a2aClient(writer.secret);
  assert.match(await refusal(() => other.sendMessageStream(send(message("Buy milk"))).next()), /429/);
  assert.match(await refusal(() => other.resubscribeTask({ tenant: "", id: taskId }).next()), /429/);
  assert.ok(logLines.some((l) => l.startsWith("streams: refused a stream from 127.0.0.1 at the cap of 1 per address")));

  // Cancelled, the task's stream ends and gives its slot back.
  await other.cancelTask({ tenant: "", id: taskId, metadata: undefined });
  let last: TaskState | undefined;
  for (let next = await stream.next(); !next.done; next = await stream.next())
    if (next.value.payload?.$case === "statusUpdate") last = next.value.payload.value.status?.state;
  assert.is(last, TaskState.TASK_STATE_CANCELED);

  // Now an MCP GET stream takes the slot: a subscribed resource's update arrives on it...
  const holder = await mcpClient();
  const updated = new Promise<string>((resolve) =>
    holder.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => resolve(n.params.uri)),
  );
  await holder.client.subscribeResource({ uri: "crows://nests/todo" });
  await server.request("POST", "/api/nests/todo/messages", { author: "owner", text: "caps" }, bearer(OWNER));
  assert.is(await updated, "crows://nests/todo");
  // ...and an A2A stream is refused for it, until the MCP client goes.
  assert.match(await refusal(() => other.sendMessageStream(send(message("Buy milk"))).next()), /429/);
  await holder.client.close();
});

test.run();

// Lists and nests as MCP resources (crows://lists/{list_id}, crows://nests/{nest_id}), readable with
// read and subscribable: a subscription follows the stream on the log and sends
// notifications/resources/updated for each event appended after it began.
import { type McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  McpError,
  ErrorCode,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { App } from "../../app.ts";
import { requireScope } from "../../access/principal.ts";
import { listStream, nestStream } from "../../base/streams.ts";
import { readList } from "../agents/list-view.ts";
import { principalOfCall } from "./tools.ts";

const LIST_URI = /^crows:\/\/lists\/([^/]+)$/;
const NEST_URI = /^crows:\/\/nests\/([^/]+)$/;

const json = (uri: string, value: unknown) => ({
  contents: [{ uri, mimeType: "application/json", text: JSON.stringify(value, null, 2) }],
});

/** The log stream a resource uri stands for, or undefined. */
function streamOf(uri: string): string | undefined {
  const list = LIST_URI.exec(uri);
  if (list) return listStream(decodeURIComponent(list[1]!));
  const nest = NEST_URI.exec(uri);
  if (nest) return nestStream(decodeURIComponent(nest[1]!));
  return undefined;
}

/** Registers the resources and the subscribe handlers; returns what ends every subscription. */
export function registerResources(server: McpServer, app: App): () => void {
  server.registerResource(
    "list",
    new ResourceTemplate("crows://lists/{list_id}", {
      list: async () => ({
        resources: (await app.prisma.todoList.findMany({ orderBy: { createdAt: "desc" }, take: 50 })).map((l) => ({
          uri: `crows://lists/${l.id}`,
          name: `list ${l.id}`,
          description: `${l.status}, by ${l.requester}`,
          mimeType: "application/json",
        })),
      }),
    }),
    { title: "A todo list", description: "Its items, stages, answers and verdicts.", mimeType: "application/json" },
    async (uri, variables, extra) => {
      requireScope(principalOfCall(extra), "read");
      return json(uri.href, await readList(app, String(variables.list_id)));
    },
  );
  server.registerResource(
    "nest",
    new ResourceTemplate("crows://nests/{nest_id}", {
      list: async () => ({
        resources: (await app.nests.list()).map((n) => ({
          uri: `crows://nests/${n.id}`,
          name: n.name,
          mimeType: "application/json",
        })),
      }),
    }),
    { title: "A nest", description: "Its newest 50 messages.", mimeType: "application/json" },
    async (uri, variables, extra) => {
      requireScope(principalOfCall(extra), "read");
      return json(uri.href, { messages: await app.chat.newest(String(variables.nest_id), 50) });
    },
  );

  const subscriptions = new Map<string, AbortController>();
  server.server.setRequestHandler(SubscribeRequestSchema, async (request, extra) => {
    requireScope(principalOfCall(extra), "read");
    const uri = request.params.uri;
    const stream = streamOf(uri);
    if (!stream)
      throw new McpError(ErrorCode.InvalidParams, `No resource ${uri}: crows://lists/<id> or crows://nests/<id>.`);
    if (subscriptions.has(uri)) return {};
    const stop = new AbortController();
    subscriptions.set(uri, stop);
    const from = await app.log.lastSeq(stream);
    void (async () => {
      for await (const _event of app.log.follow(stream, from, stop.signal))
        await server.server.sendResourceUpdated({ uri });
    })().catch(() => subscriptions.delete(uri)); // the session closed under it
    return {};
  });
  server.server.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
    subscriptions.get(request.params.uri)?.abort();
    subscriptions.delete(request.params.uri);
    return {};
  });
  return () => {
    for (const stop of subscriptions.values()) stop.abort();
    subscriptions.clear();
  };
}

// crows as an MCP server at /mcp (Streamable HTTP, the official SDK; docs/integrations.md). A thin
// door: the access gate has already admitted the request (a token where one is configured: 401
// otherwise) and set its principal, which each tool checks its scope against, as REST does. One
// McpServer and transport per session (Mcp-Session-Id), each with a bounded in-memory event store,
// so a client whose stream dropped resumes with Last-Event-ID.
import { randomUUID } from "node:crypto";
import type http from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import type { App } from "../../app.ts";
import { principalOf } from "../access.ts";
import { HttpError } from "../../http/http-error.ts";
import { readJson } from "../../http/body.ts";
import { API_VERSION } from "../../../compat/openapi/index.ts";
import { BoundedEventStore } from "./event-store.ts";
import { registerTools } from "./tools.ts";
import { registerResources } from "./resources.ts";

export const MCP_PATH = "/mcp";
/** Sessions kept at once; past it the oldest is closed (its client starts a new one). */
const MAX_SESSIONS = 200;

interface Session {
  transport: StreamableHTTPServerTransport;
  close(): Promise<void>;
}

export interface McpDoor {
  matches(pathname: string): boolean;
  serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void>;
  close(): Promise<void>;
}

export function createMcpDoor(app: App): McpDoor {
  const sessions = new Map<string, Session>();

  const open = async (): Promise<Session> => {
    const server = new McpServer(
      { name: "crows", version: API_VERSION },
      {
        capabilities: { resources: { subscribe: true, listChanged: false }, tools: {} },
        instructions:
          "crows is a flock of LLM workers that does a todo list under its owner's approval. submit_list hands it a list; pending_approvals and decide_approval answer what it waits for; read_list shows the answers.",
      },
    );
    registerTools(server, app);
    const endSubscriptions = registerResources(server, app);
    let session!: Session;
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      eventStore: new BoundedEventStore(),
      onsessioninitialized: (id) => {
        sessions.set(id, session);
        if (sessions.size > MAX_SESSIONS) void sessions.values().next().value?.close();
      },
      onsessionclosed: (id) => {
        sessions.delete(id);
        endSubscriptions();
      },
    });
    session = {
      transport,
      close: async () => {
        if (transport.sessionId) sessions.delete(transport.sessionId);
        endSubscriptions();
        await server.close();
      },
    };
    await server.connect(transport);
    return session;
  };

  return {
    matches: (pathname) => pathname === MCP_PATH || pathname === `${MCP_PATH}/`,
    async serve(req, res) {
      const principal = principalOf(req);
      // The SDK hands this to every handler as extra.authInfo: the tools check scopes on it.
      const request = Object.assign(req, {
        auth: {
          token: "",
          clientId: principal.actor.token_name ?? principal.actor.kind,
          scopes: [...principal.scopes],
          extra: { principal },
        },
      });
      const id = req.headers["mcp-session-id"];
      if (typeof id === "string") {
        const session = sessions.get(id);
        if (!session) throw new HttpError(404, `No MCP session ${id}: start a new one (initialize).`);
        const body = req.method === "POST" ? await readJson(req) : undefined;
        await session.transport.handleRequest(request, res, body);
        return;
      }
      if (req.method !== "POST") throw new HttpError(400, "An MCP session starts with a POST of initialize.");
      const body = await readJson(req);
      if (!isInitializeRequest(body))
        throw new HttpError(400, "No Mcp-Session-Id: the first request must be initialize.");
      const session = await open();
      await session.transport.handleRequest(request, res, body);
    },
    async close() {
      await Promise.allSettled([...sessions.values()].map((s) => s.close()));
      sessions.clear();
    },
  };
}

// A real Streamable HTTP MCP server on loopback, built with the SDK's McpServer, for tests: a
// read-only `greet` tool and an unannotated `stamp` tool; `addTool` registers another while
// connected (the SDK then sends notifications/tools/list_changed); every request's headers are kept.
import http from "node:http";
import { randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

export interface McpHttpServer {
  url: string;
  /** Headers of every request, in order. */
  headers: http.IncomingHttpHeaders[];
  addTool(name: string): void;
  close(): Promise<void>;
}

export async function startMcpHttpServer(): Promise<McpHttpServer> {
  const servers: McpServer[] = [];
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const extra: string[] = [];
  const headers: http.IncomingHttpHeaders[] = [];

  const build = () => {
    const server = new McpServer(
      { name: "loopback-http", version: "1" },
      { capabilities: { tools: { listChanged: true } } },
    );
    server.registerTool(
      "greet",
      { description: "Greets someone", inputSchema: { who: z.string() }, annotations: { readOnlyHint: true } },
      async ({ who }) => ({ content: [{ type: "text", text: `hello, ${who}` }] }),
    );
    server.registerTool("stamp", { description: "Stamps a paper" }, async () => ({
      content: [
        { type: "text", text: "stamped" },
        { type: "image", data: Buffer.from("png!").toString("base64"), mimeType: "image/png" },
      ],
    }));
    for (const name of extra) registerExtra(server, name);
    servers.push(server);
    return server;
  };
  const registerExtra = (server: McpServer, name: string) =>
    server.registerTool(
      name,
      { description: `added later: ${name}`, annotations: { readOnlyHint: true } },
      async () => ({
        content: [{ type: "text", text: name }],
      }),
    );

  const httpServer = http.createServer(async (req, res) => {
    headers.push(req.headers);
    const sessionId = req.headers["mcp-session-id"];
    let transport = typeof sessionId === "string" ? transports.get(sessionId) : undefined;
    if (!transport) {
      if (typeof sessionId === "string") {
        res.writeHead(404).end();
        return;
      }
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => void transports.set(id, transport!),
      });
      await build().connect(transport);
    }
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve) => httpServer.listen(0, "127.0.0.1", resolve));
  const { port } = httpServer.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    headers,
    addTool(name) {
      extra.push(name);
      for (const server of servers) registerExtra(server, name);
    },
    async close() {
      for (const server of servers) await server.close().catch(() => undefined);
      httpServer.closeAllConnections();
      await new Promise<void>((resolve) => httpServer.close(() => resolve()));
    },
  };
}

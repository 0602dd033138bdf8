// A Streamable HTTP MCP server on loopback, built with the SDK's McpServer, that a test holds in
// place: its one tool, `post_letter` (unannotated, so its policy asks), counts every call that
// reaches it, in this process, whichever crows instance sent it, and answers only once the test
// lets calls through; and its tools/list can be held, so a crows instance that connects now waits
// inside its flight's preparation until the test lets it on. (test/scale/tools-fencing.test.ts)
import http from "node:http";
import { randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";

export interface GatedMcpServer {
  url: string;
  /** Calls of post_letter that reached the server so far. */
  calls(): number;
  /** Resolves once `n` calls have reached the server. */
  called(n: number): Promise<void>;
  /** Calls from now on wait (in the air) until releaseCalls. */
  holdCalls(): void;
  releaseCalls(): void;
  /** tools/list requests from now on wait until releaseListing; `listingHeld` resolves when one waits. */
  holdListing(): void;
  listingHeld(): Promise<void>;
  releaseListing(): void;
  close(): Promise<void>;
}

interface Gate {
  open: boolean;
  opened: Promise<void>;
  release: () => void;
}

function gate(open: boolean): Gate {
  let release!: () => void;
  const opened = new Promise<void>((resolve) => (release = resolve));
  if (open) release();
  return { open, opened, release };
}

export async function startGatedMcpServer(): Promise<GatedMcpServer> {
  const servers: McpServer[] = [];
  const transports = new Map<string, StreamableHTTPServerTransport>();
  let count = 0;
  const countWaiters: Array<{ n: number; resolve: () => void }> = [];
  let callGate = gate(true);
  let listGate = gate(true);
  let onListingHeld: (() => void) | undefined;
  let listingHeld = new Promise<void>((resolve) => (onListingHeld = resolve));

  const build = () => {
    const server = new McpServer({ name: "gated-mail", version: "1" });
    server.registerTool("post_letter", { description: "Posts a letter (it cannot be unposted)" }, async () => {
      count += 1;
      for (const waiter of countWaiters.filter((w) => count >= w.n)) waiter.resolve();
      await callGate.opened;
      return { content: [{ type: "text", text: `letter posted (call ${count})` }] };
    });
    servers.push(server);
    return server;
  };

  const readBody = async (req: http.IncomingMessage): Promise<unknown> => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    return text === "" ? undefined : JSON.parse(text);
  };
  const lists = (body: unknown) =>
    (Array.isArray(body) ? body : [body]).some((m) => (m as { method?: string } | undefined)?.method === "tools/list");

  const httpServer = http.createServer(async (req, res) => {
    try {
      const body = req.method === "POST" ? await readBody(req) : undefined;
      if (lists(body) && !listGate.open) {
        onListingHeld?.();
        await listGate.opened;
      }
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
      await transport.handleRequest(req, res, body);
    } catch {
      if (!res.headersSent) res.writeHead(500).end();
    }
  });
  await new Promise<void>((resolve) => httpServer.listen(0, "127.0.0.1", resolve));
  const { port } = httpServer.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    calls: () => count,
    called: (n) => (count >= n ? Promise.resolve() : new Promise<void>((resolve) => countWaiters.push({ n, resolve }))),
    holdCalls: () => void (callGate = gate(false)),
    releaseCalls: () => {
      callGate.open = true;
      callGate.release();
    },
    holdListing: () => {
      listGate = gate(false);
      listingHeld = new Promise<void>((resolve) => (onListingHeld = resolve));
    },
    listingHeld: () => listingHeld,
    releaseListing: () => {
      listGate.open = true;
      listGate.release();
    },
    async close() {
      callGate.release();
      listGate.release();
      for (const server of servers) await server.close().catch(() => undefined);
      httpServer.closeAllConnections();
      await new Promise<void>((resolve) => httpServer.close(() => resolve()));
    },
  };
}

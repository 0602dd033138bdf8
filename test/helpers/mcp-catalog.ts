// A small ToolCatalog (src/tools/types.ts) for tests of flights with tools: the MCP SDK's Client
// over a real MCP server, @modelcontextprotocol/server-filesystem as a child process on a folder.
// Policies come from the tools' annotations (readOnlyHint: allow; anything else: ask) unless the
// test names its own. The registry and manager the owner uses are the toolservers branch's; this
// stands in for them here. Every call that reaches the server is counted (and, with `callLog`,
// appended to a file, so a test across a kill -9 can count calls made by a process that died).
import { appendFileSync } from "node:fs";
import { createRequire } from "node:module";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { ToolCallOutcome, ToolCatalog, ToolDescriptor, ToolPolicy } from "../../src/tools/types.ts";

export interface TestCatalog extends ToolCatalog {
  /** Calls that reached the server, in order. */
  calls: Array<{ tool: string; args: Record<string, unknown> }>;
  close(): Promise<void>;
}

export interface CatalogOptions {
  /** Per tool, a policy instead of the annotations' default. */
  policies?: Record<string, ToolPolicy>;
  /** Only these tools are offered (all by default). */
  only?: string[];
  /** Calls to these tools are sent, then never answered (a call in the air when the server dies). */
  hang?: string[];
  /** A file each call is appended to (one JSON line) before it is sent. */
  callLog?: string;
}

const require = createRequire(import.meta.url);
const SERVER_ENTRY = require.resolve("@modelcontextprotocol/server-filesystem/dist/index.js");

export async function startFilesystemCatalog(folder: string, options: CatalogOptions = {}): Promise<TestCatalog> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [SERVER_ENTRY, folder],
    cwd: folder,
    stderr: "ignore",
  });
  const client = new Client({ name: "crows-test", version: "1.0.0" });
  await client.connect(transport);
  const listed = await client.listTools();
  const tools: ToolDescriptor[] = listed.tools
    .filter((tool) => !options.only || options.only.includes(tool.name))
    .map((tool) => {
      const annotations = tool.annotations ?? {};
      const policy: ToolPolicy = options.policies?.[tool.name] ?? (annotations.readOnlyHint === true ? "allow" : "ask");
      return {
        serverId: "srv-fs",
        serverName: "fs",
        name: tool.name,
        description: tool.description ?? "",
        inputSchema: tool.inputSchema as Record<string, unknown>,
        annotations,
        policy,
      };
    })
    .filter((tool) => tool.policy !== "deny");
  const calls: TestCatalog["calls"] = [];
  return {
    calls,
    toolsFor: async () => tools,
    async call(serverId, tool, args, { signal, timeoutMs }): Promise<ToolCallOutcome> {
      if (serverId !== "srv-fs" || !tools.some((t) => t.name === tool))
        return { ok: false, error: { code: "tool_not_found", message: `no tool ${tool}` } };
      calls.push({ tool, args });
      if (options.callLog) appendFileSync(options.callLog, `${JSON.stringify({ tool, args })}\n`);
      if (options.hang?.includes(tool)) return new Promise<never>(() => {});
      try {
        const result = await client.callTool({ name: tool, arguments: args }, undefined, {
          signal,
          timeout: timeoutMs,
        });
        const content = Array.isArray(result.content) ? result.content : [];
        const text = content
          .map((part: { type?: string; text?: unknown }) => (part.type === "text" ? String(part.text) : ""))
          .join("\n");
        return { ok: true, text, isError: result.isError === true, bytes: Buffer.byteLength(text) };
      } catch (error) {
        return {
          ok: false,
          error: { code: "tool_protocol_error", message: error instanceof Error ? error.message : String(error) },
        };
      }
    },
    close: () => client.close(),
  };
}

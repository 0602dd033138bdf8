// Over 400 lines: one MCP server's whole life (start, list, call, crash, backoff, stop) is one state
// machine; its hostile-server bounds read best beside the states they guard.
// One tool server's connection (docs/tools.md "Connecting servers"): started when first needed,
// its tools listed (bounded) and cached until it says notifications/tools/list_changed, calls made
// once each, a crash noticed and the server restarted after a backoff that doubles, stopped with
// crows. A stdio server runs with a clean environment (env.ts) in its own working folder; its
// stderr is read and dropped, never copied into crows's logs (a server may print its secrets).
import { mkdirSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolResultSchema,
  ListToolsResultSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { ToolAnnotations, ToolCallOutcome } from "./types.ts";
import type { ToolServerSpec } from "./input.ts";
import { TOOL_NAME } from "./input.ts";
import { annotationsOf } from "./policy.ts";
import { outcomeOf } from "./outcome.ts";
import { cleanEnvironment } from "./env.ts";
import { cappedFetch } from "./capped-fetch.ts";
import { type BreakReason, failed, isMalformed, isTooLarge, outcomeOfError, ToolFailure } from "./failure.ts";
import {
  LIST_TIMEOUT_MS,
  MAX_DESCRIPTION_CHARS,
  MAX_LIST_PAGES,
  MAX_MESSAGE_BYTES,
  MAX_SCHEMA_BYTES,
  MAX_TOOLS_PER_SERVER,
  RESTART_BACKOFF,
} from "./limits.ts";

/** A tool as the server listed it, before any policy. */
export interface ListedTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  annotations: ToolAnnotations;
}

export type ServerStatus = "idle" | "starting" | "up" | "down" | "stopped";

/** What the console, GraphQL and /metrics show of one server. */
export interface ServerState {
  status: ServerStatus;
  last_error: string | null;
  last_error_at: string | null;
  /** Tools offered (after the caps); null until listed. */
  tools: number | null;
  /** Tools the server listed that crows left out (over the count, schema too large, bad name). */
  tools_dropped: number;
  calls: number;
  errors: number;
  restarts: number;
  started_at: string | null;
}

export interface ConnectionOptions {
  /** The working folder a stdio server without its own cwd runs in (created 0700). */
  workDir: string;
  listTimeoutMs?: number;
  backoff?: { initialMs: number; maxMs: number };
  /** Told whenever the state changes (tests wait on it; the catalog drops its cache). */
  onChange?: () => void;
  now?: () => number;
}

const CLIENT_INFO = { name: "crows", version: "1" };

export class ServerConnection {
  private client: Client | undefined;
  /** The client being started, so a stop can cut a start that is still waiting on the server. */
  private pending: Client | undefined;
  private transport: Transport | undefined;
  private starting: Promise<Client> | undefined;
  private listing: Promise<ListedTool[]> | undefined;
  private tools: ListedTool[] | undefined;
  /** Set when crows cuts the connection over what the server sent: in-flight calls are told why. */
  private broken: BreakReason | undefined;
  private stopping = false;
  /** Since the last time it was up, a start failed or it went down: flights stop waiting on it. */
  private failing = false;
  private retryAt = 0;
  private backoffMs: number;
  private restartTimer: NodeJS.Timeout | undefined;
  private readonly state: ServerState = {
    status: "idle",
    last_error: null,
    last_error_at: null,
    tools: null,
    tools_dropped: 0,
    calls: 0,
    errors: 0,
    restarts: 0,
    started_at: null,
  };

  constructor(
    readonly spec: ToolServerSpec,
    private readonly options: ConnectionOptions,
  ) {
    this.backoffMs = this.backoff.initialMs;
  }

  private get backoff() {
    return this.options.backoff ?? RESTART_BACKOFF;
  }
  private get listTimeoutMs() {
    return this.options.listTimeoutMs ?? LIST_TIMEOUT_MS;
  }
  private now() {
    return (this.options.now ?? Date.now)();
  }

  /** The tools listed last, without starting anything ([] when not listed). */
  cachedTools(): ListedTool[] {
    return this.tools ?? [];
  }

  snapshot(): ServerState {
    return { ...this.state };
  }

  private changed(): void {
    this.options.onChange?.();
  }

  private fail(message: string): void {
    this.state.last_error = message;
    this.state.last_error_at = new Date(this.now()).toISOString();
    this.changed();
  }

  /** The connected client, starting the server if it is not running. */
  private async ensure(): Promise<Client> {
    if (this.stopping) throw new ToolFailure("tool_server_down", `Tool server ${this.spec.name} is stopped.`);
    if (this.client) return this.client;
    if (this.starting) return this.starting;
    const wait = this.retryAt - this.now();
    if (wait > 0)
      throw new ToolFailure(
        "tool_server_down",
        `Tool server ${this.spec.name} is down (${this.state.last_error ?? "not started"}); next start in ${Math.ceil(wait / 1000)} s.`,
      );
    this.starting = this.start().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private transportOf(): Transport {
    if (this.spec.transport === "http") {
      return new StreamableHTTPClientTransport(new URL(this.spec.url), {
        requestInit: { headers: this.spec.headers },
        fetch: cappedFetch(MAX_MESSAGE_BYTES),
      });
    }
    const cwd = this.spec.cwd || this.options.workDir;
    if (!this.spec.cwd) mkdirSync(cwd, { recursive: true, mode: 0o700 });
    const stdio = new StdioClientTransport({
      command: this.spec.command,
      args: this.spec.args,
      env: cleanEnvironment(this.spec.env),
      cwd,
      stderr: "pipe",
      maxBufferSize: MAX_MESSAGE_BYTES,
    });
    stdio.stderr?.on("data", () => {}); // read and dropped: never copied anywhere
    return stdio;
  }

  private async start(): Promise<Client> {
    this.state.status = "starting";
    this.broken = undefined;
    this.changed();
    const transport = this.transportOf();
    const client = new Client(CLIENT_INFO, { capabilities: {} });
    client.onerror = (error) => this.onTransportError(client, error);
    client.onclose = () => this.onClosed(client);
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      if (this.client !== client) return;
      this.tools = undefined;
      this.changed();
      void this.listTools().catch(() => undefined); // refreshed now; a failure shows in the state
    });
    this.pending = client;
    this.transport = transport; // so garbage during initialize cuts it at once, as after
    try {
      await client.connect(transport, { timeout: this.listTimeoutMs });
    } catch (error) {
      this.pending = undefined;
      this.transport = undefined;
      await client.close().catch(() => undefined);
      const message =
        error instanceof Error && /ENOENT/.test(error.message)
          ? `command not found: ${this.spec.command.slice(0, 200)}`
          : this.broken
            ? `could not start: it ${this.broken === "protocol" ? "sent something that is not JSON-RPC" : "sent a message over the size limit"}`
            : `could not start: ${describeStart(error)}`;
      this.wentDown(message);
      throw new ToolFailure("tool_server_down", `Tool server ${this.spec.name} ${message}.`);
    }
    this.pending = undefined;
    if (this.stopping) {
      this.transport = undefined;
      await client.close().catch(() => undefined);
      throw new ToolFailure("tool_server_down", `Tool server ${this.spec.name} is stopped.`);
    }
    this.client = client;
    this.state.status = "up";
    this.failing = false;
    this.state.started_at = new Date(this.now()).toISOString();
    this.changed();
    return client;
  }

  /** Down until the backoff passes; the wait doubles each time, back to the first after a good call. */
  private wentDown(message: string): void {
    this.state.status = "down";
    this.failing = true;
    this.retryAt = this.now() + this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, this.backoff.maxMs);
    this.fail(message);
  }

  private onTransportError(client: Client, error: unknown): void {
    if (this.client !== client && this.pending !== client) return;
    // A stdio server must write nothing but JSON-RPC to stdout: anything else, or a message past
    // the size limit, cuts the connection (calls in flight get the named error) and restarts it.
    if (this.spec.transport === "stdio" && (isTooLarge(error) || isMalformed(error))) {
      this.broken ??= isTooLarge(error) ? "too_large" : "protocol";
      void this.transport?.close().catch(() => undefined);
    }
  }

  private onClosed(client: Client): void {
    if (this.client !== client) return; // a failed start, or one crows closed itself
    this.client = undefined;
    this.transport = undefined;
    this.tools = undefined;
    if (this.stopping) return;
    const why =
      this.broken === "too_large"
        ? "sent a message over the size limit"
        : this.broken === "protocol"
          ? "sent something that is not JSON-RPC"
          : "stopped (exited or closed the connection)";
    this.wentDown(why);
    // It was up: start it again once the backoff has passed, so its tools come back on their own.
    this.restartTimer = setTimeout(
      () => {
        this.restartTimer = undefined;
        if (this.stopping || this.client || this.starting) return;
        this.state.restarts += 1;
        void this.ensure()
          .then(() => this.listTools())
          .catch(() => undefined);
      },
      Math.max(0, this.retryAt - this.now()),
    );
    this.restartTimer.unref();
  }

  /**
   * The tools a flight may be offered now, without waiting on a server that has already failed:
   * the first start is waited for (bounded by the list timeout); after a failure the start is
   * tried again in the background (once the backoff has passed) and this flight gets none of its
   * tools, so one dead server never slows every flight by its timeout.
   */
  async offerable(): Promise<ListedTool[]> {
    if (!this.failing && this.state.status !== "stopped") return this.listTools();
    if (this.state.status === "up") return this.listTools();
    if (this.state.status === "down" && this.retryAt <= this.now() && !this.starting)
      void this.listTools().catch(() => undefined);
    return [];
  }

  /** The server's tools, bounded (limits.ts), from the cache when it holds them. */
  async listTools(): Promise<ListedTool[]> {
    if (this.tools) return this.tools;
    this.listing ??= this.fetchTools().finally(() => {
      this.listing = undefined;
    });
    return this.listing;
  }

  private async fetchTools(): Promise<ListedTool[]> {
    const client = await this.ensure();
    const tools: ListedTool[] = [];
    const seen = new Set<string>();
    let dropped = 0;
    let cursor: string | undefined;
    try {
      for (let page = 0; page < MAX_LIST_PAGES; page++) {
        const result = await client.request(
          { method: "tools/list", params: cursor ? { cursor } : {} },
          ListToolsResultSchema,
          { timeout: this.listTimeoutMs },
        );
        for (const tool of result.tools) {
          const listed = listedToolOf(tool);
          if (!listed || seen.has(listed.name) || tools.length >= MAX_TOOLS_PER_SERVER) {
            dropped += 1;
            continue;
          }
          seen.add(listed.name);
          tools.push(listed);
        }
        cursor = result.nextCursor;
        if (!cursor || tools.length >= MAX_TOOLS_PER_SERVER) break;
      }
    } catch (error) {
      const outcome = outcomeOfError(error, {
        serverName: this.spec.name,
        timeoutMs: this.listTimeoutMs,
        aborted: false,
        broken: this.broken,
      });
      const message = outcome.ok ? outcome.text : outcome.error.message;
      this.fail(`listing tools: ${message}`);
      throw new ToolFailure(outcome.ok ? "tool_protocol_error" : outcome.error.code, message);
    }
    if (this.client !== client)
      throw new ToolFailure("tool_server_crashed", `Tool server ${this.spec.name} stopped while listing its tools.`);
    this.tools = tools;
    this.state.tools = tools.length;
    this.state.tools_dropped = dropped;
    this.changed();
    return tools;
  }

  /** Calls one tool once: never retried, whatever happens. */
  async call(
    tool: string,
    args: Record<string, unknown>,
    options: { signal: AbortSignal; timeoutMs: number },
  ): Promise<ToolCallOutcome> {
    this.state.calls += 1;
    let outcome: ToolCallOutcome;
    try {
      const client = await this.ensure();
      const result = await client.request(
        { method: "tools/call", params: { name: tool, arguments: args } },
        CallToolResultSchema,
        { signal: options.signal, timeout: options.timeoutMs },
      );
      outcome = outcomeOf(result);
      this.backoffMs = this.backoff.initialMs; // it answered: a later crash starts the backoff afresh
    } catch (error) {
      outcome = outcomeOfError(error, {
        serverName: this.spec.name,
        timeoutMs: options.timeoutMs,
        aborted: options.signal.aborted,
        broken: this.broken,
      });
      if (!outcome.ok) this.fail(`${outcome.error.code}: ${outcome.error.message}`);
      // An HTTP server that failed a call may have lost its session: reconnect next time.
      if (!outcome.ok && this.spec.transport === "http" && outcome.error.code === "tool_server_crashed")
        void this.closeClient();
    }
    if (!outcome.ok || outcome.isError) this.state.errors += 1;
    this.changed();
    return outcome;
  }

  private async closeClient(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.transport = undefined;
    this.tools = undefined;
    if (client) await client.close().catch(() => undefined);
  }

  /** Stops the server for good (crows is stopping, or the owner removed it). */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    void this.pending?.close().catch(() => undefined);
    await this.starting?.catch(() => undefined);
    await this.closeClient();
    this.state.status = "stopped";
    this.changed();
  }
}

function describeStart(error: unknown): string {
  if (error instanceof Error) {
    if (/timed out/i.test(error.message)) return "no answer to initialize in time";
    return error.message.replace(/\s+/g, " ").slice(0, 200);
  }
  return "unknown error";
}

/** A listed tool as crows keeps it, or undefined when it is left out (bad name, schema too large). */
function listedToolOf(tool: {
  name: string;
  description?: string;
  inputSchema: unknown;
  annotations?: unknown;
}): ListedTool | undefined {
  if (!TOOL_NAME.test(tool.name)) return undefined;
  const inputSchema = (tool.inputSchema ?? { type: "object" }) as Record<string, unknown>;
  if (Buffer.byteLength(JSON.stringify(inputSchema), "utf8") > MAX_SCHEMA_BYTES) return undefined;
  return {
    name: tool.name,
    description: (tool.description ?? "").slice(0, MAX_DESCRIPTION_CHARS),
    inputSchema,
    annotations: annotationsOf(tool.annotations),
  };
}

export { failed };

// The tool servers at work (docs/tools.md): the ToolCatalog the flock calls (types.ts), over the
// registry's rows and one ServerConnection per server. A server starts when a flight first needs
// its tools, and stops when it is removed or crows stops. One server down, slow or hostile costs
// the flights that use it a named error, never anyone else: toolsFor leaves its tools out.
import path from "node:path";
import type { ToolCallOutcome, ToolCatalog, ToolDescriptor } from "./types.ts";
import type { ToolServerSpec } from "./input.ts";
import { ServerConnection, type ServerState, type ListedTool } from "./connection.ts";
import { failed } from "./failure.ts";
import { effectivePolicy } from "./policy.ts";
import { type ToolServerRegistry, type ToolServerView, viewOfSpec } from "./registry.ts";

/** A server with its state and its tools as they would be offered (policy deny included). */
export interface ToolServerStatus extends ToolServerView {
  state: ServerState;
  tools: Array<Omit<ToolDescriptor, "serverId" | "serverName" | "inputSchema"> & { default_policy: string }>;
}

export interface ToolServersOptions {
  /** <dataDir>/tools: each stdio server without its own cwd runs in <here>/<server id>/. */
  toolsDir: string;
  listTimeoutMs?: number;
  backoff?: { initialMs: number; maxMs: number };
  now?: () => number;
}

export class ToolServers implements ToolCatalog {
  private readonly connections = new Map<string, ServerConnection>();
  private readonly listeners = new Set<() => void>();
  private stopped = false;

  constructor(
    readonly registry: ToolServerRegistry,
    private readonly options: ToolServersOptions,
  ) {
    registry.changed = (id) => void this.forget(id);
  }

  /** Told on any change of any server's state (tests wait on it instead of sleeping). */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private notify(): void {
    for (const listener of this.listeners) listener();
  }

  /** The connection for this spec; a changed registration (or a removed one) stops the old one. */
  private connectionOf(spec: ToolServerSpec): ServerConnection {
    const existing = this.connections.get(spec.id);
    if (existing && sameLaunch(existing.spec, spec)) {
      // Policies and nests do not need a restart: the connection reads them from its spec.
      Object.assign(existing.spec, { policies: spec.policies, nests: spec.nests, name: spec.name });
      return existing;
    }
    if (existing) void existing.stop();
    const connection = new ServerConnection(
      { ...spec },
      {
        workDir: path.join(this.options.toolsDir, spec.id),
        listTimeoutMs: this.options.listTimeoutMs,
        backoff: this.options.backoff,
        now: this.options.now,
        onChange: () => this.notify(),
      },
    );
    this.connections.set(spec.id, connection);
    return connection;
  }

  private async forget(id: string): Promise<void> {
    const specs = await this.registry.specs().catch(() => undefined);
    const spec = specs?.find((s) => s.id === id);
    const connection = this.connections.get(id);
    if (!spec && connection) {
      await connection.stop(); // told as "stopped" while still listed, then gone
      this.connections.delete(id);
    } else if (spec && connection) this.connectionOf(spec);
    this.notify();
  }

  async toolsFor(where: { nestId: string }): Promise<ToolDescriptor[]> {
    if (this.stopped) return [];
    const all = await this.registry.currentSpecs();
    this.sweep(all);
    const specs = all.filter((s) => s.nests === null || s.nests.includes(where.nestId));
    const lists = await Promise.all(
      specs.map(async (spec) => {
        const connection = this.connectionOf(spec);
        const tools = await connection.offerable().catch(() => [] as ListedTool[]); // down: its state says why
        return tools.flatMap((tool): ToolDescriptor[] => {
          const policy = effectivePolicy(tool.annotations, spec.policies[tool.name]);
          if (policy === "deny") return [];
          return [{ serverId: spec.id, serverName: spec.name, ...tool, policy }];
        });
      }),
    );
    return lists.flat();
  }

  /** Stops the connections of servers no longer registered (removed on another instance). */
  private sweep(specs: ToolServerSpec[]): void {
    for (const [id, connection] of this.connections) {
      if (specs.some((s) => s.id === id)) continue;
      void connection.stop().finally(() => this.connections.delete(id)); // told as "stopped", then gone
    }
  }

  async call(
    serverId: string,
    tool: string,
    args: Record<string, unknown>,
    options: { signal: AbortSignal; timeoutMs: number },
  ): Promise<ToolCallOutcome> {
    if (this.stopped) return failed("tool_server_down", "crows is stopping: no tool is called.");
    const spec = (await this.registry.currentSpecs()).find((s) => s.id === serverId);
    if (!spec) return failed("tool_not_found", `No tool server ${serverId.slice(0, 80)} (removed?).`);
    const connection = this.connectionOf(spec);
    let listed: ListedTool | undefined;
    try {
      listed = (await connection.listTools()).find((t) => t.name === tool);
    } catch (error) {
      return failed("tool_server_down", error instanceof Error ? error.message : "The tool server is down.");
    }
    if (!listed) return failed("tool_not_found", `Tool server ${spec.name} offers no tool ${tool.slice(0, 128)}.`);
    if (effectivePolicy(listed.annotations, spec.policies[tool]) === "deny")
      return failed("tool_denied", `The owner's policy denies ${spec.name}/${tool}.`);
    return connection.call(tool, args, options);
  }

  /** Every server with its state and tools; `list: true` starts the ones not yet running to list them. */
  async statuses(options: { list?: boolean } = {}): Promise<ToolServerStatus[]> {
    const specs = await this.registry.specs();
    return Promise.all(specs.map((spec) => this.statusOf(spec, options.list === true)));
  }

  async status(id: string, options: { list?: boolean } = {}): Promise<ToolServerStatus> {
    return this.statusOf(await this.registry.spec(id), options.list === true);
  }

  private async statusOf(spec: ToolServerSpec, list: boolean): Promise<ToolServerStatus> {
    const connection = this.stopped ? undefined : this.connectionOf(spec);
    const listed =
      connection && list
        ? await connection.listTools().catch(() => [] as ListedTool[])
        : (connection?.cachedTools() ?? []);
    return {
      ...viewOfSpec(spec),
      state: connection?.snapshot() ?? stoppedState(),
      tools: listed.map((tool) => ({
        name: tool.name,
        description: tool.description,
        annotations: tool.annotations,
        policy: effectivePolicy(tool.annotations, spec.policies[tool.name]),
        default_policy: effectivePolicy(tool.annotations, undefined),
      })),
    };
  }

  /** Each running connection's state, for /metrics (no database read). */
  states(): Array<{ id: string; name: string; state: ServerState }> {
    return [...this.connections.values()].map((c) => ({ id: c.spec.id, name: c.spec.name, state: c.snapshot() }));
  }

  /** Stops every server (crows is stopping). */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.connections.values()].map((c) => c.stop()));
  }
}

/** Whether two registrations start the same process or reach the same URL the same way. */
function sameLaunch(a: ToolServerSpec, b: ToolServerSpec): boolean {
  return (
    a.transport === b.transport &&
    a.command === b.command &&
    a.cwd === b.cwd &&
    a.url === b.url &&
    JSON.stringify(a.args) === JSON.stringify(b.args) &&
    JSON.stringify(a.env) === JSON.stringify(b.env) &&
    JSON.stringify(a.headers) === JSON.stringify(b.headers)
  );
}

const stoppedState = (): ServerState => ({
  status: "stopped",
  last_error: null,
  last_error_at: null,
  tools: null,
  tools_dropped: 0,
  calls: 0,
  errors: 0,
  restarts: 0,
  started_at: null,
});

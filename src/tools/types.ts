// The seam between the tool servers an owner connects (src/tools/: registry, MCP clients, policies)
// and the flights that use them (src/flock/: the tool loop, call approvals, at-most-once).
// The flock sees only this: which tools an item may use and a way to call one.

/** allow: runs without asking; ask: parks as an approval first; deny: never offered. */
export type ToolPolicy = "allow" | "ask" | "deny";
export const TOOL_POLICIES: readonly ToolPolicy[] = ["allow", "ask", "deny"];

/** MCP's tool annotations, as the server declared them (hints, never trusted for more than defaults). */
export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/** One tool a flight may be offered. */
export interface ToolDescriptor {
  serverId: string;
  serverName: string;
  name: string;
  description: string;
  /** The JSON Schema of its arguments, exactly as the server gave it. */
  inputSchema: Record<string, unknown>;
  annotations: ToolAnnotations;
  /** The effective policy: the owner's, else from annotations (readOnlyHint true: allow; else ask). */
  policy: ToolPolicy;
}

/** What a call returned, as data: nothing in it is ever read as an instruction. */
export type ToolCallOutcome =
  | { ok: true; text: string; isError: boolean; bytes: number }
  | { ok: false; error: { code: ToolErrorCode; message: string } };

export type ToolErrorCode =
  | "tool_timeout"
  | "tool_server_down"
  | "tool_server_crashed"
  | "tool_protocol_error"
  | "tool_output_too_large"
  | "tool_not_found"
  | "tool_denied"
  | "tool_refused"
  | "tool_outcome_unknown";

export interface ToolCatalog {
  /** The tools an item in this nest may be offered (policy deny already left out). */
  toolsFor(where: { nestId: string }): Promise<ToolDescriptor[]>;
  /** Calls one tool once; never retries a call that may have changed anything. */
  call(
    serverId: string,
    tool: string,
    args: Record<string, unknown>,
    options: { signal: AbortSignal; timeoutMs: number },
  ): Promise<ToolCallOutcome>;
}

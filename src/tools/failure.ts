// A bounded, named failure of a tool server (the codes of types.ts), and how an error the MCP SDK
// raises maps onto one. Messages name what happened, never a secret the server was given.
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { ToolCallOutcome, ToolErrorCode } from "./types.ts";

export class ToolFailure extends Error {
  constructor(
    readonly code: ToolErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "ToolFailure";
  }
}

/** Why a connection was cut by crows itself while a call may be in flight. */
export type BreakReason = "protocol" | "too_large";

export const TOO_LARGE_MARK = "crows: message over the size limit";

export const isTooLarge = (error: unknown): boolean =>
  error instanceof Error &&
  (/ReadBuffer exceeded maximum size/.test(error.message) || error.message.includes(TOO_LARGE_MARK));

/** A line a server sent that is not JSON-RPC (stdio's reader raises these, then reads on). */
export const isMalformed = (error: unknown): boolean =>
  error instanceof SyntaxError ||
  (error instanceof Error && (error.name === "ZodError" || /^Unknown message type/.test(error.message)));

export const failed = (code: ToolErrorCode, message: string): ToolCallOutcome => ({
  ok: false,
  error: { code, message },
});

/** The outcome of a call that threw, given what the connection knows about why. */
export function outcomeOfError(
  error: unknown,
  context: { serverName: string; timeoutMs: number; aborted: boolean; broken: BreakReason | undefined },
): ToolCallOutcome {
  const who = `Tool server ${context.serverName}`;
  if (error instanceof ToolFailure) return failed(error.code, error.message);
  if (context.broken === "too_large" || isTooLarge(error))
    return failed("tool_output_too_large", `${who} sent a message over ${MAX_MESSAGE_TEXT}; the connection was cut.`);
  if (context.broken === "protocol" || isMalformed(error))
    return failed("tool_protocol_error", `${who} sent something that is not valid JSON-RPC; the connection was cut.`);
  if (context.aborted) return failed("tool_outcome_unknown", `The call to ${who} was cancelled before it answered.`);
  if (error instanceof McpError) {
    if (error.code === ErrorCode.RequestTimeout)
      return failed("tool_timeout", `${who} did not answer within ${context.timeoutMs} ms.`);
    if (error.code === ErrorCode.ConnectionClosed)
      return failed("tool_server_crashed", `${who} stopped while the call was in flight.`);
    // The server answered with a JSON-RPC error: a refusal it chose, given to the crow as data.
    const text = `The tool server answered with an error: ${error.message.slice(0, 2000)}`;
    return { ok: true, text, isError: true, bytes: Buffer.byteLength(text, "utf8") };
  }
  if (error instanceof TypeError)
    return failed("tool_server_crashed", `${who} could not be reached while the call was in flight.`);
  return failed("tool_protocol_error", `${who} answered in a way crows cannot read.`);
}

const MAX_MESSAGE_TEXT = "8 MB";

// Tool servers for tests: the hand-written hostile stdio server (test/fixtures/mcp-hostile.mjs), the
// real filesystem server, and a wait on the catalog's state that needs no sleep.
import { fileURLToPath } from "node:url";
import type { ToolServers } from "../../src/tools/catalog.ts";
import type { ServerState } from "../../src/tools/connection.ts";
import type { ToolCallOutcome } from "../../src/tools/types.ts";

export const HOSTILE = fileURLToPath(new URL("../fixtures/mcp-hostile.mjs", import.meta.url));
export const FILESYSTEM = fileURLToPath(
  new URL("../../node_modules/@modelcontextprotocol/server-filesystem/dist/index.js", import.meta.url),
);

/** A stdio registration of the hostile fixture in one mode. */
export const hostile = (name: string, mode: string, extra: Record<string, unknown> = {}) => ({
  name,
  command: process.execPath,
  args: [HOSTILE, mode],
  ...extra,
});

/** Resolves once `ready` holds of the server's state, checked on every change (no polling sleep). */
export function waitForState(
  tools: ToolServers,
  serverId: string,
  ready: (state: ServerState) => boolean,
  timeoutMs = 30_000,
): Promise<ServerState> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const found = tools.states().find((s) => s.id === serverId);
      if (found && ready(found.state)) {
        stop();
        clearTimeout(timer);
        resolve(found.state);
      }
    };
    const stop = tools.onChange(check);
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`server ${serverId} never reached the state: ${JSON.stringify(tools.states())}`));
    }, timeoutMs);
    check();
  });
}

export const call = (
  tools: ToolServers,
  serverId: string,
  tool: string,
  args: Record<string, unknown> = {},
  timeoutMs = 20_000,
): Promise<ToolCallOutcome> => tools.call(serverId, tool, args, { signal: new AbortController().signal, timeoutMs });

export function errorOf(outcome: ToolCallOutcome): { code: string; message: string } {
  if (outcome.ok) throw new Error(`expected a failure, got ${JSON.stringify(outcome).slice(0, 300)}`);
  return outcome.error;
}

export function textOf(outcome: ToolCallOutcome): string {
  if (!outcome.ok) throw new Error(`expected text, got ${JSON.stringify(outcome.error)}`);
  return outcome.text;
}

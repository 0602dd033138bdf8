// The environment a stdio tool server starts with (docs/tools.md "Connecting servers"): only what
// its registration names, over the few variables the MCP SDK passes to every server it spawns
// (HOME, LOGNAME, PATH, SHELL, TERM, USER: getDefaultEnvironment). Never crows's own: no CROWS_*
// setting, no provider key, no token, no DATABASE_URL, whatever crows itself was started with.
import { getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";

/** What the SDK adds on its own; named here so a test can hold it to this list. */
export const INHERITED_NAMES = Object.keys(getDefaultEnvironment());

export function cleanEnvironment(registered: Record<string, string>): Record<string, string> {
  return { ...registered };
}

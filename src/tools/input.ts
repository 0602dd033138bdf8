// What an owner may register as a tool server, checked before anything is stored: each rule a 400
// naming the field. Values of env and headers are secrets and never appear in a message.
import path from "node:path";
import { BadInputError } from "../base/errors.ts";
import type { ToolPolicy } from "./types.ts";
import { isToolPolicy } from "./policy.ts";

export type Transport = "stdio" | "http";

/** A server as the registry keeps it and the manager starts it (secrets included: never shown). */
export interface ToolServerSpec {
  id: string;
  name: string;
  transport: Transport;
  command: string;
  args: string[];
  env: Record<string, string>;
  /** "" : <dataDir>/tools/<id>/. */
  cwd: string;
  url: string;
  headers: Record<string, string>;
  /** null: every nest. */
  nests: string[] | null;
  policies: Record<string, ToolPolicy>;
  createdAt: Date;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/;
/** What MCP allows a tool name to be (and what a model's function name can carry). */
export const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;
const NEST_ID = /^[A-Za-z0-9_-]{1,64}$/;
const MAX_ARGS = 64;
const MAX_ENTRIES = 64;
const MAX_TEXT = 4096;
const MAX_SECRET = 8192;
/** Headers the transport sets itself: an owner's value would break the protocol. */
const RESERVED_HEADERS = new Set([
  "content-type",
  "accept",
  "content-length",
  "host",
  "mcp-session-id",
  "mcp-protocol-version",
]);

const isText = (value: unknown, max: number): value is string =>
  typeof value === "string" && value.length <= max && !value.includes("\u0000");

export function checkServerName(raw: unknown): string {
  if (typeof raw !== "string" || !NAME.test(raw))
    throw new BadInputError('"name" must be 1-64 letters, digits, "_", "." or "-", starting with a letter or digit.');
  return raw;
}

function checkArgs(raw: unknown): string[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw) || raw.length > MAX_ARGS || raw.some((a) => !isText(a, MAX_TEXT)))
    throw new BadInputError(`"args" must be a list of at most ${MAX_ARGS} strings of at most ${MAX_TEXT} characters.`);
  return raw as string[];
}

/** env or headers: names checked, values only measured (they are secrets: never echoed). */
function checkSecrets(field: "env" | "headers", raw: unknown): Record<string, string> {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== "object" || Array.isArray(raw))
    throw new BadInputError(`"${field}" must be an object of names to string values.`);
  const entries = Object.entries(raw as Record<string, unknown>);
  if (entries.length > MAX_ENTRIES) throw new BadInputError(`"${field}" may name at most ${MAX_ENTRIES} values.`);
  const out: Record<string, string> = {};
  for (const [name, value] of entries) {
    if (field === "env" && !ENV_NAME.test(name))
      throw new BadInputError('"env" names must be letters, digits and "_", not starting with a digit.');
    if (field === "headers" && (!HEADER_NAME.test(name) || RESERVED_HEADERS.has(name.toLowerCase())))
      throw new BadInputError(
        `"headers" names must be HTTP header names, and not one the transport sets (${[...RESERVED_HEADERS].join(", ")}).`,
      );
    if (!isText(value, MAX_SECRET) || (field === "headers" && /[\r\n]/.test(value)))
      throw new BadInputError(
        `"${field}" values must be strings of at most ${MAX_SECRET} characters${field === "headers" ? " on one line" : ""} (the value is not repeated here).`,
      );
    out[name] = value;
  }
  return out;
}

function checkUrl(raw: unknown): string {
  let url: URL;
  try {
    if (typeof raw !== "string" || raw.length > MAX_TEXT) throw new Error("not text");
    url = new URL(raw);
  } catch {
    throw new BadInputError('"url" must be an absolute http or https URL.');
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new BadInputError('"url" must be an absolute http or https URL.');
  return url.href;
}

export function checkNests(raw: unknown): string[] | null {
  if (raw === undefined || raw === null || raw === "all") return null;
  if (!Array.isArray(raw) || raw.length > MAX_ENTRIES || raw.some((n) => typeof n !== "string" || !NEST_ID.test(n)))
    throw new BadInputError('"nests" must be "all" or a list of nest ids.');
  return [...new Set(raw as string[])];
}

/** {tool: policy | null}: null puts the tool back on its default. */
export function checkPolicyChanges(raw: unknown): Record<string, ToolPolicy | null> {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== "object" || Array.isArray(raw))
    throw new BadInputError('"policies" must be an object of tool names to "allow", "ask", "deny" or null.');
  const entries = Object.entries(raw as Record<string, unknown>);
  if (entries.length > 256) throw new BadInputError('"policies" may name at most 256 tools at once.');
  for (const [tool, policy] of entries) {
    if (!TOOL_NAME.test(tool)) throw new BadInputError(`"policies": "${tool.slice(0, 40)}" is not a tool name.`);
    if (policy !== null && !isToolPolicy(policy))
      throw new BadInputError(`"policies.${tool}" must be "allow", "ask", "deny" or null (the default).`);
  }
  return raw as Record<string, ToolPolicy | null>;
}

export interface ServerInput {
  name: unknown;
  transport?: unknown;
  command?: unknown;
  args?: unknown;
  env?: unknown;
  cwd?: unknown;
  url?: unknown;
  headers?: unknown;
  nests?: unknown;
  policies?: unknown;
}

export type CheckedServer = Omit<ToolServerSpec, "id" | "createdAt">;

export function checkServerInput(input: ServerInput): CheckedServer {
  const name = checkServerName(input.name);
  const hasCommand = input.command !== undefined && input.command !== null;
  const hasUrl = input.url !== undefined && input.url !== null;
  const transport = input.transport ?? (hasUrl ? "http" : "stdio");
  if (transport !== "stdio" && transport !== "http")
    throw new BadInputError('"transport" must be "stdio" (a command) or "http" (a Streamable HTTP url).');
  if (transport === "stdio" && (!hasCommand || hasUrl || input.headers !== undefined))
    throw new BadInputError('A stdio server takes "command" (and "args", "env", "cwd"), not "url" or "headers".');
  if (
    transport === "http" &&
    (!hasUrl || hasCommand || input.args !== undefined || input.env !== undefined || input.cwd !== undefined)
  )
    throw new BadInputError(
      'A Streamable HTTP server takes "url" (and "headers"), not "command", "args", "env" or "cwd".',
    );
  let command = "";
  let cwd = "";
  if (transport === "stdio") {
    if (!isText(input.command, MAX_TEXT) || input.command.trim() === "")
      throw new BadInputError(`"command" must be a non-empty string of at most ${MAX_TEXT} characters.`);
    command = input.command;
    if (input.cwd !== undefined && input.cwd !== null && input.cwd !== "") {
      if (!isText(input.cwd, MAX_TEXT) || !path.isAbsolute(input.cwd))
        throw new BadInputError('"cwd" must be an absolute path (none: a folder of its own under the data folder).');
      cwd = input.cwd;
    }
  }
  const policies: Record<string, ToolPolicy> = {};
  for (const [tool, policy] of Object.entries(checkPolicyChanges(input.policies))) if (policy) policies[tool] = policy;
  return {
    name,
    transport,
    command,
    args: transport === "stdio" ? checkArgs(input.args) : [],
    env: transport === "stdio" ? checkSecrets("env", input.env) : {},
    cwd,
    url: transport === "http" ? checkUrl(input.url) : "",
    headers: transport === "http" ? checkSecrets("headers", input.headers) : {},
    nests: checkNests(input.nests),
    policies,
  };
}

// `crows tools add|list|remove|policy` (docs/tools.md "Connecting servers"): the REST API of the
// running server, as `crows webhooks` uses it, with CROWS_TOKEN when it is set (admin scope).
//   crows tools add NAME [--env NAME[=VALUE]]... [--cwd DIR] [--nests a,b] -- COMMAND [ARG]...
//   crows tools add NAME --url URL [--header NAME[=VALUE]]... [--nests a,b]
//   crows tools list
//   crows tools show --id ID          (lists its tools, starting it if needed)
//   crows tools remove --id ID
//   crows tools policy --id ID --tool TOOL --policy allow|ask|deny|default
// A secret given as NAME alone is read from this command's own environment, so it never sits on a
// command line (where `ps` shows it). Nothing printed ever carries a value: only names.
import { EXIT } from "../ops/exit.ts";
import { CommandError } from "./commands.ts";
import { call } from "./webhooks.ts";

type Env = Record<string, string | undefined>;

export const TOOLS_USAGE =
  "tools add NAME [--env NAME[=VALUE]]... [--cwd DIR] [--nests a,b] -- COMMAND [ARG]... | tools add NAME --url URL [--header NAME[=VALUE]]... | tools list | tools show --id ID | tools remove --id ID | tools policy --id ID --tool TOOL --policy allow|ask|deny|default";

const usage = (message: string) => new CommandError(EXIT.usage, "usage", `${message}; usage: crows ${TOOLS_USAGE}`);

/** NAME=VALUE, or NAME alone: the value from this command's environment. */
function pair(text: string, env: Env, what: string): [string, string] {
  const at = text.indexOf("=");
  if (at > 0) return [text.slice(0, at), text.slice(at + 1)];
  const value = env[text];
  if (value === undefined) throw usage(`--${what} ${text} names no variable set in this environment`);
  return [text, value];
}

function parseAdd(args: string[], env: Env): Record<string, unknown> {
  const [name, ...rest] = args;
  if (!name || name.startsWith("--")) throw usage("tools add needs a NAME");
  const body: Record<string, unknown> = { name };
  const vars: Record<string, string> = {};
  const headers: Record<string, string> = {};
  for (let i = 0; i < rest.length; i++) {
    const flag = rest[i]!;
    if (flag === "--") {
      const [command, ...commandArgs] = rest.slice(i + 1);
      if (!command) throw usage("a COMMAND goes after --");
      body.command = command;
      body.args = commandArgs;
      break;
    }
    const value = rest[++i];
    if (value === undefined) throw usage(`${flag} needs a value`);
    if (flag === "--env") vars[pair(value, env, "env")[0]] = pair(value, env, "env")[1];
    else if (flag === "--header") headers[pair(value, env, "header")[0]] = pair(value, env, "header")[1];
    else if (flag === "--url") body.url = value;
    else if (flag === "--cwd") body.cwd = value;
    else if (flag === "--nests") body.nests = value === "all" ? "all" : value.split(",").map((n) => n.trim());
    else throw usage(`unknown argument ${JSON.stringify(flag)}`);
  }
  if (body.command === undefined && body.url === undefined) throw usage("tools add needs -- COMMAND or --url URL");
  if (Object.keys(vars).length > 0) body.env = vars;
  if (Object.keys(headers).length > 0) body.headers = headers;
  return body;
}

function flags(args: string[], allowed: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < args.length; i += 2) {
    const name = args[i]?.startsWith("--") ? args[i]!.slice(2) : undefined;
    const value = args[i + 1];
    if (!name || !allowed.includes(name) || value === undefined)
      throw usage(`unknown or incomplete argument ${JSON.stringify(args[i] ?? "")}`);
    out[name] = value;
  }
  for (const name of allowed) if (out[name] === undefined) throw usage(`--${name} is needed`);
  return out;
}

export async function toolsCommand(argv: string[], env: Env = process.env): Promise<unknown> {
  const [verb, ...args] = argv;
  switch (verb) {
    case "add":
      return call("POST", "/api/tools/servers", parseAdd(args, env), env);
    case "list":
      if (args.length > 0) throw usage("tools list takes no arguments");
      return call("GET", "/api/tools/servers", undefined, env);
    case "show": {
      const { id } = flags(args, ["id"]);
      return call("GET", `/api/tools/servers/${encodeURIComponent(id!)}`, undefined, env);
    }
    case "remove": {
      const { id } = flags(args, ["id"]);
      await call("DELETE", `/api/tools/servers/${encodeURIComponent(id!)}`, undefined, env);
      return { removed: id };
    }
    case "policy": {
      const { id, tool, policy } = flags(args, ["id", "tool", "policy"]);
      return call(
        "POST",
        `/api/tools/servers/${encodeURIComponent(id!)}/policies`,
        { policies: { [tool!]: policy === "default" ? null : policy } },
        env,
      );
    }
    default:
      throw usage(`unknown tools command ${JSON.stringify(verb ?? "")}`);
  }
}

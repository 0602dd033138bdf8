// The `crows` command line (docs/operations.md): serve, up, status, stop, restart, logs, token,
// webhooks, tools, backup, restore, check, config. Every
// command prints one JSON line on stdout; an error is one JSON line on stderr. Exit codes: 0 done,
// 1 a step failed, 2 usage, 3 the server cannot run (start-error.json says why).
import { parseArgs } from "node:util";
import { EXIT } from "../ops/exit.ts";
import { up, status, stop, restart, logs, CommandError } from "./commands.ts";
import { addWebhook, listWebhooks, removeWebhook } from "./webhooks.ts";
import { TOOLS_USAGE } from "./tools.ts";

const USAGE = `usage: crows serve | up | status | stop | restart [--reason TEXT] | logs [--lines N] | token create --name NAME --scope read,decide,... [--expires 30d] | token list | token revoke ID | webhooks add --url URL [--events a,b] [--description TEXT] [--format standard|slack|discord|ntfy] | webhooks list | webhooks remove --id ID | ${TOOLS_USAGE} | backup FILE | restore FILE | check | config [--table]`;

type Flags = Record<string, string>;

/**
 * The flags after a command, through node:util's parseArgs: `--name value` or `--name=value`, each
 * a string. Loose mode, read token by token, so the refusals stay what they were: the first
 * argument that is not an allowed flag is "unknown argument", a flag at the end is "needs a
 * value", and a value may start with a dash (`--expires -1d` reaches its own check).
 */
function parse(argv: string[], allowed: string[]): Flags {
  const options = Object.fromEntries(allowed.map((name) => [name, { type: "string" as const }]));
  const { tokens } = parseArgs({ args: argv, options, strict: false, allowPositionals: true, tokens: true });
  const flags: Flags = {};
  for (const token of tokens) {
    const arg = argv[token.index] ?? "";
    if (token.kind !== "option" || !arg.startsWith("--") || !allowed.includes(token.name))
      throw new CommandError(EXIT.usage, "usage", `unknown argument ${JSON.stringify(arg)}; ${USAGE}`);
    if (token.value === undefined)
      throw new CommandError(EXIT.usage, "usage", `--${token.name} needs a value; ${USAGE}`);
    flags[token.name] = token.value;
  }
  return flags;
}

async function run(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case "serve":
      parse(rest, []);
      // Loaded only here: the other commands never load the server (fast, and they work with it down).
      return (await import("../ops/serve.ts")).serve();
    case "up":
      parse(rest, []);
      return print(await up());
    case "status":
      parse(rest, []);
      return print(await status());
    case "stop":
      parse(rest, []);
      return print(await stop());
    case "restart":
      return print(await restart(parse(rest, ["reason"]).reason));
    case "logs": {
      const raw = parse(rest, ["lines"]).lines;
      // Digits only: Number() would also read "1e3", "0x10" and " 5" as whole numbers.
      const lines = raw === undefined ? 50 : /^\d{1,4}$/.test(raw) ? Number(raw) : NaN;
      if (!Number.isInteger(lines) || lines < 1 || lines > 1000)
        throw new CommandError(
          EXIT.usage,
          "usage",
          `--lines must be a whole number from 1 to 1000, got ${JSON.stringify(raw)}`,
        );
      return print(await logs(lines));
    }
    case "token": {
      // Loaded only here: opening the database is this command's business alone.
      const tokens = await import("./tokens.ts");
      const [action, ...args] = rest;
      if (action === "create") return print(await tokens.createToken(parse(args, ["name", "scope", "expires"])));
      if (action === "list") {
        parse(args, []);
        return print(await tokens.listTokens());
      }
      if (action === "revoke") {
        const [id, ...more] = args;
        parse(more, []);
        return print(await tokens.revokeToken(id));
      }
      throw new CommandError(EXIT.usage, "usage", `unknown token command ${JSON.stringify(action ?? "")}; ${USAGE}`);
    }
    case "webhooks": {
      const [verb, ...args] = rest;
      if (verb === "add") {
        const flags = parse(args, ["url", "events", "description", "format"]);
        if (!flags.url) throw new CommandError(EXIT.usage, "usage", `webhooks add needs --url; ${USAGE}`);
        const events = flags.events
          ?.split(",")
          .map((e) => e.trim())
          .filter((e) => e !== "");
        return print(
          await addWebhook({
            url: flags.url,
            ...(events ? { events } : {}),
            ...(flags.description !== undefined ? { description: flags.description } : {}),
            ...(flags.format !== undefined ? { format: flags.format } : {}),
          }),
        );
      }
      if (verb === "list") return (parse(args, []), print(await listWebhooks()));
      if (verb === "remove") {
        const id = parse(args, ["id"]).id;
        if (!id) throw new CommandError(EXIT.usage, "usage", `webhooks remove needs --id; ${USAGE}`);
        return print(await removeWebhook(id));
      }
      throw new CommandError(EXIT.usage, "usage", USAGE);
    }
    case "tools":
      return print(await (await import("./tools.ts")).toolsCommand(rest));
    case "backup":
    case "restore": {
      const [file, ...extra] = rest;
      if (!file || file.startsWith("--") || extra.length > 0)
        throw new CommandError(EXIT.usage, "usage", `crows ${command} takes one FILE; ${USAGE}`);
      const data = await import("./data-commands.ts");
      return print(command === "backup" ? await data.backup(file) : await data.restore(file));
    }
    case "check": {
      parse(rest, []);
      const report = await (await import("./data-commands.ts")).check();
      print(report);
      if (!report.ok) process.exitCode = EXIT.failed; // what it found is on stdout all the same
      return;
    }
    case "config": {
      let table: boolean;
      try {
        table = parseArgs({ args: rest, options: { table: { type: "boolean" } } }).values.table === true;
      } catch {
        throw new CommandError(EXIT.usage, "usage", `crows config takes only --table; ${USAGE}`);
      }
      const { showConfig, configTable } = await import("./config-command.ts");
      if (table) return void process.stdout.write(`${configTable()}\n`);
      return print(showConfig());
    }
    case "help":
    case "--help":
    case "-h":
      return print({ usage: USAGE });
    default:
      throw new CommandError(
        EXIT.usage,
        "usage",
        command === undefined ? USAGE : `unknown command ${JSON.stringify(command)}; ${USAGE}`,
      );
  }
}

function print(value: unknown): void {
  process.stdout.write(JSON.stringify(value) + "\n");
}

try {
  await run(process.argv.slice(2));
} catch (error) {
  const failure =
    error instanceof CommandError
      ? error
      : new CommandError(EXIT.failed, "failed", (error as Error)?.message?.split("\n")[0] ?? String(error));
  process.stderr.write(JSON.stringify({ error: failure.code, message: failure.message }) + "\n");
  process.exitCode = failure.exit;
}

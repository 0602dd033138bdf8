// `crows webhooks add|list|remove` (docs/webhooks.md "Managing endpoints"): the REST API of the
// running server (found by the lock's live holder, as every command finds it), with CROWS_TOKEN
// when it is set. `add` prints the secret: the one time it is shown.
import { readOne, SERVER } from "../base/config.ts";
import { dataDirFromEnv, dataFiles } from "../ops/paths.ts";
import { liveHolder } from "../ops/lock.ts";
import { readServerState } from "../ops/state.ts";
import { EXIT } from "../ops/exit.ts";
import { CommandError } from "./commands.ts";

type Env = Record<string, string | undefined>;

function serverUrl(env: Env): string {
  const f = dataFiles(dataDirFromEnv(env));
  const holder = liveHolder(f);
  const state = readServerState(f);
  if (!holder || state?.pid !== holder.pid)
    throw new CommandError(
      EXIT.failed,
      "not_running",
      "no server is running on this data folder; start one with crows up",
    );
  return state.url;
}

/** One request to the running server's REST API; a CommandError for a refusal (its status and message). */
export async function call(method: string, path: string, body: unknown, env: Env): Promise<unknown> {
  const token = readOne(env, SERVER.token);
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  if (body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(serverUrl(env) + path, {
    method,
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  const parsed: unknown = text ? JSON.parse(text) : undefined;
  if (!response.ok)
    throw new CommandError(
      EXIT.failed,
      "refused",
      `${response.status}: ${(parsed as { message?: string } | undefined)?.message ?? text}`,
    );
  return parsed;
}

export const addWebhook = (
  input: { url: string; events?: string[]; description?: string; format?: string },
  env: Env = process.env,
) => call("POST", "/api/webhooks", input, env);
export const listWebhooks = (env: Env = process.env) => call("GET", "/api/webhooks", undefined, env);
export async function removeWebhook(id: string, env: Env = process.env) {
  await call("DELETE", `/api/webhooks/${encodeURIComponent(id)}`, undefined, env);
  return { removed: id };
}

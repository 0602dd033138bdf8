// `crows token create | list | revoke`. With the data folder's server live (the lock's holder),
// through its REST API (/api/tokens, with CROWS_TOKEN from the environment when one is set), so a
// revocation takes effect there at once, open streams included. With it down, straight on the
// database (DATABASE_URL, or the folder's SQLite file); a server started later, or another
// instance on the same PostgreSQL, sees the change on its next request (src/access/token-store.ts),
// and with REDIS_URL set the revocation is published to the others' streams too. Whoever runs them
// holds the data folder (or the owner's token), so they act as the owner.
import { loadConfig, readOne, SERVER } from "../base/config.ts";
import { CommandError } from "./commands.ts";
import { EXIT } from "../ops/exit.ts";
import { OWNER } from "../base/actor.ts";
import { CrowsError } from "../base/errors.ts";
import { dataDirFromEnv, dataFiles } from "../ops/paths.ts";
import { liveHolder } from "../ops/lock.ts";
import { readServerState } from "../ops/state.ts";

type Env = Record<string, string | undefined>;

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** "30d", "12h", "90m", "3600s" or plain seconds, as seconds. */
export function parseExpires(raw: string): number {
  const m = /^(\d{1,9})([smhd]?)$/.exec(raw.trim());
  if (!m)
    throw new CommandError(
      EXIT.usage,
      "usage",
      `--expires takes a duration such as 30d, 12h, 90m or 3600s, got ${JSON.stringify(raw)}`,
    );
  return Number(m[1]) * UNITS[m[2] || "s"]!;
}

/** The live server's URL for this data folder, or undefined when none runs. */
function liveServer(env: Env): string | undefined {
  const files = dataFiles(dataDirFromEnv(env));
  const holder = liveHolder(files);
  const state = readServerState(files);
  return holder && state?.pid === holder.pid && !state.stopped ? state.url : undefined;
}

/** One call to the live server's token API; its refusal becomes the command's error. */
async function viaServer(url: string, env: Env, method: string, path: string, body?: unknown): Promise<any> {
  const token = readOne(env, SERVER.token);
  const response = await fetch(url + path, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  const parsed = text ? JSON.parse(text) : undefined;
  if (response.ok) return parsed;
  const code =
    response.status === 404
      ? "not_found"
      : response.status === 400
        ? "bad_input"
        : response.status === 401 || response.status === 403
          ? "forbidden"
          : "failed";
  throw new CommandError(
    response.status === 400 ? EXIT.usage : EXIT.failed,
    code,
    `the server answered ${response.status}: ${parsed?.message ?? "no message"}`,
  );
}

async function withStore<T>(
  env: Env,
  run: (store: import("../access/token-store.ts").TokenStore) => Promise<T>,
): Promise<T> {
  const config = loadConfig(env);
  const [
    { ensureDataDir, openDatabase, commitOrderLock },
    { EventLog },
    { createLocalBus, createRedisBus },
    { TokenStore },
  ] = await Promise.all([
    import("../storage/db.ts"),
    import("../log/event-log.ts"),
    import("../log/bus.ts"),
    import("../access/token-store.ts"),
  ]);
  ensureDataDir(config.dataDir);
  const database = await openDatabase(config);
  const bus = config.redisUrl ? await createRedisBus(config.redisUrl) : createLocalBus();
  const lock = commitOrderLock(config);
  const log = new EventLog(database, bus, lock ? { commitOrderLock: lock } : {});
  try {
    return await run(new TokenStore(database.prisma, log, database.readVersion));
  } catch (error) {
    // A refusal is the caller's to fix (exit 2), an unknown id a failed step (exit 1).
    if (error instanceof CrowsError)
      throw new CommandError(error.code === "not_found" ? EXIT.failed : EXIT.usage, error.code, error.message);
    throw error;
  } finally {
    await log.drain();
    log.close();
    await bus.close();
    await database.close();
  }
}

/** The new token with its secret: the one time it is shown. */
export async function createToken(flags: Record<string, string>, env: Env = process.env) {
  if (flags.name === undefined || flags.scope === undefined)
    throw new CommandError(EXIT.usage, "usage", "crows token create needs --name NAME and --scope read,decide,...");
  const scopes = flags.scope
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  const expiresInS = flags.expires === undefined ? undefined : parseExpires(flags.expires);
  const url = liveServer(env);
  if (url)
    return viaServer(url, env, "POST", "/api/tokens", {
      name: flags.name,
      scopes,
      ...(expiresInS === undefined ? {} : { expires_in_s: expiresInS }),
    });
  return withStore(env, async (store) => {
    const {
      id,
      name,
      scopes: held,
      secret,
      prefix,
      created_at,
      expires_at,
    } = await store.create({ name: flags.name, scopes, expiresInS }, OWNER);
    return { id, name, scopes: held, secret, prefix, created_at, expires_at };
  });
}

export async function listTokens(env: Env = process.env) {
  const url = liveServer(env);
  if (url) return { tokens: (await viaServer(url, env, "GET", "/api/tokens")).tokens };
  return withStore(env, async (store) => ({ tokens: await store.list() }));
}

export async function revokeToken(id: string | undefined, env: Env = process.env) {
  if (!id) throw new CommandError(EXIT.usage, "usage", "crows token revoke needs the token's id (tok_...)");
  const url = liveServer(env);
  if (url) {
    await viaServer(url, env, "DELETE", `/api/tokens/${encodeURIComponent(id)}`);
    const token = (
      (await viaServer(url, env, "GET", "/api/tokens")).tokens as Array<{
        id: string;
        name: string;
        revoked_at: string | null;
      }>
    ).find((t) => t.id === id)!;
    return { id: token.id, name: token.name, revoked_at: token.revoked_at };
  }
  return withStore(env, async (store) => {
    const token = await store.revoke(id, OWNER);
    return { id: token.id, name: token.name, revoked_at: token.revoked_at };
  });
}

// `crows token create | list | revoke`: named tokens, straight on the database of the data folder
// (DATABASE_URL, or the folder's SQLite file), so they work with the server up or down. Whoever
// runs them holds the data folder, so they act as the owner. A running server sees the change on
// its next request (src/access/token-store.ts); on SQLite a revoked token's open streams end at
// the server's next heartbeat sweep, with REDIS_URL set at once (the revocation is published).
import { loadConfig } from "../config.ts";
import { CommandError } from "./commands.ts";
import { EXIT } from "../ops/exit.ts";
import { OWNER } from "../access/actor.ts";
import { CrowsError } from "../errors.ts";

type Env = Record<string, string | undefined>;

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** "30d", "12h", "90m", "3600s" or plain seconds, as seconds. */
export function parseExpires(raw: string): number {
  const m = /^(\d{1,9})([smhd]?)$/.exec(raw.trim());
  if (!m) throw new CommandError(EXIT.usage, "usage", `--expires takes a duration such as 30d, 12h, 90m or 3600s, got ${JSON.stringify(raw)}`);
  return Number(m[1]) * UNITS[m[2] || "s"]!;
}

async function withStore<T>(env: Env, run: (store: import("../access/token-store.ts").TokenStore) => Promise<T>): Promise<T> {
  const config = loadConfig(env);
  const [{ ensureDataDir, openDatabase, commitOrderLock }, { EventLog }, { createLocalBus, createRedisBus }, { TokenStore }] = await Promise.all([
    import("../storage/db.ts"),
    import("../log/event-log.ts"),
    import("../log/bus.ts"),
    import("../access/token-store.ts"),
  ]);
  ensureDataDir(config.dataDir);
  const prisma = await openDatabase(config);
  const bus = config.redisUrl ? await createRedisBus(config.redisUrl) : createLocalBus();
  const lock = commitOrderLock(config);
  const log = new EventLog(prisma, bus, lock ? { commitOrderLock: lock } : {});
  try {
    return await run(new TokenStore(prisma, log));
  } catch (error) {
    // A refusal is the caller's to fix (exit 2), an unknown id a failed step (exit 1).
    if (error instanceof CrowsError) throw new CommandError(error.code === "not_found" ? EXIT.failed : EXIT.usage, error.code, error.message);
    throw error;
  } finally {
    await log.drain();
    log.close();
    await bus.close();
    await prisma.$disconnect();
  }
}

/** The new token with its secret: the one time it is shown. */
export function createToken(flags: Record<string, string>, env: Env = process.env) {
  if (flags.name === undefined || flags.scope === undefined) throw new CommandError(EXIT.usage, "usage", "crows token create needs --name NAME and --scope read,decide,...");
  const scopes = flags.scope.split(",").map((s) => s.trim()).filter((s) => s !== "");
  const expiresInS = flags.expires === undefined ? undefined : parseExpires(flags.expires);
  return withStore(env, async (store) => {
    const { id, name, scopes: held, secret, prefix, created_at, expires_at } = await store.create({ name: flags.name, scopes, expiresInS }, OWNER);
    return { id, name, scopes: held, secret, prefix, created_at, expires_at };
  });
}

export function listTokens(env: Env = process.env) {
  return withStore(env, async (store) => ({ tokens: await store.list() }));
}

export function revokeToken(id: string | undefined, env: Env = process.env) {
  if (!id) throw new CommandError(EXIT.usage, "usage", "crows token revoke needs the token's id (tok_...)");
  return withStore(env, async (store) => {
    const token = await store.revoke(id, OWNER);
    return { id: token.id, name: token.name, revoked_at: token.revoked_at };
  });
}

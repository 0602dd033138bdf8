// Configuration from the environment (FLOCK.md section 11). Every variable has a default that
// serves on a fresh machine; a bad value is a startup error that names the variable.
import path from "node:path";
import { loadWebhookConfig, type WebhookConfig } from "./webhook-config.ts";
import { loadOwnerConfig, type OwnerConfig } from "./owner-config.ts";

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  databaseUrl: string;
  /** SQLite: who copies the WAL back into the database file (src/storage/checkpointer.ts). */
  sqliteCheckpoints: "thread" | "inline";
  redisUrl: string | undefined;
  model: string;
  modelBaseUrl: string | undefined;
  modelApiKey: string | undefined;
  jev: string;
  jevBaseUrl: string | undefined;
  jevApiKey: string | undefined;
  jevModel: string;
  jevThreshold: number;
  approvalWindowMs: number;
  tokenBudget: number;
  murderSize: number;
  maxSpun: number;
  heartbeatMs: number;
  /** How many items of one list are worked at once. */
  itemConcurrency: number;
  /** How long list.finished waits for banter still in flight. */
  banterWaitMs: number;
  /** Per-call model timeout. */
  modelTimeoutMs: number;
  /** How long a flight keeps trying a provider that is busy or down before its item fails (default: the approval window). */
  modelPatienceMs: number;
  /** Model calls in the air at once, per process (the provider gate's cap). */
  modelConcurrency: number;
  /** First backoff after provider trouble when the provider names no wait. */
  modelBackoffMs: number;
  /** Longest computed backoff (a provider's own Retry-After may be longer, within the patience). */
  modelBackoffMaxMs: number;
  /** Provider failures in a row that open the gate's circuit. */
  modelCircuitFailures: number;
  /** System One calls in the air at once, per process (the classifier's own gate). */
  jevConcurrency: number;
  /** Per-call classifier timeout. */
  jevTimeoutMs: number;
  /** How long a running list stays this instance's without a renewal (several instances). */
  leaseMs: number;
  /** This instance's name on the lists it runs; default: one kept in the data folder. */
  instanceId: string | undefined;
  /** The owner's access token (docs/security.md); unset = no token asked on loopback. */
  token: string | undefined;
  /** Tokens that may query and subscribe but not mutate. */
  readTokens: string[];
  /** Origins (scheme://host[:port]) a web page may call from; default none. */
  corsOrigins: string[];
  /** Host names besides the loopback ones this server answers to (behind a proxy, a LAN name). */
  publicHosts: string[];
  /** How long a claimed nest request may go without a deliver before the harness nudges its crow. */
  nudgeAfterMs: number;
  /** How long a request (its headers and body) may take to arrive before its 408 (docs/security.md). */
  requestTimeoutMs: number;
  /** How long a GraphQL query may run before it is stopped (docs/security.md). */
  graphqlDeadlineMs: number;
  /** The largest GraphQL answer, in bytes of JSON. */
  graphqlMaxAnswerBytes: number;
  /** SSE streams open at once, in all; unset: the fd limit less its headroom (src/server/stream-caps.ts). */
  maxStreams: number | undefined;
  /** SSE streams one client address may hold; unset: half the total. */
  maxStreamsPerClient: number | undefined;
  /** Webhook deliveries and decide links (webhook-config.ts). */
  webhooks: WebhookConfig;
  // --- issue 33, the owner's word: reworks, windows (src/base/owner-config.ts) ---
  owner: OwnerConfig;
  /** PostgreSQL: how long to wait for a connection before the request fails with a 503. */
  pgConnectTimeoutMs: number;
  /** PostgreSQL: the longest one statement may run (server side, and kept by the client too). */
  pgStatementTimeoutMs: number;
  /** PostgreSQL: how long a transaction may sit idle before the server ends it. */
  pgIdleInTransactionTimeoutMs: number;
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

function int(env: Env, name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  }
  return value;
}

function optionalInt(env: Env, name: string, min: number): number | undefined {
  return env[name] === undefined || env[name]!.trim() === "" ? undefined : int(env, name, 0, min);
}

function fraction(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0.5 || value >= 1) {
    throw new ConfigError(`${name} must be a number above 0.5 and below 1, got ${JSON.stringify(raw)}`);
  }
  return value;
}

function list(env: Env, name: string): string[] {
  return (env[name] ?? "")
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part !== "");
}

// A token travels in a header and a cookie: printable ASCII without separators, long enough to guess never.
const TOKEN_SHAPE = /^[A-Za-z0-9._~+/=-]{16,512}$/;

function checkToken(name: string, token: string): string {
  if (!TOKEN_SHAPE.test(token)) {
    // The message never repeats the value: it is a secret.
    throw new ConfigError(
      `${name} must be 16 to 512 characters of A-Z a-z 0-9 . _ ~ + / = - (generate one: openssl rand -hex 32)`,
    );
  }
  return token;
}

function origins(env: Env, name: string): string[] {
  return list(env, name).map((raw) => {
    let url: URL | undefined;
    try {
      url = new URL(raw);
    } catch {
      url = undefined;
    }
    if (
      !url ||
      (url.protocol !== "http:" && url.protocol !== "https:") ||
      url.origin !== raw.replace(/\/$/, "").toLowerCase()
    ) {
      throw new ConfigError(
        `${name} lists origins like http://localhost:5173 (scheme, host, optional port; no path), got ${JSON.stringify(raw)}`,
      );
    }
    return url.origin;
  });
}

/** True for an address or name that only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || h === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h) || h === "::ffff:127.0.0.1";
}

function checkpoints(env: Env): "thread" | "inline" {
  const raw = text(env, "CROWS_SQLITE_CHECKPOINTS") ?? "thread";
  if (raw !== "thread" && raw !== "inline")
    throw new ConfigError(`CROWS_SQLITE_CHECKPOINTS must be thread or inline, got ${JSON.stringify(raw)}`);
  return raw;
}

function text(env: Env, name: string): string | undefined {
  const raw = env[name]?.trim();
  return raw ? raw : undefined;
}

export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  const dataDir = path.resolve(text(env, "CROWS_DATA_DIR") ?? ".crows");
  const config: Config = {
    host: text(env, "CROWS_HOST") ?? "127.0.0.1",
    port: int(env, "CROWS_PORT", 7717, 0, 65535),
    dataDir,
    databaseUrl: text(env, "DATABASE_URL") ?? `file:${path.join(dataDir, "crows.db")}`,
    sqliteCheckpoints: checkpoints(env),
    redisUrl: text(env, "REDIS_URL"),
    model: text(env, "CROWS_MODEL") ?? "offline",
    modelBaseUrl: text(env, "CROWS_MODEL_BASE_URL"),
    modelApiKey: text(env, "CROWS_MODEL_API_KEY"),
    jev: text(env, "CROWS_JEV") ?? "offline",
    jevBaseUrl: text(env, "CROWS_JEV_BASE_URL"),
    jevApiKey: text(env, "CROWS_JEV_API_KEY"),
    jevModel: text(env, "CROWS_JEV_MODEL") ?? "jev-1",
    jevThreshold: fraction(env, "CROWS_JEV_THRESHOLD", 0.8),
    approvalWindowMs: int(env, "CROWS_APPROVAL_WINDOW_MS", 600_000, 1),
    tokenBudget: int(env, "CROWS_TOKEN_BUDGET", 20_000, 1),
    murderSize: int(env, "CROWS_MURDER_SIZE", 3, 2, 8),
    maxSpun: int(env, "CROWS_MAX_SPUN", 8, 0, 1000),
    heartbeatMs: int(env, "CROWS_HEARTBEAT_MS", 15_000, 10),
    itemConcurrency: int(env, "CROWS_ITEM_CONCURRENCY", 4, 1, 50),
    banterWaitMs: int(env, "CROWS_BANTER_WAIT_MS", 20_000, 0),
    modelTimeoutMs: int(env, "CROWS_MODEL_TIMEOUT_MS", 60_000, 10),
    modelPatienceMs: int(env, "CROWS_MODEL_PATIENCE_MS", int(env, "CROWS_APPROVAL_WINDOW_MS", 600_000, 1), 0),
    modelConcurrency: int(env, "CROWS_MODEL_CONCURRENCY", 4, 1, 256),
    modelBackoffMs: int(env, "CROWS_MODEL_BACKOFF_MS", 500, 1),
    modelBackoffMaxMs: int(env, "CROWS_MODEL_BACKOFF_MAX_MS", 60_000, 1),
    modelCircuitFailures: int(env, "CROWS_MODEL_CIRCUIT_FAILURES", 5, 1, 1000),
    jevConcurrency: int(env, "CROWS_JEV_CONCURRENCY", 4, 1, 256),
    jevTimeoutMs: int(env, "CROWS_JEV_TIMEOUT_MS", 5_000, 10),
    leaseMs: int(env, "CROWS_LEASE_MS", 30_000, 100),
    instanceId: text(env, "CROWS_INSTANCE_ID"),
    token: text(env, "CROWS_TOKEN"),
    readTokens: list(env, "CROWS_READ_TOKENS"),
    corsOrigins: origins(env, "CROWS_CORS_ORIGINS"),
    publicHosts: list(env, "CROWS_PUBLIC_HOSTS").map((h) => h.toLowerCase()),
    nudgeAfterMs: int(env, "CROWS_NUDGE_AFTER_MS", 120_000, 10),
    requestTimeoutMs: int(env, "CROWS_REQUEST_TIMEOUT_MS", 30_000, 100, 3_600_000),
    graphqlDeadlineMs: int(env, "CROWS_GRAPHQL_DEADLINE_MS", 10_000, 10),
    graphqlMaxAnswerBytes: int(env, "CROWS_GRAPHQL_MAX_ANSWER_BYTES", 16_000_000, 1_000),
    maxStreams: optionalInt(env, "CROWS_MAX_STREAMS", 1),
    maxStreamsPerClient: optionalInt(env, "CROWS_MAX_STREAMS_PER_CLIENT", 1),
    webhooks: loadWebhookConfig(env, (message) => new ConfigError(message)),
    // --- issue 33, the owner's word: reworks, windows (src/base/owner-config.ts) ---
    owner: loadOwnerConfig(
      env,
      int(env, "CROWS_APPROVAL_WINDOW_MS", 600_000, 1),
      (message) => new ConfigError(message),
    ),
    pgConnectTimeoutMs: int(env, "CROWS_PG_CONNECT_TIMEOUT_MS", 5_000, 100, 600_000),
    pgStatementTimeoutMs: int(env, "CROWS_PG_STATEMENT_TIMEOUT_MS", 15_000, 100, 600_000),
    pgIdleInTransactionTimeoutMs: int(env, "CROWS_PG_IDLE_TX_TIMEOUT_MS", 15_000, 100, 600_000),
    ...overrides,
  };
  if (!["offline", "systemone"].includes(config.jev)) {
    throw new ConfigError(`CROWS_JEV must be "offline" or "systemone", got ${JSON.stringify(config.jev)}`);
  }
  if (config.token !== undefined) checkToken("CROWS_TOKEN", config.token);
  config.readTokens.forEach((token) => {
    checkToken("CROWS_READ_TOKENS", token);
  });
  if (config.readTokens.length > 0 && config.token === undefined) {
    throw new ConfigError(
      "CROWS_READ_TOKENS needs CROWS_TOKEN too: without an owner token nothing is asked, so read-only tokens would mean nothing",
    );
  }
  if (config.token !== undefined && config.readTokens.includes(config.token)) {
    throw new ConfigError("CROWS_READ_TOKENS must not contain CROWS_TOKEN");
  }
  for (const name of config.publicHosts) {
    if (!/^[a-z0-9.-]+$|^\[[0-9a-f:.]+\]$/.test(name))
      throw new ConfigError(`CROWS_PUBLIC_HOSTS lists host names without scheme or port, got ${JSON.stringify(name)}`);
  }
  if (!isLoopbackHost(config.host) && config.token === undefined) {
    throw new ConfigError(
      `CROWS_HOST=${config.host} is reachable from other machines; set CROWS_TOKEN to a long random secret first (docs/security.md)`,
    );
  }
  return config;
}

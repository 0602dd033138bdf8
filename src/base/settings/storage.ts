// Where the data lives (the data folder, the database, Redis) and how the database is used
// (SQLite checkpoints, PostgreSQL's timeouts, the lease of a running list between instances).
import path from "node:path";
import { setting } from "./declare.ts";
import { ms, oneOf, text } from "./kinds.ts";

export const STORAGE = {
  dataDir: setting<string>({
    env: "CROWS_DATA_DIR",
    group: "storage",
    kind: { ...text, zod: text.zod.transform((dir) => path.resolve(dir)) },
    audience: "owner",
    default: () => path.resolve(".crows"),
    defaultText: ".crows",
    describe: "data folder (the SQLite database, this instance's id, the server's log), created mode 700",
  }),
  databaseUrl: setting<string>({
    env: "DATABASE_URL",
    group: "storage",
    kind: text,
    audience: "owner",
    secret: "password",
    default: (known) => `file:${path.join(String(known.dataDir), "crows.db")}`,
    defaultText: "`file:<data dir>/crows.db`",
    describe:
      "`file:<path>` (SQLite) or `postgresql://user:pass@host:5432/db` (PostgreSQL through Prisma's pg adapter; tables in the user's default schema). Migrations apply at start either way",
  }),
  redisUrl: setting<string | undefined>({
    env: "REDIS_URL",
    group: "storage",
    kind: text,
    audience: "owner",
    secret: "password",
    default: undefined,
    describe:
      "`redis://host:6379`: live events fan out across instances through Redis pub/sub. Needed as soon as two instances share one PostgreSQL",
  }),
  sqliteCheckpoints: setting<"thread" | "inline">({
    env: "CROWS_SQLITE_CHECKPOINTS",
    group: "storage",
    kind: oneOf(["thread", "inline"]),
    audience: "tuning",
    default: "thread",
    describe:
      "SQLite: `thread`: a thread of the server's own copies the WAL back into the database file (PASSIVE checkpoints every 250 ms), so no commit of the flock's stalls the event loop for one (docs/architecture.md \"Storage and migrations\"); `inline`: SQLite's own way, the commit that takes the WAL past 1,000 pages does it",
  }),
  pgConnectTimeoutMs: setting<number>({
    env: "CROWS_PG_CONNECT_TIMEOUT_MS",
    group: "storage",
    kind: ms(100, 600_000),
    audience: "tuning",
    default: 5_000,
    describe:
      "PostgreSQL: how long a request waits for a connection (new, or free in the pool) before it fails with a 503 and Retry-After",
  }),
  pgStatementTimeoutMs: setting<number>({
    env: "CROWS_PG_STATEMENT_TIMEOUT_MS",
    group: "storage",
    kind: ms(100, 600_000),
    audience: "tuning",
    default: 15_000,
    describe:
      "PostgreSQL: `statement_timeout`, the longest one statement runs before the server cancels it; the client keeps the same bound plus 2 s (`query_timeout`) for a server too stalled to keep its own",
  }),
  pgIdleInTransactionTimeoutMs: setting<number>({
    env: "CROWS_PG_IDLE_TX_TIMEOUT_MS",
    group: "storage",
    kind: ms(100, 600_000),
    audience: "tuning",
    default: 15_000,
    describe:
      "PostgreSQL: `idle_in_transaction_session_timeout`, how long a transaction may sit idle before the server ends it and frees its locks",
  }),
  leaseMs: setting<number>({
    env: "CROWS_LEASE_MS",
    group: "storage",
    kind: ms(100),
    audience: "tuning",
    default: 30_000,
    describe:
      "how long a running list stays its instance's without a renewal; another instance takes it over once it lapses (renewed every third of it)",
  }),
  instanceId: setting<string | undefined>({
    env: "CROWS_INSTANCE_ID",
    group: "storage",
    kind: text,
    audience: "tuning",
    default: undefined,
    defaultText: "kept in `<data dir>/instance-id`",
    describe:
      "this instance's name on the lists it runs; each instance sharing a database needs its own (or its own data folder)",
  }),
};

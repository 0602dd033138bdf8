// Opens the database (file:... SQLite, the default; postgresql://... PostgreSQL for several
// instances), applies the committed migrations, and returns everything it opened as one handle.
// One client type for both providers, cast once here (guards at the bottom fail the typecheck if
// the two generated clients differ); no raw SQL outside src/storage. docs/architecture.md
// "Storage and migrations" says why.
import { mkdirSync } from "node:fs";
import path from "node:path";
import { PrismaBetterSqlite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaClient } from "../generated/prisma/client.ts";
import type * as Sqlite from "../generated/prisma/client.ts";
import type * as Pg from "../generated/prisma-pg/client.ts";
import type { Config } from "../base/config.ts";
import { ConfigError } from "../base/config.ts";
import { deployMigrations, providerOf } from "./migrate.ts";
import { prepareDataDir } from "./data-dir.ts";
import { PgEventStore } from "./events/postgres.ts";
import { SqliteEventStore } from "./events/sqlite.ts";
import type { EventStore } from "./events/types.ts";
import { NAMED_ORDER_LOCK } from "./flock-state.ts"; // one key for both write paths
import { NO_VERSION, SqliteReadVersion, type ReadVersion } from "./read-version.ts";
import { PgTrustReads, SqliteTrustReads, type TrustReads } from "./trust-history.ts";
import BetterSqlite3 from "better-sqlite3";
import { PgWebhookStore } from "./webhooks/postgres.ts";
import { SqliteWebhookStore } from "./webhooks/sqlite.ts";
import type { WebhookStore } from "./webhooks/types.ts";
import type { SenderDatabase } from "./webhooks/own-connections.ts";
import { WriterLock } from "./writer-lock.ts";
import { StorageHealth } from "./storage-health.ts";
import { Checkpointer } from "./checkpointer.ts";
import { pgPoolOptions, watchPool } from "./pg-pool.ts";

export type { PrismaClient };

/** Creates the data folder 700 or refuses one crows must not use (rules in src/storage/data-dir.ts). */
export function ensureDataDir(dataDir: string): void {
  prepareDataDir(dataDir);
}

/** What openDatabase opens, as one handle passed to whoever needs a part of it. */
export interface DatabaseHandle {
  readonly prisma: PrismaClient;
  /** The event log's SQL around Prisma (events/), on the same connections. */
  readonly events: EventStore;
  /** The trust ledger's reads around Prisma (trust-history.ts). */
  readonly trustReads: TrustReads;
  /** The webhook sender's statements around Prisma (webhooks/), on the server's connections. */
  readonly webhooks: WebhookStore;
  /** How the webhook sender's thread opens connections of its own; undefined for an in-memory database. */
  readonly senderDatabase: SenderDatabase | undefined;
  /** What the GraphQL read cache keys on (read-version.ts); a bench may swap in one that never caches. */
  readVersion: ReadVersion;
  /** Whether writes fail right now (storage-health.ts): /readyz and the error mapping read it. */
  readonly health: StorageHealth;
  /** The WAL checkpoints' own thread (SQLite file only). */
  readonly checkpointer?: Checkpointer | undefined;
  /** Ends Prisma's client, and with it every connection the parts above use. */
  close(): Promise<void>;
}

export async function openDatabase(
  config: Config,
  logLine: (line: string) => void = (line) => console.error(line),
): Promise<DatabaseHandle> {
  const url = config.databaseUrl;
  const provider = providerOf(url);
  if (provider === null)
    throw new ConfigError(
      `DATABASE_URL must be file:... (SQLite) or postgresql://... (PostgreSQL), got ${url.split(":")[0]}:`,
    );
  if (provider === "postgresql") {
    await deployMigrations(url);
    // Loaded only here, so a SQLite deployment never loads the PostgreSQL client.
    const [{ PrismaClient: PgClient }, { PrismaPg }, { default: pg }] = await Promise.all([
      import("../generated/prisma-pg/client.ts"),
      import("@prisma/adapter-pg"),
      import("pg"),
    ]);
    // One pool for Prisma and for the event log's own statements (events/postgres.ts); Prisma ends it.
    // Timeouts bound every wait on the database, and an error listener on the pool and each client
    // turns a connection the server ended (a restart) into a log line and a replacement (pg-pool.ts).
    const pool = new pg.Pool(pgPoolOptions(url, config));
    watchPool(pool, logLine);
    const prisma = new PgClient({ adapter: new PrismaPg(pool, { disposeExternalPool: true }) });
    await prisma.$connect();
    const client = prisma as unknown as PrismaClient; // the one cast: see the header
    return {
      prisma: client,
      events: new PgEventStore(pool),
      trustReads: new PgTrustReads(pool),
      webhooks: new PgWebhookStore(pool),
      senderDatabase: { databaseUrl: url, pgPool: pgPoolOptions(url, config) },
      readVersion: NO_VERSION,
      health: new StorageHealth(undefined, logLine),
      close: () => client.$disconnect(),
    };
  }
  const file = url.slice("file:".length);
  if (file !== ":memory:") mkdirSync(path.dirname(path.resolve(file)), { recursive: true, mode: 0o700 });
  await deployMigrations(url);
  // The file's write lock, shared with the webhook sender's thread (writer-lock.ts).
  const writerLock = file === ":memory:" ? undefined : new WriterLock();
  const events = new SqliteEventStore(file, writerLock);
  const version = new SqliteReadVersion(file);
  const trust = new SqliteTrustReads(file);
  const webhooks = new SqliteWebhookStore(events.gate);
  // WAL checkpoints off the server's thread (checkpointer.ts), from when the thread is up: the
  // start is not waited for. The sender's thread, started later, reads the flag as it is then.
  const senderDatabase: SenderDatabase | undefined = writerLock
    ? { databaseUrl: url, writerLock: writerLock.buffer, checkpointsElsewhere: false }
    : undefined;
  const checkpointer =
    file === ":memory:" || config.sqliteCheckpoints === "inline"
      ? undefined
      : new Checkpointer({
          file,
          writerLock: writerLock?.buffer,
          autocheckpoint: (pages) => events.autocheckpoint(pages),
          onRunning: (running) => {
            if (senderDatabase) senderDatabase.checkpointsElsewhere = running;
          },
          logLine,
        });
  // Whoever closes the client (close() below, or prisma.$disconnect() itself) stops the thread first.
  const prisma = new PrismaClient({
    adapter: sharedWithEventStore(
      new PrismaBetterSqlite3({ url }),
      events,
      version,
      trust,
      { store: webhooks, file },
      () => checkpointer?.stop(),
    ),
  });
  // WAL lets SSE readers run while the engine writes; a busy timeout rides out short write locks.
  await prisma.$queryRawUnsafe("PRAGMA journal_mode = WAL");
  await prisma.$queryRawUnsafe("PRAGMA busy_timeout = 5000");
  const health = new StorageHealth(file === ":memory:" ? undefined : path.dirname(path.resolve(file)), logLine);
  void checkpointer?.start();
  const close = () => prisma.$disconnect();
  return {
    prisma,
    events,
    trustReads: trust,
    webhooks,
    senderDatabase,
    readVersion: version,
    health,
    checkpointer,
    close,
  };
}

/**
 * What makes the log's global id commit order for the events followed by name (ORDERED_NAMES in
 * src/log/event-log.ts: trust changes and the approvals feed), on
 * PostgreSQL: a transaction-scoped advisory lock taken just before those events are inserted and
 * held until commit, so such rows get their ids one transaction after another, and a reader that
 * saw id N can never later find a smaller one commit. (A sequence hands ids out at insert time, so
 * without it two writers can commit out of id order and a follower resuming after N would skip the
 * other.) SQLite has one writer: its ids already are commit order, so it needs nothing.
 */
export function commitOrderLock(
  config: Pick<Config, "databaseUrl">,
): ((tx: Parameters<Parameters<PrismaClient["$transaction"]>[0]>[0]) => Promise<void>) | undefined {
  if (providerOf(config.databaseUrl) !== "postgresql") return undefined;
  return async (tx) => {
    await tx.$executeRawUnsafe(`SELECT pg_advisory_xact_lock(${NAMED_ORDER_LOCK})`);
  };
}

type SqliteFactory = InstanceType<typeof PrismaBetterSqlite3>;
type SqliteAdapter = Awaited<ReturnType<SqliteFactory["connect"]>>;

/**
 * Hands Prisma's better-sqlite3 connection to the event store, and makes Prisma's interactive
 * transactions take the store's gate: the store's group commits run on the same connection and
 * must never land inside an open Prisma transaction (nor it inside theirs).
 */
function sharedWithEventStore(
  factory: SqliteFactory,
  events: SqliteEventStore,
  version: SqliteReadVersion,
  trust: SqliteTrustReads,
  webhooks: { store: SqliteWebhookStore; file: string },
  beforeClose: () => Promise<void> | undefined,
): SqliteFactory {
  const connect = async (): Promise<SqliteAdapter> => {
    const adapter = await factory.connect();
    const writer = (adapter as unknown as { client: BetterSqlite3.Database }).client;
    events.attach(writer);
    webhooks.store.attach(
      writer,
      webhooks.file === ":memory:"
        ? undefined
        : new BetterSqlite3(webhooks.file, { readonly: true, fileMustExist: true }),
    );
    version.attach(events.gate);
    trust.attach();
    const startTransaction = adapter.startTransaction.bind(adapter);
    adapter.startTransaction = async (isolationLevel) => {
      // The gate also tells the read cache a writer holds the connection (read-version.ts).
      const release = await events.gate.acquire();
      try {
        const tx = await startTransaction(isolationLevel);
        const commit = tx.commit.bind(tx);
        const rollback = tx.rollback.bind(tx);
        tx.commit = () => commit().finally(release);
        tx.rollback = () => rollback().finally(release);
        return tx;
      } catch (error) {
        release();
        throw error;
      }
    };
    const dispose = adapter.dispose.bind(adapter);
    adapter.dispose = async () => {
      await beforeClose();
      version.close();
      trust.close();
      webhooks.store.close();
      await events.close();
      await dispose();
    };
    return adapter;
  };
  const shared = {
    provider: factory.provider,
    adapterName: factory.adapterName,
    connect,
    connectToShadowDb: () => factory.connectToShadowDb(),
  };
  return shared as unknown as SqliteFactory;
}

// Typecheck guards for the cast above: the same model delegates, and rows of the same shape.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Delegates<C> = Exclude<keyof C, `$${string}` | symbol>;
type AllTrue<T extends true[]> = T;
export type ClientsAgree = AllTrue<
  [
    Same<Delegates<Sqlite.PrismaClient>, Delegates<Pg.PrismaClient>>,
    Same<Sqlite.Event, Pg.Event>,
    Same<Sqlite.TodoList, Pg.TodoList>,
    Same<Sqlite.Item, Pg.Item>,
    Same<Sqlite.Approval, Pg.Approval>,
    Same<Sqlite.Trust, Pg.Trust>,
    Same<Sqlite.TrustEntry, Pg.TrustEntry>,
    Same<Sqlite.Requester, Pg.Requester>,
    Same<Sqlite.Nest, Pg.Nest>,
    Same<Sqlite.NestMember, Pg.NestMember>,
    Same<Sqlite.SpunCrow, Pg.SpunCrow>,
    Same<Sqlite.Message, Pg.Message>,
    Same<Sqlite.Quarantine, Pg.Quarantine>,
    Same<Sqlite.ClassifierAnswer, Pg.ClassifierAnswer>,
    Same<Sqlite.Obligation, Pg.Obligation>,
    Same<Sqlite.RotationCursor, Pg.RotationCursor>,
    Same<Sqlite.WebhookEndpoint, Pg.WebhookEndpoint>,
    Same<Sqlite.WebhookDelivery, Pg.WebhookDelivery>,
    Same<Sqlite.WebhookAttempt, Pg.WebhookAttempt>,
    Same<Sqlite.A2aPushConfig, Pg.A2aPushConfig>,
    Same<Sqlite.A2aPush, Pg.A2aPush>,
    Same<Sqlite.ServerKey, Pg.ServerKey>,
    Same<Sqlite.IdempotentAnswer, Pg.IdempotentAnswer>,
  ]
>;

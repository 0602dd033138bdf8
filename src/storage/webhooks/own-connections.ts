// The webhook sender's own connections, for the thread it runs in (src/webhooks/sender-thread.ts):
// nothing it sends or records then runs on the server's event loop. SQLite: a writer connection
// that commits with synchronous=NORMAL (no fsync per attempt: a power cut may forget that a
// delivery went out, and it is sent again with the same webhook-id, which receivers dedupe; the
// outbox rows themselves are written in their event's transaction, as durable as the event) and
// takes the file's writer lock (../writer-lock.ts) before each write; a read-only connection for
// reads. PostgreSQL: a small pool of its own.
import BetterSqlite3 from "better-sqlite3";
import pg from "pg";
import { providerOf } from "../migrate.ts";
import { watchPool } from "../pg-pool.ts";
import { SENDER_THREAD, WriterLock } from "../writer-lock.ts";
import { PgWebhookStore } from "./postgres.ts";
import { SqliteWebhookStore } from "./sqlite.ts";
import type { WebhookStore } from "./types.ts";

/** How a thread of the server reaches the database the server opened (none for an in-memory one). */
export interface SenderDatabase {
  databaseUrl: string;
  /** SQLite: the database file's writer lock the server's gate takes too. */
  writerLock?: SharedArrayBuffer;
  /** SQLite: the server's checkpoint thread runs, so this connection need not checkpoint. */
  checkpointsElsewhere?: boolean;
  /** PostgreSQL: the options the server's own pool was made with. */
  pgPool?: pg.PoolConfig;
}

export interface SenderConnections {
  store: WebhookStore;
  close(): Promise<void>;
}

/** Sends run a few at a time; the pool needs no more than that. */
const PG_POOL_SIZE = 4;

/**
 * Opens the sender's connections to the database the server opened. `writerLock` is the server's
 * (SQLite only); `pgPool` the pool options the server used (PostgreSQL only).
 */
export function openSenderConnections(database: SenderDatabase, logLine: (line: string) => void): SenderConnections {
  const { databaseUrl } = database;
  if (providerOf(databaseUrl) === "postgresql") {
    const pool = new pg.Pool({ ...database.pgPool, connectionString: databaseUrl, max: PG_POOL_SIZE });
    watchPool(pool, logLine);
    return { store: new PgWebhookStore(pool), close: () => pool.end() };
  }
  const file = databaseUrl.slice("file:".length);
  if (!database.writerLock)
    throw new Error("The webhook sender's own SQLite connection needs the server's writer lock.");
  const lock = new WriterLock(database.writerLock);
  const writer = new BetterSqlite3(file, { fileMustExist: true });
  writer.pragma("busy_timeout = 5000");
  writer.pragma("synchronous = NORMAL");
  // The server's checkpoint thread copies the WAL back (../checkpointer.ts): a commit here never
  // does it while holding the writer lock the flock waits on.
  if (database.checkpointsElsewhere) writer.pragma("wal_autocheckpoint = 0");
  const store = new SqliteWebhookStore({
    acquire: async () => {
      await lock.takeWhenFree(SENDER_THREAD);
      return () => lock.release();
    },
  });
  store.attach(writer, new BetterSqlite3(file, { readonly: true, fileMustExist: true }));
  return {
    store,
    close: async () => {
      store.close();
      writer.close();
    },
  };
}

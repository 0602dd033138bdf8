// The PostgreSQL pool's bounds and its error listeners (docs/configuration.md, "PostgreSQL"):
// - connectionTimeoutMillis: how long a request waits for a connection (a new one, or a free one
//   from the pool) before it fails, instead of hanging while the server is stalled or down;
// - statement_timeout and idle_in_transaction_session_timeout: the server ends a statement that
//   runs too long and a transaction left open, so a stuck writer cannot hold locks for ever;
// - query_timeout: the same bound kept by the client, for a server that is stopped and so cannot
//   enforce its own (a paused postmaster or backend);
// - an `error` listener on the pool and on every client: a connection the server ends (a restart
//   sends 57P01 to idle ones) is logged and dropped, and the pool opens a new one on demand. With
//   no listener, node throws the event as an uncaught error and the process exits.
import type pg from "pg";
import type { Config } from "../base/config.ts";
import { describeError } from "../base/describe-error.ts";

/** The client-side bound exceeds the server's, so the server's clearer error normally comes first. */
const CLIENT_MARGIN_MS = 2_000;

export function pgPoolOptions(
  url: string,
  config: Pick<Config, "pgConnectTimeoutMs" | "pgStatementTimeoutMs" | "pgIdleInTransactionTimeoutMs">,
): pg.PoolConfig {
  return {
    connectionString: url,
    connectionTimeoutMillis: config.pgConnectTimeoutMs,
    statement_timeout: config.pgStatementTimeoutMs,
    idle_in_transaction_session_timeout: config.pgIdleInTransactionTimeoutMs,
    query_timeout: config.pgStatementTimeoutMs + CLIENT_MARGIN_MS,
    keepAlive: true,
  };
}

export function watchPool(pool: pg.Pool, logLine: (line: string) => void): void {
  // One line per burst: a restart ends every idle connection at once.
  let lastLogged = 0;
  let dropped = 0;
  const lost = (error: unknown) => {
    dropped++;
    const now = Date.now();
    if (now - lastLogged < 1_000) return;
    lastLogged = now;
    logLine(`database: a connection was lost (${describeError(error)}); ${dropped} so far, replaced on demand`);
  };
  pool.on("error", lost);
  pool.on("connect", (client) => {
    client.on("error", lost);
  });
}

/** How a transaction begins: BEGIN, or BEGIN and a first statement in the same round trip (a fence). */
export interface PgBegin {
  /** The text sent to begin (simple protocol: several statements in one message); its values already inlined. */
  text(client: pg.PoolClient): string;
  /** Checks what the statements after BEGIN returned; throws to roll the transaction back. */
  check(results: pg.QueryResult[], client: pg.PoolClient): Promise<void>;
}

/**
 * Runs `work` in a transaction on one pooled connection: COMMIT when it resolves, ROLLBACK when it
 * throws. A connection whose ROLLBACK failed is dropped, never handed on mid-transaction.
 */
export async function inPgTransaction<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
  begin?: PgBegin,
): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    const started = await client.query(begin ? begin.text(client) : "BEGIN");
    try {
      if (begin) await begin.check((started as unknown as pg.QueryResult[]).slice(1), client);
      const result = await work(client);
      await client.query("COMMIT");
      return result;
    } catch (error) {
      await client.query("ROLLBACK").catch((rollbackError: unknown) => {
        broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
      });
      throw error;
    }
  } finally {
    client.release(broken);
  }
}

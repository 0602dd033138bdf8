// The database's version as a cached read sees it: a value that changes whenever anything the
// database holds may have changed, read around Prisma (it has no such call). Why: the GraphQL read
// cache (src/server/graphql-read-cache.ts) serves a query's answer again only while this is
// unchanged, and asking costs ~3 us, against milliseconds to read and serialise a ledger again.
//
// SQLite: `PRAGMA data_version` on a read-only connection of its own, which changes whenever any
// other connection (Prisma's, the log's group commits, another process) commits. Prisma's own
// connection also shows its open interactive transaction's uncommitted rows to plain Prisma reads
// made meanwhile, so while such a transaction is open, or if one began since, there is no version
// (nothing is cached): an answer that saw rows a rollback then removed is never kept.
// PostgreSQL (and an in-memory SQLite, which a second connection cannot open): no version, so
// nothing is cached there; this has no commit counter that is cheap and exact across instances.
import Database from "better-sqlite3";
import type { PrismaClient } from "../generated/prisma/client.ts";

export interface ReadVersion {
  /** The version now, or null when no read may be cached at this moment. */
  current(): string | null;
}

const NO_VERSION: ReadVersion = { current: () => null };

export class SqliteReadVersion implements ReadVersion {
  private connection: Database.Database | undefined;
  private dataVersion: Database.Statement | undefined;
  private openTransactions = 0;
  private transactionsBegun = 0;

  constructor(private readonly file: string) {}

  /** Opened once the database file exists (Prisma's adapter has connected). */
  attach(): void {
    if (this.file === ":memory:" || this.connection) return;
    this.connection = new Database(this.file, { readonly: true, fileMustExist: true });
    this.dataVersion = this.connection.prepare("PRAGMA data_version").pluck();
  }

  /** Prisma opened an interactive transaction on its connection (storage/db.ts calls these). */
  transactionBegan(): void {
    this.openTransactions += 1;
    this.transactionsBegun += 1;
  }

  transactionEnded(): void {
    this.openTransactions -= 1;
  }

  current(): string | null {
    if (!this.dataVersion || this.openTransactions > 0) return null;
    return `${this.dataVersion.get() as number}/${this.transactionsBegun}`;
  }

  close(): void {
    this.connection?.close();
    this.connection = undefined;
    this.dataVersion = undefined;
  }
}

const versions = new WeakMap<object, ReadVersion>();

export function pairReadVersion(prisma: PrismaClient, version: ReadVersion): void {
  versions.set(prisma, version);
}

/** The version of the database this client opened (none: never cache). */
export function readVersionOf(prisma: PrismaClient): ReadVersion {
  return versions.get(prisma) ?? NO_VERSION;
}

// The database's version as a cached read sees it: a value that changes whenever anything the
// database holds may have changed, read around Prisma (it has no such call). Why: the GraphQL read
// cache (src/server/graphql-read-cache.ts) serves a query's answer again only while this is
// unchanged, and asking costs ~3 us, against milliseconds to read and serialise a ledger again.
//
// SQLite: `PRAGMA data_version` on a read-only connection of its own, which changes whenever any
// other connection (Prisma's, the log's group commits, another process) commits. The write
// connection is shared by Prisma and the log (events/sqlite.ts), and a plain Prisma read made on it
// while a writer holds it (a Prisma interactive transaction, a group commit, the flock's
// appendState) sees that writer's uncommitted rows. So while the store's gate is held, or if it
// was granted since, there is no version (nothing is cached): an answer that saw rows a rollback
// then removed is never kept.
// PostgreSQL (and an in-memory SQLite, which a second connection cannot open): no version, so
// nothing is cached there; this has no commit counter that is cheap and exact across instances.
import Database from "better-sqlite3";

export interface ReadVersion {
  /** The version now, or null when no read may be cached at this moment. */
  current(): string | null;
}

/** No version: nothing is cached (PostgreSQL, an in-memory SQLite). */
export const NO_VERSION: ReadVersion = { current: () => null };

export class SqliteReadVersion implements ReadVersion {
  private connection: Database.Database | undefined;
  private dataVersion: Database.Statement | undefined;
  private gate: { readonly held: boolean; readonly grants: number } | undefined;

  constructor(private readonly file: string) {}

  /** Opened once the database file exists (Prisma's adapter has connected); `gate` guards the write connection. */
  attach(gate: { readonly held: boolean; readonly grants: number }): void {
    this.gate = gate;
    if (this.file === ":memory:" || this.connection) return;
    this.connection = new Database(this.file, { readonly: true, fileMustExist: true });
    this.dataVersion = this.connection.prepare("PRAGMA data_version").pluck();
  }

  current(): string | null {
    if (!this.dataVersion || !this.gate || this.gate.held) return null;
    return `${this.dataVersion.get() as number}/${this.gate.grants}`;
  }

  close(): void {
    this.connection?.close();
    this.connection = undefined;
    this.dataVersion = undefined;
  }
}

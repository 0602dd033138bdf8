// The database's version as the GraphQL read cache sees it: a value that changes whenever anything
// the database holds may have changed (docs/graphql.md, docs/performance.md "A read cache"). SQLite:
// PRAGMA data_version on a read-only connection, and none while the write connection's gate is held
// or was granted since (a read on that connection may have seen uncommitted rows). PostgreSQL and an
// in-memory SQLite: no version, so nothing is cached.
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

// The trust ledger's reads (its records, and a page of each record's history) around Prisma, as the
// event log's are: statements kept for the connection's life, on SQLite a read-only connection
// (committed rows only), on PostgreSQL Prisma's pool. Why, measured: docs/performance.md "The
// ledger's reads around Prisma". The newest n entries of every record are one query (a LIMIT per
// record, which Prisma has no way to say). Prisma stays the schema: this names columns only.
import Database from "better-sqlite3";
import type pg from "pg";
import { actorOfColumns, type Actor } from "../base/actor.ts";

/** A row of the Trust table: where a holder stands on a task type, and its counts. */
export interface TrustRecordRow {
  holder: string;
  taskType: string;
  level: number;
  streak: number;
  approvals: number;
  rejections: number;
  autos: number;
}

/** A row of the TrustEntry table as read: one verdict's move of a record. */
export interface TrustHistoryRow {
  id: number;
  holder: string;
  taskType: string;
  verdict: string;
  subject: string;
  from: number;
  to: number;
  /** toISOString()'s form. */
  at: string;
  /** Who decided the verdict; null on entries written before the ledger kept deciders. */
  actor: Actor | null;
  /** The reason the decider gave with the verdict; null when none was given. */
  reason: string | null;
}

export interface TrustFilter {
  holder?: string | null;
  taskType?: string | null;
}

export interface TrustHistoryPage extends TrustFilter {
  /** The newest `last` entries of each record (all of them when absent)... */
  last?: number | null;
  /** ...among those with an id below `before`. */
  before?: number | null;
}

/** A run of the whole history (one record's, one holder's, one task type's or everyone's) by entry id. */
export interface TrustEntryRange extends TrustFilter {
  /** Entries with an id above / below these (either may be absent)... */
  above?: number | null;
  below?: number | null;
  /** ...at most `limit` of them, read from the largest id down when `descending`. */
  limit: number;
  descending: boolean;
}

export interface TrustReads {
  /** The matching records, by holder then task type. */
  records(filter: TrustFilter): Promise<TrustRecordRow[]>;
  /** Each matching record's page of history, oldest first, in one query. */
  history(page: TrustHistoryPage): Promise<TrustHistoryRow[]>;
  /** A run of the matching entries, in the order read (ascending or descending id). */
  entries(range: TrustEntryRange): Promise<TrustHistoryRow[]>;
  close(): void;
}

const RECORD_COLUMNS = `"holder", "taskType", "level", "streak", "approvals", "rejections", "autos"`;
const ENTRY_COLUMNS = `"id", "holder", "taskType", "verdict", "subject", "from", "to", "decidedBy", "decidedByTokenId", "decidedByTokenName", "decidedByWebhookId", "reason"`;

/** An entry as read, in ENTRY_COLUMNS' order, then `at`. */
type EntryTuple = [
  number,
  string,
  string,
  string,
  string,
  number,
  number,
  string,
  string | null,
  string | null,
  string | null,
  string | null,
  string,
];

function entryOf(row: EntryTuple, isoOf: (at: string) => string): TrustHistoryRow {
  const [
    id,
    holder,
    taskType,
    verdict,
    subject,
    from,
    to,
    decidedBy,
    decidedByTokenId,
    decidedByTokenName,
    decidedByWebhookId,
    reason,
    at,
  ] = row;
  return {
    id,
    holder,
    taskType,
    verdict,
    subject,
    from,
    to,
    at: isoOf(at),
    actor: actorOfColumns({ decidedBy, decidedByTokenId, decidedByTokenName, decidedByWebhookId }),
    reason,
  };
}

/**
 * The SQL for one shape of read (which filters are present), with `$n` placeholders in the order
 * of `values`; `at` is selected by the caller's `atColumn` (each provider formats it its own way).
 */
function recordsSql(filter: TrustFilter): { text: string; values: unknown[] } {
  const where: string[] = [];
  const values: unknown[] = [];
  if (filter.holder != null) where.push(`"holder" = $${values.push(filter.holder)}`);
  if (filter.taskType != null) where.push(`"taskType" = $${values.push(filter.taskType)}`);
  const clause = where.length === 0 ? "" : ` WHERE ${where.join(" AND ")}`;
  return { text: `SELECT ${RECORD_COLUMNS} FROM "Trust"${clause} ORDER BY "holder", "taskType"`, values };
}

function historySql(page: TrustHistoryPage, atOf: (column: string) => string): { text: string; values: unknown[] } {
  const values: unknown[] = [];
  const columns = `${ENTRY_COLUMNS.split(", ")
    .map((c) => `e.${c}`)
    .join(", ")}, ${atOf(`e."at"`)} AS "at"`;
  const records: string[] = [];
  if (page.last == null) {
    if (page.holder != null) records.push(`e."holder" = $${values.push(page.holder)}`);
    if (page.taskType != null) records.push(`e."taskType" = $${values.push(page.taskType)}`);
    if (page.before != null) records.push(`e."id" < $${values.push(page.before)}`);
    const clause = records.length === 0 ? "" : ` WHERE ${records.join(" AND ")}`;
    return { text: `SELECT ${columns} FROM "TrustEntry" e${clause} ORDER BY e."id"`, values };
  }
  // Each record's newest `last`, found through the (holder, taskType) index: only the page's rows
  // are read (a window over every entry read them all; 2x slower at ~13 entries per record).
  const before = page.before == null ? "" : ` AND x."id" < $${values.push(page.before)}`;
  const last = `$${values.push(page.last)}`;
  if (page.holder != null) records.push(`t."holder" = $${values.push(page.holder)}`);
  if (page.taskType != null) records.push(`t."taskType" = $${values.push(page.taskType)}`);
  const clause = records.length === 0 ? "" : ` WHERE ${records.join(" AND ")}`;
  return {
    text:
      `SELECT ${columns} FROM "Trust" t JOIN "TrustEntry" e ON e."id" IN ` +
      `(SELECT x."id" FROM "TrustEntry" x WHERE x."holder" = t."holder" AND x."taskType" = t."taskType"${before} ORDER BY x."id" DESC LIMIT ${last})` +
      `${clause} ORDER BY e."id"`,
    values,
  };
}

/**
 * By id between the bounds, either way. One record's entries come in id order straight off the
 * (holder, taskType, id) index, and the whole history off the primary key. One holder's (or one
 * task type's) entries are spread over several records, so each matching record gives its own
 * page through that index and the pages are merged: the read never sorts a holder's whole history.
 */
function entriesSql(page: TrustEntryRange, atOf: (column: string) => string): { text: string; values: unknown[] } {
  const values: unknown[] = [];
  const columns = `${ENTRY_COLUMNS.split(", ")
    .map((c) => `e.${c}`)
    .join(", ")}, ${atOf(`e."at"`)} AS "at"`;
  const order = page.descending ? "DESC" : "ASC";
  const bounds = (alias: string): string[] => {
    const out: string[] = [];
    if (page.above != null) out.push(`${alias}."id" > $${values.push(page.above)}`);
    if (page.below != null) out.push(`${alias}."id" < $${values.push(page.below)}`);
    return out;
  };
  if ((page.holder != null) !== (page.taskType != null)) {
    const inner = [`x."holder" = t."holder"`, `x."taskType" = t."taskType"`, ...bounds("x")].join(" AND ");
    const limit = `$${values.push(page.limit)}`;
    const record =
      page.holder != null
        ? `t."holder" = $${values.push(page.holder)}`
        : `t."taskType" = $${values.push(page.taskType)}`;
    return {
      text:
        `SELECT ${columns} FROM "Trust" t JOIN "TrustEntry" e ON e."id" IN ` +
        `(SELECT x."id" FROM "TrustEntry" x WHERE ${inner} ORDER BY x."id" ${order} LIMIT ${limit}) ` +
        `WHERE ${record} ORDER BY e."id" ${order} LIMIT $${values.push(page.limit)}`,
      values,
    };
  }
  const where: string[] = [];
  if (page.holder != null) where.push(`e."holder" = $${values.push(page.holder)}`);
  if (page.taskType != null) where.push(`e."taskType" = $${values.push(page.taskType)}`);
  where.push(...bounds("e"));
  const clause = where.length === 0 ? "" : ` WHERE ${where.join(" AND ")}`;
  return {
    text: `SELECT ${columns} FROM "TrustEntry" e${clause} ORDER BY e."id" ${order} LIMIT $${values.push(page.limit)}`,
    values,
  };
}

/** Which filters a read has: one prepared statement per shape. */
function shapeOf(read: TrustHistoryPage | TrustEntryRange): string {
  const filters = `${read.holder != null ? "h" : ""}${read.taskType != null ? "t" : ""}`;
  if ("descending" in read)
    return `${filters}${read.above != null ? "a" : ""}${read.below != null ? "b" : ""}${read.descending ? "d" : "u"}`;
  return `${filters}${read.before != null ? "b" : ""}${read.last != null ? "l" : ""}`;
}

// Prisma's better-sqlite3 adapter stores DateTime as ISO 8601 text with +00:00 (events/sqlite.ts):
// turned back into toISOString()'s form by hand; anything else goes through Date.
const SQLITE_UTC_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$/;
const isoOfSqlite = (ts: string): string =>
  SQLITE_UTC_MS.test(ts) ? `${ts.slice(0, 23)}Z` : new Date(ts).toISOString();

export class SqliteTrustReads implements TrustReads {
  private connection: Database.Database | undefined;
  private readonly statements = new Map<string, Database.Statement>();

  constructor(private readonly file: string) {}

  /** Opened once the database file exists (Prisma's adapter has connected). */
  attach(): void {
    if (this.connection) return;
    this.connection = new Database(this.file, { readonly: true, fileMustExist: true });
  }

  private statement(key: string, sql: { text: string }, raw = false): Database.Statement {
    let statement = this.statements.get(key);
    if (!statement) {
      if (!this.connection) throw new Error("The trust store is not attached to the database yet.");
      // Each $n appears once, in order: plain ? placeholders take the values in the same order.
      statement = this.connection.prepare(sql.text.replace(/\$\d+/g, "?")).safeIntegers(false).raw(raw);
      this.statements.set(key, statement);
    }
    return statement;
  }

  async records(filter: TrustFilter): Promise<TrustRecordRow[]> {
    const sql = recordsSql(filter);
    return this.statement(`r${shapeOf(filter)}`, sql).all(...sql.values) as TrustRecordRow[];
  }

  async history(page: TrustHistoryPage): Promise<TrustHistoryRow[]> {
    const sql = historySql(page, (at) => at);
    // Rows as arrays, made into objects of one shape here: better-sqlite3's row objects took twice as long.
    const rows = this.statement(`h${shapeOf(page)}`, sql, true).all(...sql.values) as EntryTuple[];
    return rows.map((row) => entryOf(row, isoOfSqlite));
  }

  async entries(range: TrustEntryRange): Promise<TrustHistoryRow[]> {
    const sql = entriesSql(range, (at) => at);
    const rows = this.statement(`e${shapeOf(range)}`, sql, true).all(...sql.values) as EntryTuple[];
    return rows.map((row) => entryOf(row, isoOfSqlite));
  }

  close(): void {
    this.statements.clear();
    this.connection?.close();
    this.connection = undefined;
  }
}

const pgAt = (column: string) => `to_char(${column}, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
/** pgAt's text is toISOString()'s form already. */
const pgIso = (at: string) => at;

export class PgTrustReads implements TrustReads {
  constructor(private readonly pool: pg.Pool) {}

  async records(filter: TrustFilter): Promise<TrustRecordRow[]> {
    const sql = recordsSql(filter);
    const { rows } = await this.pool.query<TrustRecordRow>({
      name: `crows-trust-records-${shapeOf(filter)}`,
      text: sql.text,
      values: sql.values,
    });
    return rows;
  }

  async history(page: TrustHistoryPage): Promise<TrustHistoryRow[]> {
    const sql = historySql(page, pgAt);
    const { rows } = await this.pool.query<EntryTuple>({
      name: `crows-trust-history-${shapeOf(page)}`,
      text: sql.text,
      values: sql.values,
      rowMode: "array",
    });
    return rows.map((row) => entryOf(row, pgIso));
  }

  async entries(range: TrustEntryRange): Promise<TrustHistoryRow[]> {
    const sql = entriesSql(range, pgAt);
    const { rows } = await this.pool.query<EntryTuple>({
      name: `crows-trust-entries-${shapeOf(range)}`,
      text: sql.text,
      values: sql.values,
      rowMode: "array",
    });
    return rows.map((row) => entryOf(row, pgIso));
  }

  close(): void {} // the pool is Prisma's: it ends with $disconnect
}

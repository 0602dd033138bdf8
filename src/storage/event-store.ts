// The event log's SQL, around Prisma. Why: an append through Prisma's interactive transaction cost
// ~2.6 ms (prepare per statement, the query engine, a findFirst for the last seq, a create per
// event), and on SQLite a read outside such a transaction saw its uncommitted writes, because
// Prisma keeps one better-sqlite3 connection. Here:
//   - statements are prepared once, for the life of the connection;
//   - each stream's last seq is held in memory (the caller serialises appends to one stream) and
//     re-read after a unique-key clash (another instance) or a rollback;
//   - appends that carry no state change and arrive together commit in one transaction (group commit);
//   - appends that carry one of the flock's hot state changes (flock-state.ts) run in a
//     transaction of their own here, the state statements beside the event INSERT (appendState);
//   - appends whose state change is written through Prisma (nests, rare flock paths) still run in
//     Prisma's transaction, so state and event commit together or not at all; only the event's
//     own INSERT is done here (appendWith);
//   - on SQLite, log reads use a second, read-only connection: WAL gives it only committed data.
//   - a replay page is laid out in the database (readRendered): one row per page, the caller's
//     frame text joined around seq, name and payload, because a 10,000-event REST replay spent
//     most of its time building an object, an ISO timestamp and a string per row.
// Prisma stays the schema and the migrations: this file only names the Event table's columns.
import Database from "better-sqlite3";
import type pg from "pg";
import type { PrismaClient } from "../generated/prisma/client.ts";
import { pgState, sqliteState, type StateReads, type StateTx } from "./flock-state.ts";

export type Tx = Parameters<Parameters<PrismaClient["$transaction"]>[0]>[0];

export interface EventRow {
  /** The log's global id: commit order across every stream. */
  id: number;
  stream: string;
  seq: number;
  name: string;
  payload: string;
  ts: string;
}

/**
 * How readRendered lays out each event: `beforeSeq` seq `beforeName` name `beforePayload` payload
 * `after`. The caller owns the format (compat/sse.ts: an SSE frame); the store only joins text.
 */
export interface RowTemplate {
  beforeSeq: string;
  beforeName: string;
  beforePayload: string;
  after: string;
}

/** A page of events laid out by a RowTemplate, as the UTF-8 bytes a client receives. */
export interface RenderedPage {
  /** How many events the page holds (0: none after the cursor). */
  count: number;
  /** The seq of the page's last event (the cursor to read on from). */
  lastSeq: number;
  bytes: Buffer;
}

/** An event to store: its payload already the JSON text clients receive. */
export interface NewEvent {
  name: string;
  payload: string;
  ts: Date;
}

export interface EventStore {
  /**
   * Stores events with no state change beside them, in order with contiguous seqs, committed in
   * a transaction shared with whatever else arrived in the same turn of the event loop. The
   * caller keeps appends to one stream one at a time.
   */
  append(stream: string, events: NewEvent[]): Promise<EventRow[]>;
  /** Runs `build` in a Prisma transaction and stores the events it returns in that same transaction. */
  appendWith(prisma: PrismaClient, stream: string, build: (tx: Tx) => Promise<NewEvent[]>): Promise<EventRow[]>;
  /**
   * Runs `build` in a transaction on the log's own connection, with the flock's state statements
   * (flock-state.ts), and stores the events it returns in that same transaction: both commit or
   * neither does. `build` may run again after a clash with another instance on the stream's seq.
   */
  appendState(stream: string, build: (tx: StateTx) => Promise<NewEvent[]>): Promise<EventRow[]>;
  /** The flock's hot rows as committed (on SQLite, the read connection). */
  readonly state: StateReads;
  /** A state change with no event beside it, in a transaction of its own (a crew rotation's move). */
  writeState<T>(write: (tx: StateTx) => Promise<T>): Promise<T>;
  read(stream: string, afterSeq: number, limit: number): Promise<EventRow[]>;
  /**
   * The events `read` would return, laid out by `template` and joined in the database into one
   * block of bytes: a replay writes a page with no per-row objects or strings in JavaScript.
   */
  readRendered(stream: string, afterSeq: number, limit: number, template: RowTemplate): Promise<RenderedPage>;
  /** Events with any of `names`, after global id `afterId`, in id order. */
  readNamed(names: readonly string[], afterId: number, limit: number): Promise<EventRow[]>;
  lastSeq(stream: string): Promise<number>;
  /** The newest committed id among events with any of `names` (0: none). */
  lastNamedId(names: readonly string[]): Promise<number>;
  close(): Promise<void>;
}

const stores = new WeakMap<object, EventStore>();

/** The store opened with this client (src/storage/db.ts pairs them). */
export function eventStoreOf(prisma: PrismaClient): EventStore {
  const store = stores.get(prisma);
  if (!store) throw new Error("This PrismaClient was not opened by openDatabase: it has no event store.");
  return store;
}

export function pairEventStore(prisma: PrismaClient, store: EventStore): void {
  stores.set(prisma, store);
}

const MAX_CONFLICT_RETRIES = 25;

const EMPTY = Buffer.alloc(0);

function isUniqueClash(error: unknown): boolean {
  const e = error as { code?: string; meta?: { driverAdapterError?: { cause?: { kind?: string } } } };
  return e?.code === "P2002" || e?.code === "23505" || e?.code === "SQLITE_CONSTRAINT_UNIQUE" || e?.code === "SQLITE_CONSTRAINT_PRIMARYKEY";
}

/** A short random pause breaks the lockstep of two instances appending one after another. */
const backoff = (attempt: number) => new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(50, 2 * (attempt + 1))));

/** A FIFO lock with a synchronous fast path. */
export class Gate {
  private locked = false;
  private readonly waiters: Array<() => void> = [];
  /** Times the gate was granted: a writer had the connection if this moved (read-version.ts). */
  grants = 0;

  get held(): boolean {
    return this.locked;
  }

  acquire(): Promise<() => void> {
    if (!this.locked) {
      this.locked = true;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve) => this.waiters.push(() => resolve(this.releaser())));
  }

  private releaser(): () => void {
    this.grants += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiters.shift();
      if (next) next();
      else this.locked = false;
    };
  }
}

interface Pending {
  stream: string;
  events: NewEvent[];
  resolve: (rows: EventRow[]) => void;
  reject: (error: unknown) => void;
}

/** Collects appends made in one turn of the event loop and hands them to `flush` together. */
class GroupQueue {
  private pending: Pending[] = [];
  private scheduled = false;
  constructor(private readonly flush: (batch: Pending[]) => Promise<void>) {}

  add(stream: string, events: NewEvent[]): Promise<EventRow[]> {
    return new Promise((resolve, reject) => {
      this.pending.push({ stream, events, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          const batch = this.pending;
          this.pending = [];
          this.flush(batch).catch((error) => batch.forEach((p) => p.reject(error)));
        });
      }
    });
  }
}

// ---------------------------------------------------------------------------------------------
// SQLite: one write connection, Prisma's. Its interactive transactions and the group commits here
// take turns through `gate` (db.ts wraps the adapter's startTransaction to take it), so a group
// commit never lands inside an open Prisma transaction, and the seq counters are only touched by
// whoever holds the gate.

const SQLITE_COLUMNS = `"id", "stream", "seq", "name", "payload", "ts"`;

/** Prisma's better-sqlite3 adapter stores DateTime as ISO 8601 text with +00:00; the same here. */
const sqliteTs = (date: Date) => date.toISOString().replace("Z", "+00:00");

/** A row as SQLite returns it: the same columns, `ts` in SQLite's own text form. */
type SqliteRow = EventRow;

// What sqliteTs writes, in UTC to the millisecond: turned back into toISOString()'s form by hand,
// because a Date parse and format per row was a large share of a 10,000-event REST replay (bench/replay.ts).
// Anything else (a row another writer stored) still goes through Date.
const SQLITE_UTC_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$/;
const isoOf = (ts: string): string => (SQLITE_UTC_MS.test(ts) ? `${ts.slice(0, 23)}Z` : new Date(ts).toISOString());
const fromSqlite = (row: SqliteRow): EventRow => ({ id: row.id, stream: row.stream, seq: row.seq, name: row.name, payload: row.payload, ts: isoOf(row.ts) });

export class SqliteEventStore implements EventStore {
  readonly gate = new Gate();
  private readonly nextSeq = new Map<string, number>();
  private readonly queue = new GroupQueue((batch) => this.flush(batch));
  private writer: Database.Database | undefined;
  private reader: Database.Database | undefined;
  private statements: ReturnType<SqliteEventStore["prepare"]> | undefined;
  private writerState: StateTx | undefined;
  private readerState: StateTx | undefined;
  readonly state: StateReads = {
    item: (id) => this.readingState((s) => s.item(id)),
    approval: (itemId, target) => this.readingState((s) => s.approval(itemId, target)),
    trust: (holder, taskType) => this.readingState((s) => s.trust(holder, taskType)),
    spunCrowTrust: (name) => this.readingState((s) => s.spunCrowTrust(name)),
    spunCrowPersona: (name) => this.readingState((s) => s.spunCrowPersona(name)),
    spunCrowNames: () => this.readingState((s) => s.spunCrowNames()),
    quarantinedCrows: () => this.readingState((s) => s.quarantinedCrows()),
    rotationCursor: (nestId, ring) => this.readingState((s) => s.rotationCursor(nestId, ring)),
  };

  constructor(private readonly file: string) {}

  /** Called with Prisma's connection once the adapter opens it. */
  attach(writer: Database.Database): void {
    this.writer = writer;
    // A second connection for reads sees only committed data (WAL). An in-memory database cannot
    // be shared, so there reads take the gate instead.
    this.reader = this.file === ":memory:" ? undefined : new Database(this.file, { readonly: true, fileMustExist: true });
    this.statements = this.prepare(writer, this.reader ?? writer);
    this.writerState = sqliteState(writer);
    this.readerState = this.reader ? sqliteState(this.reader) : undefined;
  }

  private prepare(writer: Database.Database, reader: Database.Database) {
    return {
      insert: writer.prepare(`INSERT INTO "Event" ("stream", "seq", "name", "payload", "ts") VALUES (?, ?, ?, ?, ?)`).safeIntegers(false),
      writerLastSeq: writer.prepare(`SELECT COALESCE(MAX("seq"), 0) FROM "Event" WHERE "stream" = ?`).pluck().safeIntegers(false),
      begin: writer.prepare("BEGIN IMMEDIATE"),
      commit: writer.prepare("COMMIT"),
      rollback: writer.prepare("ROLLBACK"),
      read: reader.prepare(`SELECT ${SQLITE_COLUMNS} FROM "Event" WHERE "stream" = ? AND "seq" > ? ORDER BY "seq" LIMIT ?`).safeIntegers(false),
      // CAST AS BLOB: better-sqlite3 hands a BLOB over as a Buffer of the stored UTF-8, no string.
      readRendered: reader
        .prepare(
          `SELECT count(*) AS "count", COALESCE(MAX("seq"), 0) AS "lastSeq", ` +
            `CAST(group_concat(? || "seq" || ? || "name" || ? || "payload" || ?, '' ORDER BY "seq") AS BLOB) AS "bytes" ` +
            `FROM (SELECT "seq", "name", "payload" FROM "Event" WHERE "stream" = ? AND "seq" > ? ORDER BY "seq" LIMIT ?)`,
        )
        .safeIntegers(false),
      readNamed: reader.prepare(`SELECT ${SQLITE_COLUMNS} FROM "Event" WHERE "name" IN (SELECT value FROM json_each(?)) AND "id" > ? ORDER BY "id" LIMIT ?`).safeIntegers(false),
      lastSeq: reader.prepare(`SELECT COALESCE(MAX("seq"), 0) FROM "Event" WHERE "stream" = ?`).pluck().safeIntegers(false),
      lastNamedId: reader.prepare(`SELECT COALESCE(MAX("id"), 0) FROM "Event" WHERE "name" IN (SELECT value FROM json_each(?))`).pluck().safeIntegers(false),
    };
  }

  private get sql() {
    if (!this.statements) throw new Error("The event store is not attached to a connection yet.");
    return this.statements;
  }

  append(stream: string, events: NewEvent[]): Promise<EventRow[]> {
    return this.queue.add(stream, events);
  }

  /** Inserts on the writer connection, inside whatever transaction it has open. Gate held. */
  private insertNow(stream: string, events: NewEvent[]): EventRow[] {
    const sql = this.sql;
    let seq = this.nextSeq.get(stream) ?? (sql.writerLastSeq.get(stream) as number);
    const rows: EventRow[] = [];
    for (const event of events) {
      seq += 1;
      const info = sql.insert.run(stream, seq, event.name, event.payload, sqliteTs(event.ts));
      rows.push({ id: Number(info.lastInsertRowid), stream, seq, name: event.name, payload: event.payload, ts: event.ts.toISOString() });
    }
    this.nextSeq.set(stream, seq);
    return rows;
  }

  private async flush(batch: Pending[]): Promise<void> {
    const release = await this.gate.acquire();
    try {
      const sql = this.sql;
      try {
        sql.begin.run();
        const results = batch.map((p) => this.insertNow(p.stream, p.events));
        sql.commit.run();
        batch.forEach((p, i) => p.resolve(results[i]!));
        return;
      } catch {
        if (this.writer?.inTransaction) sql.rollback.run();
        for (const p of batch) this.nextSeq.delete(p.stream);
      }
      // Something in the batch failed: commit each append alone, so one bad append fails alone.
      for (const p of batch) {
        try {
          sql.begin.run();
          const rows = this.insertNow(p.stream, p.events);
          sql.commit.run();
          p.resolve(rows);
        } catch (error) {
          if (this.writer?.inTransaction) sql.rollback.run();
          this.nextSeq.delete(p.stream);
          p.reject(error);
        }
      }
    } finally {
      release();
    }
  }

  async appendWith(prisma: PrismaClient, stream: string, build: (tx: Tx) => Promise<NewEvent[]>): Promise<EventRow[]> {
    for (let attempt = 0; ; attempt++) {
      try {
        // The transaction holds the gate (db.ts), and the writer connection is the one Prisma's
        // transaction runs on, so the raw INSERT below is part of that transaction.
        return await prisma.$transaction(async (tx) => {
          const events = await build(tx);
          return events.length === 0 ? [] : this.insertNow(stream, events);
        });
      } catch (error) {
        this.nextSeq.delete(stream); // rolled back: the counter may be ahead of the table
        if (attempt < MAX_CONFLICT_RETRIES && isUniqueClash(error)) {
          await backoff(attempt);
          continue;
        }
        throw error;
      }
    }
  }

  async appendState(stream: string, build: (tx: StateTx) => Promise<NewEvent[]>): Promise<EventRow[]> {
    for (let attempt = 0; ; attempt++) {
      // The gate keeps group commits and Prisma's transactions off the connection meanwhile; the
      // state statements run on the writer connection, inside this transaction.
      const release = await this.gate.acquire();
      const sql = this.sql;
      try {
        sql.begin.run();
        const events = await build(this.writerState!);
        const rows = events.length === 0 ? [] : this.insertNow(stream, events);
        sql.commit.run();
        return rows;
      } catch (error) {
        if (this.writer?.inTransaction) sql.rollback.run();
        this.nextSeq.delete(stream); // rolled back: the counter may be ahead of the table
        if (attempt < MAX_CONFLICT_RETRIES && isUniqueClash(error)) {
          release();
          await backoff(attempt);
          continue;
        }
        throw error;
      } finally {
        release();
      }
    }
  }

  async writeState<T>(write: (tx: StateTx) => Promise<T>): Promise<T> {
    const release = await this.gate.acquire();
    const sql = this.sql;
    try {
      sql.begin.run();
      const result = await write(this.writerState!);
      sql.commit.run();
      return result;
    } catch (error) {
      if (this.writer?.inTransaction) sql.rollback.run();
      throw error;
    } finally {
      release();
    }
  }

  /** Reads of committed state: the read connection, or (in memory) the writer between transactions. */
  private async readingState<T>(read: (state: StateTx) => Promise<T>): Promise<T> {
    if (this.readerState) return read(this.readerState);
    if (!this.writerState) throw new Error("The event store is not attached to a connection yet.");
    const release = await this.gate.acquire();
    try {
      return await read(this.writerState);
    } finally {
      release();
    }
  }

  private async reading<T>(read: () => T): Promise<T> {
    if (this.reader) return read();
    const release = await this.gate.acquire();
    try {
      return read();
    } finally {
      release();
    }
  }

  read(stream: string, afterSeq: number, limit: number): Promise<EventRow[]> {
    return this.reading(() => (this.sql.read.all(stream, afterSeq, limit) as SqliteRow[]).map(fromSqlite));
  }

  readRendered(stream: string, afterSeq: number, limit: number, template: RowTemplate): Promise<RenderedPage> {
    return this.reading(() => {
      const { beforeSeq, beforeName, beforePayload, after } = template;
      const page = this.sql.readRendered.get(beforeSeq, beforeName, beforePayload, after, stream, afterSeq, limit) as { count: number; lastSeq: number; bytes: Buffer | null };
      return { count: page.count, lastSeq: page.lastSeq, bytes: page.bytes ?? EMPTY };
    });
  }

  readNamed(names: readonly string[], afterId: number, limit: number): Promise<EventRow[]> {
    return this.reading(() => (this.sql.readNamed.all(JSON.stringify(names), afterId, limit) as SqliteRow[]).map(fromSqlite));
  }

  lastSeq(stream: string): Promise<number> {
    return this.reading(() => this.sql.lastSeq.get(stream) as number);
  }

  lastNamedId(names: readonly string[]): Promise<number> {
    return this.reading(() => this.sql.lastNamedId.get(JSON.stringify(names)) as number);
  }

  async close(): Promise<void> {
    this.reader?.close();
    this.reader = undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL: the pool Prisma's adapter uses too. A group commit is one multi-row INSERT (one
// statement, its own transaction); a clash on (stream, seq) with another instance re-reads the
// counters and tries again.

const PG_COLUMNS = `"id", "stream", "seq", "name", "payload", to_char("ts", 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "ts"`;

export class PgEventStore implements EventStore {
  private readonly nextSeq = new Map<string, number>();
  private readonly queue = new GroupQueue((batch) => this.flush(batch));
  readonly state: StateReads;

  constructor(private readonly pool: pg.Pool) {
    this.state = pgState(pool);
  }

  append(stream: string, events: NewEvent[]): Promise<EventRow[]> {
    return this.queue.add(stream, events);
  }

  private async flush(batch: Pending[]): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        const missing = [...new Set(batch.map((p) => p.stream).filter((s) => !this.nextSeq.has(s)))];
        if (missing.length > 0) {
          const { rows } = await this.pool.query<{ stream: string; last: number }>({
            name: "crows-event-last-seqs",
            text: `SELECT s AS "stream", COALESCE((SELECT MAX("seq") FROM "Event" WHERE "stream" = s), 0)::int AS "last" FROM unnest($1::text[]) AS s`,
            values: [missing],
          });
          for (const row of rows) this.nextSeq.set(row.stream, row.last);
        }
        const streams: string[] = [];
        const seqs: number[] = [];
        const names: string[] = [];
        const payloads: string[] = [];
        const stamps: string[] = [];
        const planned = new Map<string, number>();
        for (const p of batch) {
          let seq = planned.get(p.stream) ?? this.nextSeq.get(p.stream)!;
          for (const event of p.events) {
            streams.push(p.stream);
            seqs.push(++seq);
            names.push(event.name);
            payloads.push(event.payload);
            stamps.push(event.ts.toISOString());
          }
          planned.set(p.stream, seq);
        }
        const { rows } = await this.pool.query<{ id: number; stream: string; seq: number }>({
          name: "crows-event-insert",
          text:
            `INSERT INTO "Event" ("stream", "seq", "name", "payload", "ts") ` +
            `SELECT * FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::timestamp(3)[]) RETURNING "id", "stream", "seq"`,
          values: [streams, seqs, names, payloads, stamps],
        });
        for (const [stream, seq] of planned) this.nextSeq.set(stream, seq);
        const idOf = new Map(rows.map((r) => [`${r.seq}\u0000${r.stream}`, r.id]));
        let at = 0;
        for (const p of batch) {
          const stored: EventRow[] = [];
          for (const event of p.events) {
            const seq = seqs[at++]!;
            stored.push({ id: idOf.get(`${seq}\u0000${p.stream}`)!, stream: p.stream, seq, name: event.name, payload: event.payload, ts: event.ts.toISOString() });
          }
          p.resolve(stored);
        }
        return;
      } catch (error) {
        for (const p of batch) this.nextSeq.delete(p.stream);
        if (attempt < MAX_CONFLICT_RETRIES && isUniqueClash(error)) {
          await backoff(attempt);
          continue;
        }
        throw error;
      }
    }
  }

  async appendWith(prisma: PrismaClient, stream: string, build: (tx: Tx) => Promise<NewEvent[]>): Promise<EventRow[]> {
    for (let attempt = 0; ; attempt++) {
      try {
        const rows = await prisma.$transaction(async (tx) => {
          const events = await build(tx);
          if (events.length === 0) return [];
          let seq = this.nextSeq.get(stream);
          if (seq === undefined) {
            const last = await tx.event.findFirst({ where: { stream }, orderBy: { seq: "desc" }, select: { seq: true } });
            seq = last?.seq ?? 0;
          }
          const first = seq;
          const created = await tx.event.createManyAndReturn({
            data: events.map((e, i) => ({ stream, seq: first + i + 1, name: e.name, payload: e.payload, ts: e.ts })),
          });
          return created.sort((a, b) => a.seq - b.seq);
        });
        if (rows.length > 0) this.nextSeq.set(stream, rows[rows.length - 1]!.seq);
        return rows.map((r) => ({ id: r.id, stream: r.stream, seq: r.seq, name: r.name, payload: r.payload, ts: r.ts.toISOString() }));
      } catch (error) {
        this.nextSeq.delete(stream);
        if (attempt < MAX_CONFLICT_RETRIES && isUniqueClash(error)) {
          await backoff(attempt);
          continue;
        }
        throw error;
      }
    }
  }

  async appendState(stream: string, build: (tx: StateTx) => Promise<NewEvent[]>): Promise<EventRow[]> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.stateTransaction(stream, build);
      } catch (error) {
        this.nextSeq.delete(stream); // rolled back: the counter may be ahead of the table
        if (attempt < MAX_CONFLICT_RETRIES && isUniqueClash(error)) {
          await backoff(attempt);
          continue;
        }
        throw error;
      }
    }
  }

  /** One transaction on a connection of its own from the pool: state statements, then the events. */
  private async stateTransaction(stream: string, build: (tx: StateTx) => Promise<NewEvent[]>): Promise<EventRow[]> {
    const rows = await this.writeState(async (tx, client) => {
      const events = await build(tx);
      return events.length === 0 ? [] : await this.insertIn(client, stream, events);
    });
    if (rows.length > 0) this.nextSeq.set(stream, rows[rows.length - 1]!.seq);
    return rows;
  }

  async writeState<T>(write: (tx: StateTx, client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      await client.query("BEGIN");
      try {
        const result = await write(pgState(client), client);
        await client.query("COMMIT");
        return result;
      } catch (error) {
        await client.query("ROLLBACK").catch((rollbackError: unknown) => {
          broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
        });
        throw error;
      }
    } finally {
      // A connection whose ROLLBACK failed is dropped, never handed on mid-transaction.
      client.release(broken);
    }
  }

  /** Inserts `events` after the stream's last seq, inside `client`'s open transaction. */
  private async insertIn(client: pg.PoolClient, stream: string, events: NewEvent[]): Promise<EventRow[]> {
    let seq = this.nextSeq.get(stream);
    if (seq === undefined) {
      const { rows } = await client.query<{ last: number }>({
        name: "crows-event-last-seq",
        text: `SELECT COALESCE(MAX("seq"), 0)::int AS "last" FROM "Event" WHERE "stream" = $1`,
        values: [stream],
      });
      seq = rows[0]!.last;
    }
    const first = seq;
    const { rows } = await client.query<{ id: number; seq: number }>({
      name: "crows-event-insert-one-stream",
      text:
        `INSERT INTO "Event" ("stream", "seq", "name", "payload", "ts") ` +
        `SELECT $1, * FROM unnest($2::int[], $3::text[], $4::text[], $5::timestamp(3)[]) RETURNING "id", "seq"`,
      values: [stream, events.map((_, i) => first + i + 1), events.map((e) => e.name), events.map((e) => e.payload), events.map((e) => e.ts.toISOString())],
    });
    const idOf = new Map(rows.map((r) => [r.seq, r.id]));
    return events.map((e, i) => ({ id: idOf.get(first + i + 1)!, stream, seq: first + i + 1, name: e.name, payload: e.payload, ts: e.ts.toISOString() }));
  }

  async read(stream: string, afterSeq: number, limit: number): Promise<EventRow[]> {
    const { rows } = await this.pool.query<EventRow>({
      name: "crows-event-read",
      text: `SELECT ${PG_COLUMNS} FROM "Event" WHERE "stream" = $1 AND "seq" > $2 ORDER BY "seq" LIMIT $3`,
      values: [stream, afterSeq, limit],
    });
    return rows;
  }

  async readRendered(stream: string, afterSeq: number, limit: number, template: RowTemplate): Promise<RenderedPage> {
    const { rows } = await this.pool.query<{ count: number; lastSeq: number; text: string | null }>({
      name: "crows-event-read-rendered",
      text:
        `SELECT count(*)::int AS "count", COALESCE(MAX("seq"), 0)::int AS "lastSeq", ` +
        `string_agg($1::text || "seq" || $2::text || "name" || $3::text || "payload" || $4::text, '' ORDER BY "seq") AS "text" ` +
        `FROM (SELECT "seq", "name", "payload" FROM "Event" WHERE "stream" = $5 AND "seq" > $6 ORDER BY "seq" LIMIT $7) AS page`,
      values: [template.beforeSeq, template.beforeName, template.beforePayload, template.after, stream, afterSeq, limit],
    });
    const page = rows[0]!;
    return { count: page.count, lastSeq: page.lastSeq, bytes: page.text === null ? EMPTY : Buffer.from(page.text) };
  }

  async readNamed(names: readonly string[], afterId: number, limit: number): Promise<EventRow[]> {
    const { rows } = await this.pool.query<EventRow>({
      name: "crows-event-read-named",
      text: `SELECT ${PG_COLUMNS} FROM "Event" WHERE "name" = ANY($1::text[]) AND "id" > $2 ORDER BY "id" LIMIT $3`,
      values: [[...names], afterId, limit],
    });
    return rows;
  }

  async lastSeq(stream: string): Promise<number> {
    const { rows } = await this.pool.query<{ last: number }>({
      name: "crows-event-last-seq",
      text: `SELECT COALESCE(MAX("seq"), 0)::int AS "last" FROM "Event" WHERE "stream" = $1`,
      values: [stream],
    });
    return rows[0]!.last;
  }

  async lastNamedId(names: readonly string[]): Promise<number> {
    const { rows } = await this.pool.query<{ last: number }>({
      name: "crows-event-last-named-id",
      text: `SELECT COALESCE(MAX("id"), 0)::int AS "last" FROM "Event" WHERE "name" = ANY($1::text[])`,
      values: [[...names]],
    });
    return rows[0]!.last;
  }


  async close(): Promise<void> {} // the pool is Prisma's: it ends with $disconnect
}

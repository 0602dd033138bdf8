// The event store on SQLite: one write connection, Prisma's. Its interactive transactions and the
// group commits here take turns through the write-connection lock (../write-connection-lock.ts), so a group commit never lands inside
// an open Prisma transaction, and the seq counters are only touched by whoever holds that lock.
// Reads use a second, read-only connection (WAL: committed rows only). docs/architecture.md says why.
import Database from "better-sqlite3";
import type { Fence } from "../fence.ts";
import type { PrismaClient } from "../../generated/prisma/client.ts";
import { sqliteState } from "../flock-state.ts";
import type { StateReads, StateTx } from "../state-shapes.ts";
import { WriteConnectionLock } from "../write-connection-lock.ts";
import type { WriterLock } from "../writer-lock.ts";
import { GroupQueue, type Pending } from "./group-queue.ts";
import { retryOnSeqClash } from "./seq-retry.ts";
import { SqliteOutbox, type OutboxRule } from "../webhook-outbox.ts";
import type { EventRow, EventStore, NewEvent, RenderedPage, RowTemplate, Tx } from "./types.ts";
import { sqliteTs } from "../sqlite-ts.ts";

const EMPTY = Buffer.alloc(0);

const SQLITE_COLUMNS = `"id", "stream", "seq", "name", "payload", "ts"`;

/** A row as SQLite returns it: the same columns, `ts` in SQLite's own text form. */
type SqliteRow = EventRow;

// What sqliteTs writes, in UTC to the millisecond: turned back into toISOString()'s form by hand,
// because a Date parse and format per row was a large share of a 10,000-event REST replay (bench/replay.ts).
// Anything else (a row another writer stored) still goes through Date.
const SQLITE_UTC_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$/;
const isoOf = (ts: string): string => (SQLITE_UTC_MS.test(ts) ? `${ts.slice(0, 23)}Z` : new Date(ts).toISOString());
const fromSqlite = (row: SqliteRow): EventRow => ({
  id: row.id,
  stream: row.stream,
  seq: row.seq,
  name: row.name,
  payload: row.payload,
  ts: isoOf(row.ts),
});

export class SqliteEventStore implements EventStore {
  readonly gate: WriteConnectionLock;
  private readonly nextSeq = new Map<string, number>();
  private readonly queue = new GroupQueue((batch) => this.flush(batch));
  private writer: Database.Database | undefined;
  private reader: Database.Database | undefined;
  private statements: ReturnType<SqliteEventStore["prepare"]> | undefined;
  private writerState: StateTx | undefined;
  private readerState: StateTx | undefined;
  private outbox: SqliteOutbox | undefined;
  private outboxRule: OutboxRule | undefined;
  readonly state: StateReads = {
    item: (id) => this.readingState((s) => s.item(id)),
    approval: (itemId, target) => this.readingState((s) => s.approval(itemId, target)),
    trust: (holder, taskType) => this.readingState((s) => s.trust(holder, taskType)),
    spunCrowTrust: (name) => this.readingState((s) => s.spunCrowTrust(name)),
    spunCrowPersona: (name) => this.readingState((s) => s.spunCrowPersona(name)),
    spunCrowNames: () => this.readingState((s) => s.spunCrowNames()),
    quarantinedCrows: () => this.readingState((s) => s.quarantinedCrows()),
    rotationCursor: (nestId, ring) => this.readingState((s) => s.rotationCursor(nestId, ring)),
    hasToolCalls: (itemId) => this.readingState((s) => s.hasToolCalls(itemId)),
  };

  /** `fileLock`: the database file's write lock shared with the webhook sender's thread (../writer-lock.ts). */
  constructor(
    private readonly file: string,
    fileLock?: WriterLock,
  ) {
    this.gate = new WriteConnectionLock(fileLock);
  }

  /** Called with Prisma's connection once the adapter opens it. */
  attach(writer: Database.Database): void {
    this.writer = writer;
    // A second connection for reads sees only committed data (WAL). An in-memory database cannot
    // be shared, so there reads take the gate instead.
    this.reader =
      this.file === ":memory:" ? undefined : new Database(this.file, { readonly: true, fileMustExist: true });
    this.statements = this.prepare(writer, this.reader ?? writer);
    this.writerState = sqliteState(writer);
    this.readerState = this.reader ? sqliteState(this.reader) : undefined;
    this.outbox = new SqliteOutbox(writer, () => this.outboxRule);
  }

  /** How many WAL pages a commit on this connection may leave before it checkpoints them (0: never; ../checkpointer.ts). */
  autocheckpoint(pages: number): void {
    // A closed connection has nothing left to checkpoint (the last close checkpointed everything).
    if (!this.writer?.open) return;
    this.writer.pragma(`wal_autocheckpoint = ${Math.max(0, Math.floor(pages))}`);
  }

  setOutbox(rule: OutboxRule): void {
    this.outboxRule = rule;
  }

  private prepare(writer: Database.Database, reader: Database.Database) {
    return {
      insert: writer
        .prepare(`INSERT INTO "Event" ("stream", "seq", "name", "payload", "ts") VALUES (?, ?, ?, ?, ?)`)
        .safeIntegers(false),
      writerLastSeq: writer
        .prepare(`SELECT COALESCE(MAX("seq"), 0) FROM "Event" WHERE "stream" = ?`)
        .pluck()
        .safeIntegers(false),
      begin: writer.prepare("BEGIN IMMEDIATE"),
      commit: writer.prepare("COMMIT"),
      rollback: writer.prepare("ROLLBACK"),
      read: reader
        .prepare(`SELECT ${SQLITE_COLUMNS} FROM "Event" WHERE "stream" = ? AND "seq" > ? ORDER BY "seq" LIMIT ?`)
        .safeIntegers(false),
      // CAST AS BLOB: better-sqlite3 hands a BLOB over as a Buffer of the stored UTF-8, no string.
      readRendered: reader
        .prepare(
          `SELECT count(*) AS "count", COALESCE(MAX("seq"), 0) AS "lastSeq", ` +
            `CAST(group_concat(? || "seq" || ? || "name" || ? || "payload" || ?, '' ORDER BY "seq") AS BLOB) AS "bytes" ` +
            `FROM (SELECT "seq", "name", "payload" FROM "Event" WHERE "stream" = ? AND "seq" > ? ORDER BY "seq" LIMIT ?)`,
        )
        .safeIntegers(false),
      readNamed: reader
        .prepare(
          `SELECT ${SQLITE_COLUMNS} FROM "Event" WHERE "name" IN (SELECT value FROM json_each(?)) AND "id" > ? ORDER BY "id" LIMIT ?`,
        )
        .safeIntegers(false),
      lastSeq: reader
        .prepare(`SELECT COALESCE(MAX("seq"), 0) FROM "Event" WHERE "stream" = ?`)
        .pluck()
        .safeIntegers(false),
      lastNamedId: reader
        .prepare(`SELECT COALESCE(MAX("id"), 0) FROM "Event" WHERE "name" IN (SELECT value FROM json_each(?))`)
        .pluck()
        .safeIntegers(false),
    };
  }

  private get sql() {
    if (!this.statements) throw new Error("The event store is not attached to a connection yet.");
    return this.statements;
  }

  append(stream: string, events: NewEvent[]): Promise<EventRow[]> {
    return this.queue.add(stream, events);
  }

  /** Inserts on the writer connection, inside whatever transaction it has open. WriteConnectionLock held. */
  private insertNow(stream: string, events: NewEvent[]): EventRow[] {
    const sql = this.sql;
    let seq = this.nextSeq.get(stream) ?? (sql.writerLastSeq.get(stream) as number);
    const rows: EventRow[] = [];
    for (const event of events) {
      seq += 1;
      const info = sql.insert.run(stream, seq, event.name, event.payload, sqliteTs(event.ts));
      rows.push({
        id: Number(info.lastInsertRowid),
        stream,
        seq,
        name: event.name,
        payload: event.payload,
        ts: event.ts.toISOString(),
      });
    }
    this.nextSeq.set(stream, seq);
    this.outbox?.fanOut(rows); // the deliveries these events cause, in the same transaction
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
        batch.forEach((p, i) => {
          p.resolve(results[i]!);
        });
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

  appendWith(prisma: PrismaClient, stream: string, build: (tx: Tx) => Promise<NewEvent[]>): Promise<EventRow[]> {
    return retryOnSeqClash(async () => {
      try {
        // The transaction holds the gate (db.ts), and the writer connection is the one Prisma's
        // transaction runs on, so the raw INSERT below is part of that transaction.
        return await prisma.$transaction(async (tx) => {
          const events = await build(tx);
          return events.length === 0 ? [] : this.insertNow(stream, events);
        });
      } catch (error) {
        this.nextSeq.delete(stream); // rolled back: the counter may be ahead of the table
        throw error;
      }
    });
  }

  nextSeqIn(_tx: Tx, stream: string): Promise<number> {
    // appendWith's transaction holds the write-connection lock: no other append moves the counter
    // before insertNow takes the same number.
    return Promise.resolve((this.nextSeq.get(stream) ?? (this.sql.writerLastSeq.get(stream) as number)) + 1);
  }

  appendState(stream: string, build: (tx: StateTx) => Promise<NewEvent[]>, fence?: Fence): Promise<EventRow[]> {
    return retryOnSeqClash(async () => {
      // The gate keeps group commits and Prisma's transactions off the connection meanwhile; the
      // state statements run on the writer connection, inside this transaction.
      const release = await this.gate.acquire();
      const sql = this.sql;
      try {
        sql.begin.run();
        if (fence) await this.writerState!.fenced(fence);
        const events = await build(this.writerState!);
        const rows = events.length === 0 ? [] : this.insertNow(stream, events);
        sql.commit.run();
        return rows;
      } catch (error) {
        if (this.writer?.inTransaction) sql.rollback.run();
        this.nextSeq.delete(stream); // rolled back (gate still held): the counter may be ahead of the table
        throw error;
      } finally {
        release();
      }
    });
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
      const page = this.sql.readRendered.get(beforeSeq, beforeName, beforePayload, after, stream, afterSeq, limit) as {
        count: number;
        lastSeq: number;
        bytes: Buffer | null;
      };
      return { count: page.count, lastSeq: page.lastSeq, bytes: page.bytes ?? EMPTY };
    });
  }

  readNamed(names: readonly string[], afterId: number, limit: number): Promise<EventRow[]> {
    return this.reading(() =>
      (this.sql.readNamed.all(JSON.stringify(names), afterId, limit) as SqliteRow[]).map(fromSqlite),
    );
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

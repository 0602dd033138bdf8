// The webhook sender's hot statements, around Prisma as the log's are (docs/architecture.md
// "Storage and migrations" says why: a Prisma query costs about a millisecond of CPU, and a
// delivery is several). SQLite: reads on a read-only connection (committed rows only), writes on
// the writer connection under the gate, so they never land inside another transaction. PostgreSQL:
// the shared pool. Management (adding endpoints, paging deliveries) stays on Prisma.
import type Database from "better-sqlite3";
import type pg from "pg";
import type { Gate } from "./gate.ts";

export interface DueDelivery {
  id: string;
  endpointId: string;
  eventId: number;
  stream: string;
  type: string;
  attempts: number;
  nextAttemptAt: Date;
}

/** One attempt and what it leads to, written in one transaction. */
export interface AttemptRecord {
  deliveryId: string;
  owner: string;
  at: Date;
  status: number | null;
  durationMs: number;
  error: string | null;
  state: "pending" | "delivered" | "failed";
  attempts: number;
  /** The next attempt (state pending). */
  nextAttemptAt: Date | null;
  endpointId: string;
  /** The endpoint's failingSince after this attempt (null: it succeeded). */
  failingSince: Date | null;
  disabledReason: string | null;
}

export interface WebhookStore {
  /** Pending deliveries due by `now` that `owner` may take (unleased, lapsed, or its own), oldest event first. */
  due(now: Date, owner: string, limit: number): Promise<DueDelivery[]>;
  /** The oldest pending event id of each endpoint and stream of `endpointIds` ("<endpoint>\0<stream>" -> id). */
  heads(endpointIds: string[]): Promise<Map<string, number>>;
  /** Leases a pending delivery to `owner` until `until` if it may take it; true when it did. */
  claim(id: string, owner: string, now: Date, until: Date): Promise<boolean>;
  /** The pending delivery after `afterEventId` of one endpoint and stream, if any. */
  next(endpointId: string, stream: string, afterEventId: number): Promise<DueDelivery | undefined>;
  /** When the next pending delivery not due by `now` falls due (null: none waits). */
  nextDueAt(now: Date): Promise<Date | null>;
  /** A stored event's payload and moment. */
  event(id: number): Promise<{ payload: string; ts: Date } | undefined>;
  record(attempt: AttemptRecord): Promise<void>;
}

const COLUMNS = `"id", "endpointId", "eventId", "stream", "type", "attempts", "nextAttemptAt"`;
type Row = Omit<DueDelivery, "nextAttemptAt"> & { nextAttemptAt: string | Date };
const rowOf = (r: Row): DueDelivery => ({ ...r, eventId: Number(r.eventId), attempts: Number(r.attempts), nextAttemptAt: new Date(r.nextAttemptAt) });

/** Prisma's better-sqlite3 adapter stores DateTime as ISO 8601 text with +00:00; the same here. */
const sqliteTs = (date: Date) => date.toISOString().replace("Z", "+00:00");

export class SqliteWebhookStore implements WebhookStore {
  private sql: ReturnType<SqliteWebhookStore["prepare"]> | undefined;

  constructor(private readonly gate: Gate) {}

  private reader: Database.Database | undefined;

  /**
   * Called with Prisma's connection (the writer) once the adapter opens; `reader` is a read-only
   * connection (none for an in-memory database, whose reads then take the gate on the writer).
   */
  attach(writer: Database.Database, reader: Database.Database | undefined): void {
    this.reader = reader;
    this.sql = this.prepare(writer, reader ?? writer);
  }

  close(): void {
    this.reader?.close();
    this.reader = undefined;
  }

  /** A read of committed rows: the read connection, or (in memory) the writer between transactions. */
  private async reading<T>(read: () => T): Promise<T> {
    return this.reader ? read() : this.writing(read);
  }

  private prepare(writer: Database.Database, reader: Database.Database) {
    const claimable = `("leaseUntil" IS NULL OR "leaseUntil" < ? OR "ownerId" = ?)`;
    return {
      due: reader.prepare(`SELECT ${COLUMNS} FROM "WebhookDelivery" WHERE "state" = 'pending' AND "nextAttemptAt" <= ? AND ${claimable} ORDER BY "eventId" LIMIT ?`),
      heads: reader.prepare(`SELECT "endpointId", "stream", MIN("eventId") AS "head" FROM "WebhookDelivery" WHERE "state" = 'pending' AND "endpointId" IN (SELECT value FROM json_each(?)) GROUP BY "endpointId", "stream"`),
      next: reader.prepare(`SELECT ${COLUMNS} FROM "WebhookDelivery" WHERE "endpointId" = ? AND "stream" = ? AND "state" = 'pending' AND "eventId" > ? ORDER BY "eventId" LIMIT 1`),
      event: reader.prepare(`SELECT "payload", "ts" FROM "Event" WHERE "id" = ?`),
      nextDueAt: reader.prepare(`SELECT MIN("nextAttemptAt") FROM "WebhookDelivery" WHERE "state" = 'pending' AND "nextAttemptAt" > ?`).pluck(),
      claim: writer.prepare(`UPDATE "WebhookDelivery" SET "ownerId" = ?, "leaseUntil" = ? WHERE "id" = ? AND "state" = 'pending' AND ${claimable}`),
      attempt: writer.prepare(`INSERT INTO "WebhookAttempt" ("deliveryId", "at", "status", "durationMs", "error") VALUES (?, ?, ?, ?, ?)`),
      delivery: writer.prepare(
        `UPDATE "WebhookDelivery" SET "state" = ?, "attempts" = ?, "nextAttemptAt" = COALESCE(?, "nextAttemptAt"), "deliveredAt" = CASE WHEN ? = 'delivered' THEN ? ELSE "deliveredAt" END, ` +
          `"lastStatus" = ?, "lastError" = ?, "ownerId" = NULL, "leaseUntil" = NULL WHERE "id" = ? AND "ownerId" = ?`,
      ),
      endpoint: writer.prepare(`UPDATE "WebhookEndpoint" SET "failingSince" = ?, "disabledAt" = COALESCE(?, "disabledAt"), "disabledReason" = COALESCE(?, "disabledReason") WHERE "id" = ?`),
      begin: writer.prepare("BEGIN IMMEDIATE"),
      commit: writer.prepare("COMMIT"),
      rollback: writer.prepare("ROLLBACK"),
      writer,
    };
  }

  private get s() {
    if (!this.sql) throw new Error("The webhook store is not attached to a connection yet.");
    return this.sql;
  }

  async due(now: Date, owner: string, limit: number): Promise<DueDelivery[]> {
    const t = sqliteTs(now);
    return this.reading(() => (this.s.due.all(t, t, owner, limit) as Row[]).map(rowOf));
  }

  async heads(endpointIds: string[]): Promise<Map<string, number>> {
    const rows = await this.reading(() => this.s.heads.all(JSON.stringify(endpointIds)) as Array<{ endpointId: string; stream: string; head: number }>);
    return new Map(rows.map((r) => [`${r.endpointId}\u0000${r.stream}`, Number(r.head)]));
  }

  async next(endpointId: string, stream: string, afterEventId: number): Promise<DueDelivery | undefined> {
    const row = await this.reading(() => this.s.next.get(endpointId, stream, afterEventId) as Row | undefined);
    return row ? rowOf(row) : undefined;
  }

  async nextDueAt(now: Date): Promise<Date | null> {
    const at = await this.reading(() => this.s.nextDueAt.get(sqliteTs(now)) as string | null);
    return at ? new Date(at) : null;
  }

  async event(id: number): Promise<{ payload: string; ts: Date } | undefined> {
    const row = await this.reading(() => this.s.event.get(id) as { payload: string; ts: string } | undefined);
    return row ? { payload: row.payload, ts: new Date(row.ts) } : undefined;
  }

  /** A write on the writer connection, between transactions (the gate). */
  private async writing<T>(write: () => T): Promise<T> {
    const release = await this.gate.acquire();
    try {
      return write();
    } finally {
      release();
    }
  }

  claim(id: string, owner: string, now: Date, until: Date): Promise<boolean> {
    return this.writing(() => this.s.claim.run(owner, sqliteTs(until), id, sqliteTs(now), owner).changes === 1);
  }

  record(a: AttemptRecord): Promise<void> {
    return this.writing(() => {
      const s = this.s;
      s.begin.run();
      try {
        const at = sqliteTs(a.at);
        s.attempt.run(a.deliveryId, at, a.status, a.durationMs, a.error);
        s.delivery.run(a.state, a.attempts, a.nextAttemptAt ? sqliteTs(a.nextAttemptAt) : null, a.state, at, a.status, a.error, a.deliveryId, a.owner);
        s.endpoint.run(a.failingSince ? sqliteTs(a.failingSince) : null, a.disabledReason ? at : null, a.disabledReason, a.endpointId);
        s.commit.run();
      } catch (error) {
        if (s.writer.inTransaction) s.rollback.run();
        throw error;
      }
    });
  }
}

const PG_COLUMNS = `"id", "endpointId", "eventId", "stream", "type", "attempts", to_char("nextAttemptAt", 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "nextAttemptAt"`;

export class PgWebhookStore implements WebhookStore {
  constructor(private readonly pool: pg.Pool) {}

  async due(now: Date, owner: string, limit: number): Promise<DueDelivery[]> {
    const { rows } = await this.pool.query<Row>({
      name: "crows-webhook-due",
      text: `SELECT ${PG_COLUMNS} FROM "WebhookDelivery" WHERE "state" = 'pending' AND "nextAttemptAt" <= $1::timestamp(3) AND ("leaseUntil" IS NULL OR "leaseUntil" < $1::timestamp(3) OR "ownerId" = $2) ORDER BY "eventId" LIMIT $3`,
      values: [now.toISOString(), owner, limit],
    });
    return rows.map(rowOf);
  }

  async heads(endpointIds: string[]): Promise<Map<string, number>> {
    const { rows } = await this.pool.query<{ endpointId: string; stream: string; head: number }>({
      name: "crows-webhook-heads",
      text: `SELECT "endpointId", "stream", MIN("eventId")::int AS "head" FROM "WebhookDelivery" WHERE "state" = 'pending' AND "endpointId" = ANY($1::text[]) GROUP BY "endpointId", "stream"`,
      values: [endpointIds],
    });
    return new Map(rows.map((r) => [`${r.endpointId}\u0000${r.stream}`, r.head]));
  }

  async next(endpointId: string, stream: string, afterEventId: number): Promise<DueDelivery | undefined> {
    const { rows } = await this.pool.query<Row>({
      name: "crows-webhook-next",
      text: `SELECT ${PG_COLUMNS} FROM "WebhookDelivery" WHERE "endpointId" = $1 AND "stream" = $2 AND "state" = 'pending' AND "eventId" > $3 ORDER BY "eventId" LIMIT 1`,
      values: [endpointId, stream, afterEventId],
    });
    return rows[0] ? rowOf(rows[0]) : undefined;
  }

  async nextDueAt(now: Date): Promise<Date | null> {
    const { rows } = await this.pool.query<{ at: string | null }>({
      name: "crows-webhook-next-due",
      text: `SELECT to_char(MIN("nextAttemptAt"), 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "at" FROM "WebhookDelivery" WHERE "state" = 'pending' AND "nextAttemptAt" > $1::timestamp(3)`,
      values: [now.toISOString()],
    });
    return rows[0]?.at ? new Date(rows[0].at) : null;
  }

  async event(id: number): Promise<{ payload: string; ts: Date } | undefined> {
    const { rows } = await this.pool.query<{ payload: string; ts: string }>({
      name: "crows-webhook-event",
      text: `SELECT "payload", to_char("ts", 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "ts" FROM "Event" WHERE "id" = $1`,
      values: [id],
    });
    return rows[0] ? { payload: rows[0].payload, ts: new Date(rows[0].ts) } : undefined;
  }

  async claim(id: string, owner: string, now: Date, until: Date): Promise<boolean> {
    const result = await this.pool.query({
      name: "crows-webhook-claim",
      text: `UPDATE "WebhookDelivery" SET "ownerId" = $1, "leaseUntil" = $2::timestamp(3) WHERE "id" = $3 AND "state" = 'pending' AND ("leaseUntil" IS NULL OR "leaseUntil" < $4::timestamp(3) OR "ownerId" = $1)`,
      values: [owner, until.toISOString(), id, now.toISOString()],
    });
    return result.rowCount === 1;
  }

  async record(a: AttemptRecord): Promise<void> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      await client.query("BEGIN");
      try {
        const at = a.at.toISOString();
        await client.query({ name: "crows-webhook-attempt", text: `INSERT INTO "WebhookAttempt" ("deliveryId", "at", "status", "durationMs", "error") VALUES ($1, $2::timestamp(3), $3, $4, $5)`, values: [a.deliveryId, at, a.status, a.durationMs, a.error] });
        await client.query({
          name: "crows-webhook-delivery",
          text:
            `UPDATE "WebhookDelivery" SET "state" = $1, "attempts" = $2, "nextAttemptAt" = COALESCE($3::timestamp(3), "nextAttemptAt"), "deliveredAt" = CASE WHEN $1 = 'delivered' THEN $4::timestamp(3) ELSE "deliveredAt" END, ` +
            `"lastStatus" = $5, "lastError" = $6, "ownerId" = NULL, "leaseUntil" = NULL WHERE "id" = $7 AND "ownerId" = $8`,
          values: [a.state, a.attempts, a.nextAttemptAt?.toISOString() ?? null, at, a.status, a.error, a.deliveryId, a.owner],
        });
        await client.query({
          name: "crows-webhook-endpoint",
          text: `UPDATE "WebhookEndpoint" SET "failingSince" = $1::timestamp(3), "disabledAt" = COALESCE($2::timestamp(3), "disabledAt"), "disabledReason" = COALESCE($3, "disabledReason") WHERE "id" = $4`,
          values: [a.failingSince?.toISOString() ?? null, a.disabledReason ? at : null, a.disabledReason, a.endpointId],
        });
        await client.query("COMMIT");
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
}

// The webhook sender's statements on SQLite: reads on a read-only connection (committed rows
// only), writes on a writer connection under a lock (the server's gate when it shares the server's
// connection; the file's writer lock when it has its own, in the sender's thread).
import type Database from "better-sqlite3";
import { SQLITE_EXPAND } from "../webhook-outbox.ts";
import {
  endpointOf,
  endpointOutcomes,
  pushEndpointOf,
  rowOf,
  type StoredPushConfig,
  type StoredEndpoint,
  type ApprovalFacts,
  type AskFacts,
  type AttemptRecord,
  type DueDelivery,
  type DueRow as Row,
  type SenderEndpoint,
  type WebhookStore,
} from "./types.ts";
import { sqliteTs } from "../sqlite-ts.ts";

/** Whoever holds it may write on the writer connection. */
export interface WriteLock {
  acquire(): Promise<() => void>;
}

const COLUMNS = `"id", "endpointId", "eventId", "stream", "type", "attempts", "nextAttemptAt"`;

export class SqliteWebhookStore implements WebhookStore {
  private sql: ReturnType<SqliteWebhookStore["prepare"]> | undefined;

  constructor(private readonly gate: WriteLock) {}

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
      due: reader.prepare(
        `SELECT ${COLUMNS} FROM "WebhookDelivery" WHERE "state" = 'pending' AND "nextAttemptAt" <= ? AND ${claimable} ORDER BY "eventId" LIMIT ?`,
      ),
      heads: reader.prepare(
        `SELECT "endpointId", "stream", MIN("eventId") AS "head" FROM "WebhookDelivery" WHERE "state" = 'pending' AND "endpointId" IN (SELECT value FROM json_each(?)) GROUP BY "endpointId", "stream"`,
      ),
      next: reader.prepare(
        `SELECT ${COLUMNS} FROM "WebhookDelivery" WHERE "endpointId" = ? AND "stream" = ? AND "state" = 'pending' AND "eventId" > ? ORDER BY "eventId" LIMIT 1`,
      ),
      endpoints: reader.prepare(
        `SELECT "id", "url", "format", "secret", "previousSecret", "previousSecretUntil", "failingSince" FROM "WebhookEndpoint" WHERE "disabledAt" IS NULL`,
      ),
      pushConfigs: reader.prepare(`SELECT "id", "url", "token", "authScheme", "authCredentials" FROM "A2aPushConfig"`),
      pushBody: reader.prepare(`SELECT "body", "createdAt" AS "ts" FROM "A2aPush" WHERE "id" = ?`),
      approval: reader.prepare(
        `SELECT i."text" AS "text", a."deadline" AS "deadline", a."status" AS "status" FROM "Approval" a JOIN "Item" i ON i."id" = a."itemId" WHERE a."itemId" = ? AND a."target" = ?`,
      ),
      ask: reader.prepare(`SELECT "kind", "approvedBy", "approvalPhrase" FROM "Message" WHERE "id" = ?`),
      outboxAny: reader.prepare(`SELECT 1 FROM "WebhookOutbox" LIMIT 1`).pluck(),
      expandUpTo: writer.prepare(SQLITE_EXPAND.upTo).pluck(),
      expandInsert: writer.prepare(SQLITE_EXPAND.insert),
      expandRemove: writer.prepare(SQLITE_EXPAND.remove),
      drop: writer.prepare(
        `UPDATE "WebhookDelivery" SET "state" = 'dropped', "ownerId" = NULL, "leaseUntil" = NULL WHERE "id" = ? AND "ownerId" = ?`,
      ),
      event: reader.prepare(`SELECT "payload", "ts" FROM "Event" WHERE "id" = ?`),
      nextDueAt: reader
        .prepare(`SELECT MIN("nextAttemptAt") FROM "WebhookDelivery" WHERE "state" = 'pending' AND "nextAttemptAt" > ?`)
        .pluck(),
      claim: writer.prepare(
        `UPDATE "WebhookDelivery" SET "ownerId" = ?, "leaseUntil" = ? WHERE "id" = ? AND "state" = 'pending' AND ${claimable}`,
      ),
      attempt: writer.prepare(
        `INSERT INTO "WebhookAttempt" ("deliveryId", "at", "status", "durationMs", "error") VALUES (?, ?, ?, ?, ?)`,
      ),
      delivery: writer.prepare(
        `UPDATE "WebhookDelivery" SET "state" = ?, "attempts" = ?, "nextAttemptAt" = COALESCE(?, "nextAttemptAt"), "deliveredAt" = CASE WHEN ? = 'delivered' THEN ? ELSE "deliveredAt" END, ` +
          `"lastStatus" = ?, "lastError" = ?, "ownerId" = NULL, "leaseUntil" = NULL WHERE "id" = ? AND "ownerId" = ?`,
      ),
      endpoint: writer.prepare(
        `UPDATE "WebhookEndpoint" SET "failingSince" = ?, "disabledAt" = COALESCE(?, "disabledAt"), "disabledReason" = COALESCE(?, "disabledReason") WHERE "id" = ?`,
      ),
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

  async endpoints(): Promise<SenderEndpoint[]> {
    const [rows, pushes] = await this.reading(() => [
      this.s.endpoints.all() as StoredEndpoint[],
      this.s.pushConfigs.all() as StoredPushConfig[],
    ]);
    return [...rows.map(endpointOf), ...pushes.map(pushEndpointOf)];
  }

  async pushBody(id: number): Promise<{ body: string; ts: Date } | undefined> {
    const row = await this.reading(() => this.s.pushBody.get(id) as { body: string; ts: string } | undefined);
    return row ? { body: row.body, ts: new Date(row.ts) } : undefined;
  }

  async approval(itemId: string, target: string): Promise<ApprovalFacts | undefined> {
    const row = await this.reading(
      () => this.s.approval.get(itemId, target) as { text: string; deadline: string; status: string } | undefined,
    );
    return row ? { text: row.text, deadline: new Date(row.deadline), pending: row.status === "pending" } : undefined;
  }

  async ask(messageId: string): Promise<AskFacts | undefined> {
    return this.reading(() => this.s.ask.get(messageId) as AskFacts | undefined);
  }

  async expand(limit: number): Promise<number> {
    // Looked at on the read connection first: an empty outbox (the usual case) takes no write lock.
    if ((await this.reading(() => this.s.outboxAny.get())) === undefined) return 0;
    return this.inTransaction((s) => {
      const upTo = s.expandUpTo.get(limit) as number | null;
      if (upTo === null) return 0;
      s.expandInsert.run(upTo);
      return s.expandRemove.run(upTo).changes;
    });
  }

  drop(id: string, owner: string): Promise<void> {
    return this.writing(() => void this.s.drop.run(id, owner));
  }

  async due(now: Date, owner: string, limit: number): Promise<DueDelivery[]> {
    const t = sqliteTs(now);
    return this.reading(() => (this.s.due.all(t, t, owner, limit) as Row[]).map(rowOf));
  }

  async heads(endpointIds: string[]): Promise<Map<string, number>> {
    const rows = await this.reading(
      () =>
        this.s.heads.all(JSON.stringify(endpointIds)) as Array<{ endpointId: string; stream: string; head: number }>,
    );
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

  claim(ids: readonly string[], owner: string, now: Date, until: Date): Promise<Set<string>> {
    const [untilTs, nowTs] = [sqliteTs(until), sqliteTs(now)];
    return this.inTransaction(
      (s) => new Set(ids.filter((id) => s.claim.run(owner, untilTs, id, nowTs, owner).changes === 1)),
    );
  }

  record(attempts: readonly AttemptRecord[]): Promise<void> {
    return this.inTransaction((s) => {
      for (const a of attempts) {
        const at = sqliteTs(a.at);
        s.attempt.run(a.deliveryId, at, a.status, a.durationMs, a.error);
        s.delivery.run(
          a.state,
          a.attempts,
          a.nextAttemptAt ? sqliteTs(a.nextAttemptAt) : null,
          a.state,
          at,
          a.status,
          a.error,
          a.deliveryId,
          a.owner,
        );
      }
      for (const e of endpointOutcomes(attempts)) {
        s.endpoint.run(
          e.failingSince ? sqliteTs(e.failingSince) : null,
          e.disabledAt ? sqliteTs(e.disabledAt) : null,
          e.disabledReason,
          e.endpointId,
        );
      }
    });
  }

  /** One write transaction on the writer connection, under the lock. */
  private inTransaction<T>(work: (s: NonNullable<SqliteWebhookStore["sql"]>) => T): Promise<T> {
    return this.writing(() => {
      const s = this.s;
      s.begin.run();
      try {
        const result = work(s);
        s.commit.run();
        return result;
      } catch (error) {
        if (s.writer.inTransaction) s.rollback.run();
        throw error;
      }
    });
  }
}

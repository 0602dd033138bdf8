// The webhook outbox: a delivery row per enabled endpoint that wants an event's type, inserted in
// the very transaction that appends the event, so a crash between the event and its send loses
// nothing (docs/webhooks.md "Durable deliveries"). Which events fan out, and as what type, is the
// rule of src/webhooks/event-types.ts, handed in (setOutbox); this file only names the columns.
import type pg from "pg";
import type Database from "better-sqlite3";

/** The webhook type a log event fans out as, or null for none. Pure: it may run again on a retry. */
export type OutboxRule = (name: string, payload: string) => string | null;

/** The webhook-id of an event's delivery to an endpoint: stable across retries and recoveries. */
export const deliveryIdOf = (eventId: number, endpointId: string): string => `msg_${eventId}_${endpointId}`;

/** The LIKE pattern an endpoint's `events` column matches for `type` (the column is ",a,b," or ""). */
export const eventsPattern = (type: string): string => `%,${type},%`;

const SQLITE_INSERT =
  `INSERT OR IGNORE INTO "WebhookDelivery" ("id", "endpointId", "eventId", "stream", "type", "state", "attempts", "nextAttemptAt", "createdAt") ` +
  `SELECT 'msg_' || CAST(? AS INTEGER) || '_' || "id", "id", ?, ?, ?, 'pending', 0, ?, ? FROM "WebhookEndpoint" ` +
  `WHERE "disabledAt" IS NULL AND ("events" = '' OR "events" LIKE ?)`;

const PG_INSERT =
  `INSERT INTO "WebhookDelivery" ("id", "endpointId", "eventId", "stream", "type", "state", "attempts", "nextAttemptAt", "createdAt") ` +
  `SELECT 'msg_' || $1::text || '_' || "id", "id", $1::int, $2, $3, 'pending', 0, $4::timestamp(3), $4::timestamp(3) FROM "WebhookEndpoint" ` +
  `WHERE "disabledAt" IS NULL AND ("events" = '' OR "events" LIKE $5) ON CONFLICT DO NOTHING`;

/** What an outbox needs of a stored event. */
export interface OutboxEvent {
  id: number;
  stream: string;
  name: string;
  payload: string;
}

/** The outbox on SQLite: one prepared statement on the writer connection, run inside its open transaction. */
export class SqliteOutbox {
  private readonly insert: Database.Statement;
  constructor(writer: Database.Database, private readonly rule: () => OutboxRule | undefined) {
    this.insert = writer.prepare(SQLITE_INSERT);
  }

  fanOut(events: readonly OutboxEvent[]): void {
    const rule = this.rule();
    if (!rule) return;
    const now = new Date().toISOString().replace("Z", "+00:00"); // as Prisma's adapter stores DateTime
    for (const event of events) {
      const type = rule(event.name, event.payload);
      if (type) this.insert.run(event.id, event.id, event.stream, type, now, now, eventsPattern(type));
    }
  }
}

/** The outbox on PostgreSQL, inside `client`'s open transaction. */
export async function pgFanOut(run: PgRun, rule: OutboxRule | undefined, events: readonly OutboxEvent[]): Promise<void> {
  if (!rule) return;
  const now = new Date().toISOString();
  for (const event of events) {
    const type = rule(event.name, event.payload);
    if (type) await run(PG_INSERT, [event.id, event.stream, type, now, eventsPattern(type)]);
  }
}

/** Runs one statement in an open transaction: a pool client's, or Prisma's interactive one. */
export type PgRun = (text: string, values: unknown[]) => Promise<unknown>;

export const clientRun = (client: Pick<pg.PoolClient, "query">): PgRun => (text, values) => client.query({ name: "crows-webhook-outbox", text, values });

/** True when some event of `events` fans out under `rule` (PostgreSQL then wraps a group commit in a transaction). */
export const anyFansOut = (rule: OutboxRule | undefined, events: ReadonlyArray<{ name: string; payload: string }>): boolean =>
  rule !== undefined && events.some((e) => rule(e.name, e.payload) !== null);

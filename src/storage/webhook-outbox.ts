// The webhook outbox: a row per event that webhooks may want, inserted in the very transaction that
// appends the event (while any endpoint is enabled), so a crash between the event and its sends
// loses nothing (docs/webhooks.md "Durable deliveries"). The sender, in its own thread, expands
// each row into a delivery per enabled endpoint that wants the type and deletes it, in one
// transaction (EXPAND_* below): the flock's transaction writes one small row per event, however
// many endpoints there are. Which events fan out, and as what type, is the rule of
// src/webhooks/event-types.ts, handed in (setOutbox); this file only names the columns.
import type pg from "pg";
import type Database from "better-sqlite3";
import { deliveryLineOf } from "../base/streams.ts";
import { sqliteTs } from "./sqlite-ts.ts";

/** The webhook type a log event fans out as, or null for none. Pure: it may run again on a retry. */
export type OutboxRule = (name: string, payload: string) => string | null;

/** The webhook-id of an event's delivery to an endpoint: stable across retries and recoveries. */
export const deliveryIdOf = (eventId: number, endpointId: string): string => `msg_${eventId}_${endpointId}`;

const SQLITE_INSERT =
  `INSERT OR IGNORE INTO "WebhookOutbox" ("eventId", "stream", "type", "createdAt") ` +
  `SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM "WebhookEndpoint" WHERE "disabledAt" IS NULL)`;

const PG_INSERT =
  `INSERT INTO "WebhookOutbox" ("eventId", "stream", "type", "createdAt") ` +
  `SELECT $1::int, $2, $3, $4::timestamp(3) WHERE EXISTS (SELECT 1 FROM "WebhookEndpoint" WHERE "disabledAt" IS NULL) ON CONFLICT DO NOTHING`;

/**
 * The expansion on SQLite, in one transaction (the sender's): the deliveries of the outbox's oldest
 * rows up to an event id, then those rows gone. A delivery is due from the moment of its event.
 */
export const SQLITE_EXPAND = {
  upTo: `SELECT MAX("eventId") FROM (SELECT "eventId" FROM "WebhookOutbox" ORDER BY "eventId" LIMIT ?)`,
  insert:
    `INSERT OR IGNORE INTO "WebhookDelivery" ("id", "endpointId", "eventId", "stream", "type", "state", "attempts", "nextAttemptAt", "createdAt") ` +
    `SELECT 'msg_' || o."eventId" || '_' || e."id", e."id", o."eventId", o."stream", o."type", 'pending', 0, o."createdAt", o."createdAt" ` +
    `FROM "WebhookOutbox" o JOIN "WebhookEndpoint" e ON e."disabledAt" IS NULL AND (e."events" = '' OR e."events" LIKE '%,' || o."type" || ',%') ` +
    `WHERE o."eventId" <= ? ORDER BY o."eventId"`,
  remove: `DELETE FROM "WebhookOutbox" WHERE "eventId" <= ?`,
};

/**
 * The expansion on PostgreSQL, one statement: rows another instance is expanding right now are
 * skipped (SKIP LOCKED), so two instances never expand one row twice or wait on each other.
 */
export const PG_EXPAND =
  `WITH taken AS (DELETE FROM "WebhookOutbox" WHERE "eventId" IN (SELECT "eventId" FROM "WebhookOutbox" ORDER BY "eventId" LIMIT $1 FOR UPDATE SKIP LOCKED) RETURNING *), ` +
  `made AS (INSERT INTO "WebhookDelivery" ("id", "endpointId", "eventId", "stream", "type", "state", "attempts", "nextAttemptAt", "createdAt") ` +
  `SELECT 'msg_' || t."eventId" || '_' || e."id", e."id", t."eventId", t."stream", t."type", 'pending', 0, t."createdAt", t."createdAt" ` +
  `FROM taken t JOIN "WebhookEndpoint" e ON e."disabledAt" IS NULL AND (e."events" = '' OR e."events" LIKE '%,' || t."type" || ',%') ON CONFLICT DO NOTHING RETURNING 1) ` +
  `SELECT (SELECT count(*) FROM taken)::int AS "taken"`;

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
  constructor(
    writer: Database.Database,
    private readonly rule: () => OutboxRule | undefined,
  ) {
    this.insert = writer.prepare(SQLITE_INSERT);
  }

  fanOut(events: readonly OutboxEvent[]): void {
    const rule = this.rule();
    if (!rule) return;
    const now = sqliteTs(new Date());
    for (const event of events) {
      const type = rule(event.name, event.payload);
      if (type) this.insert.run(event.id, deliveryLineOf(event.stream), type, now);
    }
  }
}

/** The outbox on PostgreSQL, inside `client`'s open transaction. */
export async function pgFanOut(
  run: PgRun,
  rule: OutboxRule | undefined,
  events: readonly OutboxEvent[],
): Promise<void> {
  if (!rule) return;
  const now = new Date().toISOString();
  for (const event of events) {
    const type = rule(event.name, event.payload);
    if (type) await run(PG_INSERT, [event.id, deliveryLineOf(event.stream), type, now]);
  }
}

/** Runs one statement in an open transaction: a pool client's, or Prisma's interactive one. */
export type PgRun = (text: string, values: unknown[]) => Promise<unknown>;

export const clientRun =
  (client: Pick<pg.PoolClient, "query">): PgRun =>
  (text, values) =>
    client.query({ name: "crows-webhook-outbox", text, values });

/** True when some event of `events` fans out under `rule` (PostgreSQL then wraps a group commit in a transaction). */
export const anyFansOut = (
  rule: OutboxRule | undefined,
  events: ReadonlyArray<{ name: string; payload: string }>,
): boolean => rule !== undefined && events.some((e) => rule(e.name, e.payload) !== null);

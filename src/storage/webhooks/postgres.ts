// The webhook sender's statements on PostgreSQL: a pool of its own (own-connections.ts), or the
// server's.
import type pg from "pg";
import { inPgTransaction } from "../pg-pool.ts";
import { PG_EXPAND } from "../webhook-outbox.ts";
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

const isoOf = (column: string, as = column) => `to_char(${column}, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "${as}"`;

const PG_COLUMNS = `"id", "endpointId", "eventId", "stream", "type", "attempts", to_char("nextAttemptAt", 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "nextAttemptAt"`;

export class PgWebhookStore implements WebhookStore {
  constructor(private readonly pool: pg.Pool) {}

  async endpoints(): Promise<SenderEndpoint[]> {
    const { rows } = await this.pool.query<StoredEndpoint>({
      name: "crows-webhook-endpoints",
      text: `SELECT "id", "url", "format", "secret", "previousSecret", ${isoOf('"previousSecretUntil"', "previousSecretUntil")}, ${isoOf('"failingSince"', "failingSince")} FROM "WebhookEndpoint" WHERE "disabledAt" IS NULL`,
    });
    const pushes = await this.pool.query<StoredPushConfig>({
      name: "crows-webhook-push-configs",
      text: `SELECT "id", "url", "token", "authScheme", "authCredentials" FROM "A2aPushConfig"`,
    });
    return [...rows.map(endpointOf), ...pushes.rows.map(pushEndpointOf)];
  }

  async pushBody(id: number): Promise<{ body: string; ts: Date } | undefined> {
    const { rows } = await this.pool.query<{ body: string; ts: string }>({
      name: "crows-webhook-push-body",
      text: `SELECT "body", ${isoOf('"createdAt"', "ts")} FROM "A2aPush" WHERE "id" = $1`,
      values: [id],
    });
    return rows[0] ? { body: rows[0].body, ts: new Date(rows[0].ts) } : undefined;
  }

  async approval(itemId: string, target: string): Promise<ApprovalFacts | undefined> {
    const { rows } = await this.pool.query<{ text: string; deadline: string; status: string }>({
      name: "crows-webhook-approval",
      text: `SELECT i."text", ${isoOf('a."deadline"', "deadline")}, a."status" FROM "Approval" a JOIN "Item" i ON i."id" = a."itemId" WHERE a."itemId" = $1 AND a."target" = $2`,
      values: [itemId, target],
    });
    const row = rows[0];
    return row ? { text: row.text, deadline: new Date(row.deadline), pending: row.status === "pending" } : undefined;
  }

  async ask(messageId: string): Promise<AskFacts | undefined> {
    const { rows } = await this.pool.query<AskFacts>({
      name: "crows-webhook-ask",
      text: `SELECT "kind", "approvedBy", "approvalPhrase" FROM "Message" WHERE "id" = $1`,
      values: [messageId],
    });
    return rows[0];
  }

  async expand(limit: number): Promise<number> {
    const { rows } = await this.pool.query<{ taken: number }>({
      name: "crows-webhook-expand",
      text: PG_EXPAND,
      values: [limit],
    });
    return rows[0]?.taken ?? 0;
  }

  async drop(id: string, owner: string): Promise<void> {
    await this.pool.query({
      name: "crows-webhook-drop",
      text: `UPDATE "WebhookDelivery" SET "state" = 'dropped', "ownerId" = NULL, "leaseUntil" = NULL WHERE "id" = $1 AND "ownerId" = $2`,
      values: [id, owner],
    });
  }

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

  async claim(ids: readonly string[], owner: string, now: Date, until: Date): Promise<Set<string>> {
    const { rows } = await this.pool.query<{ id: string }>({
      name: "crows-webhook-claim",
      text: `UPDATE "WebhookDelivery" SET "ownerId" = $1, "leaseUntil" = $2::timestamp(3) WHERE "id" = ANY($3::text[]) AND "state" = 'pending' AND ("leaseUntil" IS NULL OR "leaseUntil" < $4::timestamp(3) OR "ownerId" = $1) RETURNING "id"`,
      values: [owner, until.toISOString(), [...ids], now.toISOString()],
    });
    return new Set(rows.map((r) => r.id));
  }

  record(attempts: readonly AttemptRecord[]): Promise<void> {
    return inPgTransaction(this.pool, async (client) => {
      for (const a of attempts) {
        const at = a.at.toISOString();
        await client.query({
          name: "crows-webhook-attempt",
          text: `INSERT INTO "WebhookAttempt" ("deliveryId", "at", "status", "durationMs", "error") VALUES ($1, $2::timestamp(3), $3, $4, $5)`,
          values: [a.deliveryId, at, a.status, a.durationMs, a.error],
        });
        await client.query({
          name: "crows-webhook-delivery",
          text:
            `UPDATE "WebhookDelivery" SET "state" = $1, "attempts" = $2, "nextAttemptAt" = COALESCE($3::timestamp(3), "nextAttemptAt"), "deliveredAt" = CASE WHEN $1 = 'delivered' THEN $4::timestamp(3) ELSE "deliveredAt" END, ` +
            `"lastStatus" = $5, "lastError" = $6, "ownerId" = NULL, "leaseUntil" = NULL WHERE "id" = $7 AND "ownerId" = $8`,
          values: [
            a.state,
            a.attempts,
            a.nextAttemptAt?.toISOString() ?? null,
            at,
            a.status,
            a.error,
            a.deliveryId,
            a.owner,
          ],
        });
      }
      for (const e of endpointOutcomes(attempts)) {
        await client.query({
          name: "crows-webhook-endpoint",
          text: `UPDATE "WebhookEndpoint" SET "failingSince" = $1::timestamp(3), "disabledAt" = COALESCE($2::timestamp(3), "disabledAt"), "disabledReason" = COALESCE($3, "disabledReason") WHERE "id" = $4`,
          values: [
            e.failingSince?.toISOString() ?? null,
            e.disabledAt?.toISOString() ?? null,
            e.disabledReason,
            e.endpointId,
          ],
        });
      }
    });
  }
}

// Webhook endpoints and their deliveries as the owner manages them (docs/webhooks.md "Managing
// endpoints"): add (the secret shown this once), list (never a secret), remove, rotate the secret
// (the old one still signs for the grace), page through deliveries, redeliver one, recover a range
// from the log. Every surface (REST, GraphQL, the CLI through REST) calls these.
import { randomBytes } from "node:crypto";
import type { PrismaClient } from "../generated/prisma/client.ts";
import type { WebhookConfig } from "../base/webhook-config.ts";
import { BadInputError, NotFoundError } from "../base/errors.ts";
import { deliveryIdOf } from "../storage/webhook-outbox.ts";
import type { DeliveryState } from "../storage/webhooks/types.ts";
import { deliveryLineOf } from "../base/streams.ts";
import { isWebhookType, SOURCE_EVENT_NAMES, webhookTypeOf, WEBHOOK_TYPES, type WebhookType } from "./event-types.ts";
import { newSecret } from "./signature.ts";
import { checkTarget } from "./targets.ts";
import { isWebhookFormat, WEBHOOK_FORMATS, type WebhookFormat } from "./formats.ts";

export const MAX_ENDPOINTS = 50;
const MAX_DESCRIPTION = 200;
const MAX_PAGE = 100;
/** Events one recover call reads from the log at most (the answer says where to go on from). */
export const RECOVER_BATCH = 5000;

/** An endpoint as every surface shows it: no secret, ever. */
export interface EndpointView {
  id: string;
  url: string;
  events: WebhookType[];
  description: string;
  created_at: string;
  disabled: boolean;
  disabled_reason: string | null;
  failing_since: string | null;
  /** The body's shape (formats.ts): standard unless the owner asked for slack, discord or ntfy. */
  format: WebhookFormat;
}

export interface AttemptView {
  at: string;
  status: number | null;
  duration_ms: number;
  error: string | null;
}

export interface DeliveryView {
  id: string;
  event_id: number;
  type: string;
  state: DeliveryState;
  attempts: AttemptView[];
  next_attempt_at: string | null;
  delivered_at: string | null;
}

type EndpointRow = Awaited<ReturnType<PrismaClient["webhookEndpoint"]["findUniqueOrThrow"]>>;

/** The `events` column: ",a,b," for a filter, "" for every type. */
const eventsColumn = (events: readonly string[]) => (events.length === 0 ? "" : `,${events.join(",")},`);
const eventsOf = (column: string) => column.split(",").filter(isWebhookType);

export function viewOf(row: EndpointRow): EndpointView {
  return {
    id: row.id,
    url: row.url,
    events: eventsOf(row.events),
    description: row.description,
    created_at: row.createdAt.toISOString(),
    disabled: row.disabledAt !== null,
    disabled_reason: row.disabledReason,
    failing_since: row.failingSince?.toISOString() ?? null,
    format: isWebhookFormat(row.format) ? row.format : "standard",
  };
}

/** The names of log events any webhook type comes from: what a recover reads. */

function parseEvents(raw: unknown): WebhookType[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw) || raw.some((e) => !isWebhookType(e))) {
    throw new BadInputError(
      `"events" must be a list of event types from: ${WEBHOOK_TYPES.join(", ")} (missing or empty: all).`,
    );
  }
  return [...new Set(raw as WebhookType[])];
}

export class Endpoints {
  /** Called after an endpoint is added, removed or rotated: this process's sender drops its copy. */
  changed: () => void = () => {};

  constructor(
    private readonly prisma: PrismaClient,
    private readonly config: WebhookConfig,
    private readonly now: () => number = Date.now,
  ) {}

  async add(input: {
    url: unknown;
    events?: unknown;
    description?: unknown;
    format?: unknown;
  }): Promise<EndpointView & { secret: string }> {
    const format = input.format ?? "standard";
    if (!isWebhookFormat(format))
      throw new BadInputError(`"format" must be one of ${WEBHOOK_FORMATS.join(", ")}; leave it out for standard.`);
    const url = checkTarget(input.url, this.config.allowPrivate);
    const events = parseEvents(input.events);
    const description = input.description ?? "";
    if (typeof description !== "string" || description.length > MAX_DESCRIPTION)
      throw new BadInputError(`"description" must be text of at most ${MAX_DESCRIPTION} characters.`);
    if ((await this.prisma.webhookEndpoint.count()) >= MAX_ENDPOINTS)
      throw new BadInputError(`At most ${MAX_ENDPOINTS} webhook endpoints; remove one first.`);
    const secret = newSecret();
    const row = await this.prisma.webhookEndpoint.create({
      data: {
        id: `ep_${randomBytes(9).toString("base64url")}`,
        url: url.href,
        events: eventsColumn(events),
        description,
        secret,
        format,
      },
    });
    this.changed();
    return { ...viewOf(row), secret };
  }

  async list(): Promise<EndpointView[]> {
    return (await this.prisma.webhookEndpoint.findMany({ orderBy: { createdAt: "asc" } })).map(viewOf);
  }

  private async find(id: string): Promise<EndpointRow> {
    const row = await this.prisma.webhookEndpoint.findUnique({ where: { id } });
    if (!row) throw new NotFoundError(`No webhook endpoint ${id}.`);
    return row;
  }

  /** Removes the endpoint and its deliveries (a send in flight finds it gone and stops). */
  async remove(id: string): Promise<void> {
    await this.find(id);
    await this.prisma.$transaction(async (tx) => {
      const ids = (await tx.webhookDelivery.findMany({ where: { endpointId: id }, select: { id: true } })).map(
        (d) => d.id,
      );
      for (let i = 0; i < ids.length; i += 500)
        await tx.webhookAttempt.deleteMany({ where: { deliveryId: { in: ids.slice(i, i + 500) } } });
      await tx.webhookDelivery.deleteMany({ where: { endpointId: id } });
      await tx.webhookEndpoint.delete({ where: { id } });
    });
    this.changed();
  }

  /** A new secret; the current one keeps signing until the grace ends. */
  async rotate(id: string): Promise<EndpointView & { secret: string; previous_secret_expires_at: string }> {
    const row = await this.find(id);
    const secret = newSecret();
    const until = new Date(this.now() + this.config.rotationGraceMs);
    const updated = await this.prisma.webhookEndpoint.update({
      where: { id },
      data: { secret, previousSecret: row.secret, previousSecretUntil: until },
    });
    this.changed(); // a delivery signed from here on carries both secrets
    return { ...viewOf(updated), secret, previous_secret_expires_at: until.toISOString() };
  }

  /** Deliveries by event id, oldest first, after `cursor` (an event id). */
  async deliveries(
    id: string,
    cursor: unknown,
    limit: unknown,
  ): Promise<{ deliveries: DeliveryView[]; next_cursor: string | null }> {
    await this.find(id);
    const after = cursor === undefined || cursor === null || cursor === "" ? 0 : Number(cursor);
    if (!Number.isInteger(after) || after < 0)
      throw new BadInputError('"cursor" must be the next_cursor of an earlier page.');
    const take = limit === undefined || limit === null || limit === "" ? 50 : Number(limit);
    if (!Number.isInteger(take) || take < 1 || take > MAX_PAGE)
      throw new BadInputError(`"limit" must be a whole number from 1 to ${MAX_PAGE}.`);
    const rows = await this.prisma.webhookDelivery.findMany({
      where: { endpointId: id, eventId: { gt: after } },
      orderBy: { eventId: "asc" },
      take: take + 1,
    });
    const page = rows.slice(0, take);
    const attempts = await this.prisma.webhookAttempt.findMany({
      where: { deliveryId: { in: page.map((r) => r.id) } },
      orderBy: { id: "asc" },
    });
    const byDelivery = new Map<string, AttemptView[]>();
    for (const a of attempts) {
      const list = byDelivery.get(a.deliveryId) ?? [];
      list.push({ at: a.at.toISOString(), status: a.status, duration_ms: a.durationMs, error: a.error });
      byDelivery.set(a.deliveryId, list);
    }
    return {
      deliveries: page.map((r) => ({
        id: r.id,
        event_id: r.eventId,
        type: r.type,
        state: r.state as DeliveryState,
        attempts: byDelivery.get(r.id) ?? [],
        next_attempt_at: r.state === "pending" ? r.nextAttemptAt.toISOString() : null,
        delivered_at: r.deliveredAt?.toISOString() ?? null,
      })),
      next_cursor: rows.length > take ? String(page[page.length - 1]!.eventId) : null,
    };
  }

  /** Sends one delivery again: same webhook-id, the current secret(s), a fresh schedule. */
  async redeliver(id: string, deliveryId: string): Promise<void> {
    await this.find(id);
    const moved = await this.prisma.webhookDelivery.updateMany({
      where: { id: deliveryId, endpointId: id },
      data: { state: "pending", attempts: 0, nextAttemptAt: new Date(this.now()), ownerId: null, leaseUntil: null },
    });
    if (moved.count === 0) throw new NotFoundError(`No delivery ${deliveryId} for webhook endpoint ${id}.`);
  }

  /**
   * Queues again every event after `since_event_id` the endpoint wants, read back from the log
   * (same webhook-ids as the first time), up to RECOVER_BATCH events of the log a call.
   */
  async recover(id: string, since: unknown): Promise<{ queued: number; last_event_id: number; more: boolean }> {
    const endpoint = await this.find(id);
    if (typeof since !== "number" || !Number.isInteger(since) || since < 0)
      throw new BadInputError('"since_event_id" must be a whole number, 0 or more (the log\'s event id).');
    const wanted = new Set(eventsOf(endpoint.events));
    const events = await this.prisma.event.findMany({
      where: { id: { gt: since }, name: { in: [...SOURCE_EVENT_NAMES] } },
      orderBy: { id: "asc" },
      take: RECOVER_BATCH,
    });
    const now = new Date(this.now());
    let queued = 0;
    for (const event of events) {
      const type = webhookTypeOf(event.name, event.payload);
      if (!type || (wanted.size > 0 && !wanted.has(type))) continue;
      const deliveryId = deliveryIdOf(event.id, id);
      await this.prisma.webhookDelivery.upsert({
        where: { id: deliveryId },
        create: {
          id: deliveryId,
          endpointId: id,
          eventId: event.id,
          stream: deliveryLineOf(event.stream),
          type,
          nextAttemptAt: now,
        },
        update: { state: "pending", attempts: 0, nextAttemptAt: now, ownerId: null, leaseUntil: null },
      });
      queued += 1;
    }
    return {
      queued,
      last_event_id: events.length > 0 ? events[events.length - 1]!.id : since,
      more: events.length === RECOVER_BATCH,
    };
  }
}

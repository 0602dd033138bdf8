// Webhooks in GraphQL, the same as REST's /api/webhooks (docs/webhooks.md): endpoints (never a
// secret, except once in what adds or rotates one), deliveries by page, and the mutations. Every
// field asks requireAdmin first (src/webhooks/admin.ts: the admin scope), as the REST routes do.
import { builder, principalOfContext, type Context } from "./builder.ts";
import { WebhookDeliveryState } from "./enums.ts";
import { BadInputError, ForbiddenError, NotFoundError } from "../src/base/errors.ts";
import { requireAdmin } from "../src/webhooks/admin.ts";
import type { AttemptView, DeliveryView, EndpointView } from "../src/webhooks/endpoints.ts";

const admin = (ctx: Context) => requireAdmin(principalOfContext(ctx));

const WebhookEndpoint = builder.objectRef<EndpointView>("WebhookEndpoint").implement({
  description: "A receiver of signed webhook deliveries. Its secret is shown only when it is added or rotated.",
  fields: (t) => ({
    id: t.exposeID("id"),
    url: t.exposeString("url"),
    events: t.exposeStringList("events", { description: "The event types it gets; empty: every type." }),
    description: t.exposeString("description"),
    createdAt: t.expose("created_at", { type: "DateTime" }),
    disabled: t.exposeBoolean("disabled"),
    disabledReason: t.exposeString("disabled_reason", {
      nullable: true,
      description: "Why it stopped getting deliveries (410 Gone, failing for too long).",
    }),
    failingSince: t.expose("failing_since", { type: "DateTime", nullable: true }),
    format: t.exposeString("format", {
      description:
        'The body\'s shape: standard (Standard Webhooks JSON), slack, discord or ntfy (docs/webhooks.md "Formats").',
    }),
  }),
});

const WebhookSecret = builder
  .objectRef<{ endpoint: EndpointView; secret: string; previousSecretExpiresAt: string | null }>("WebhookSecret")
  .implement({
    description: "An endpoint with its new secret (whsec_...), shown this once.",
    fields: (t) => ({
      endpoint: t.field({ type: WebhookEndpoint, resolve: (s) => s.endpoint }),
      secret: t.exposeString("secret"),
      previousSecretExpiresAt: t.expose("previousSecretExpiresAt", {
        type: "DateTime",
        nullable: true,
        description: "Until when the previous secret still signs (after a rotation).",
      }),
    }),
  });

const WebhookAttempt = builder.objectRef<AttemptView>("WebhookAttempt").implement({
  fields: (t) => ({
    at: t.expose("at", { type: "DateTime" }),
    status: t.exposeInt("status", { nullable: true, description: "The HTTP status; null when no answer came." }),
    durationMs: t.exposeInt("duration_ms"),
    error: t.exposeString("error", { nullable: true }),
  }),
});

const WebhookDelivery = builder.objectRef<DeliveryView>("WebhookDelivery").implement({
  description: "One event's delivery to one endpoint; `id` is the webhook-id, the same on every retry.",
  fields: (t) => ({
    id: t.exposeID("id"),
    eventId: t.exposeInt("event_id"),
    type: t.exposeString("type"),
    state: t.field({ type: WebhookDeliveryState, resolve: (d) => d.state }),
    attempts: t.field({ type: [WebhookAttempt], resolve: (d) => d.attempts }),
    nextAttemptAt: t.expose("next_attempt_at", { type: "DateTime", nullable: true }),
    deliveredAt: t.expose("delivered_at", { type: "DateTime", nullable: true }),
  }),
});

const WebhookDeliveryPage = builder
  .objectRef<{ deliveries: DeliveryView[]; next_cursor: string | null }>("WebhookDeliveryPage")
  .implement({
    fields: (t) => ({
      deliveries: t.field({ type: [WebhookDelivery], resolve: (p) => p.deliveries }),
      nextCursor: t.exposeString("next_cursor", { nullable: true }),
    }),
  });

const WebhookRecovery = builder
  .objectRef<{ queued: number; last_event_id: number; more: boolean }>("WebhookRecovery")
  .implement({
    fields: (t) => ({
      queued: t.exposeInt("queued"),
      lastEventId: t.exposeInt("last_event_id", { description: "Recover again from here when `more` is true." }),
      more: t.exposeBoolean("more"),
    }),
  });

const refusals = () => ({ types: [BadInputError, NotFoundError, ForbiddenError], directResult: true as const });
/** For fields that answer a scalar: the success is wrapped ({ data }) beside the refusals. */
const wrappedRefusals = () => ({ types: [BadInputError, NotFoundError, ForbiddenError] });

builder.queryFields((t) => ({
  webhooks: t.field({
    authScopes: { admin: true },
    type: [WebhookEndpoint],
    description: "Every webhook endpoint, oldest first (REST: GET /api/webhooks). The owner only.",
    errors: { types: [ForbiddenError] },
    resolve: (_root, _args, ctx) => (admin(ctx), ctx.app.webhooks.endpoints.list()),
  }),
  webhookDeliveries: t.field({
    authScopes: { admin: true },
    type: WebhookDeliveryPage,
    description: "An endpoint's deliveries by event id (REST: GET /api/webhooks/{id}/deliveries).",
    args: { id: t.arg.id({ required: true }), cursor: t.arg.string(), limit: t.arg.int() },
    errors: refusals(),
    resolve: (_root, args, ctx) => (
      admin(ctx),
      ctx.app.webhooks.endpoints.deliveries(String(args.id), args.cursor ?? undefined, args.limit ?? undefined)
    ),
  }),
}));

builder.mutationFields((t) => ({
  addWebhook: t.field({
    authScopes: { admin: true },
    type: WebhookSecret,
    description: "Adds an endpoint (REST: POST /api/webhooks); the secret is in this answer only.",
    args: {
      url: t.arg.string({ required: true }),
      events: t.arg.stringList(),
      description: t.arg.string(),
      format: t.arg.string({ description: "standard (default), slack, discord or ntfy." }),
    },
    errors: refusals(),
    resolve: async (_root, args, ctx) => {
      admin(ctx);
      const { secret, ...endpoint } = await ctx.app.webhooks.endpoints.add({
        url: args.url,
        events: args.events ?? undefined,
        description: args.description ?? undefined,
        format: args.format ?? undefined,
      });
      return { endpoint, secret, previousSecretExpiresAt: null };
    },
  }),
  removeWebhook: t.field({
    authScopes: { admin: true },
    type: "Boolean",
    description: "Removes an endpoint and its deliveries (REST: DELETE /api/webhooks/{id}).",
    args: { id: t.arg.id({ required: true }) },
    errors: wrappedRefusals(),
    resolve: async (_root, args, ctx) => (admin(ctx), await ctx.app.webhooks.endpoints.remove(String(args.id)), true),
  }),
  rotateWebhookSecret: t.field({
    authScopes: { admin: true },
    type: WebhookSecret,
    description: "A new secret; the previous one still signs until previousSecretExpiresAt.",
    args: { id: t.arg.id({ required: true }) },
    errors: refusals(),
    resolve: async (_root, args, ctx) => {
      admin(ctx);
      const { secret, previous_secret_expires_at, ...endpoint } = await ctx.app.webhooks.endpoints.rotate(
        String(args.id),
      );
      return { endpoint, secret, previousSecretExpiresAt: previous_secret_expires_at };
    },
  }),
  redeliverWebhook: t.field({
    authScopes: { admin: true },
    type: "Boolean",
    description: "Sends one delivery again, same webhook-id, current secret.",
    args: { id: t.arg.id({ required: true }), deliveryId: t.arg.id({ required: true }) },
    errors: wrappedRefusals(),
    resolve: async (_root, args, ctx) => {
      admin(ctx);
      await ctx.app.webhooks.endpoints.redeliver(String(args.id), String(args.deliveryId));
      ctx.app.webhooks.sender.wake();
      return true;
    },
  }),
  recoverWebhook: t.field({
    authScopes: { admin: true },
    type: WebhookRecovery,
    description: "Queues again every wanted event after sinceEventId, read from the log (same webhook-ids).",
    args: { id: t.arg.id({ required: true }), sinceEventId: t.arg.int({ required: true }) },
    errors: refusals(),
    resolve: async (_root, args, ctx) => {
      admin(ctx);
      const recovered = await ctx.app.webhooks.endpoints.recover(String(args.id), args.sinceEventId);
      ctx.app.webhooks.sender.wake();
      return recovered;
    },
  }),
}));

// The webhook management API (docs/webhooks.md "Managing endpoints"), for a holder of the admin
// scope (each record says so; the access gate asks it): add, list, remove, rotate the secret, page
// deliveries, redeliver, recover. The endpoint store checks the bodies and the delivery page's
// query (src/webhooks/endpoints.ts), after it has found the endpoint: an unknown one is a 404 first.
import { z } from "zod";
import { WEBHOOK_TYPES } from "../src/webhooks/event-types.ts";
import { WEBHOOK_FORMATS } from "../src/webhooks/formats.ts";
import { ref, type Schema } from "./openapi/types.ts";
import { described } from "./query-params.ts";
import { answer, bare, refused } from "./responses.ts";
import { bodyObject, defineRoute } from "./route.ts";

const WebhookInput = z.object({
  url: z
    .string()
    .meta({ format: "uri" })
    .describe(
      "https off loopback; loopback and private addresses only with CROWS_WEBHOOK_ALLOW_PRIVATE=1; link-local and unspecified never.",
    ),
  events: z.array(z.enum(WEBHOOK_TYPES)).describe("The types to send; missing or empty: every type.").optional(),
  description: z.string().max(200).optional(),
  format: z
    .enum(WEBHOOK_FORMATS)
    .describe("The body's shape: standard (default), slack, discord or ntfy; the signing headers go with each.")
    .optional(),
});

const Endpoint = z.object({ id: z.string().describe("The endpoint's id.") });
const admin = refused("The token lacks the admin scope (named in the answer).");
const noEndpoint = refused("No such webhook endpoint.");
const object = (properties: Record<string, Schema>): Schema => ({
  type: "object",
  required: Object.keys(properties),
  properties,
});

export const webhookRoutes = [
  defineRoute({
    method: "POST",
    path: "/api/webhooks",
    scope: "admin",
    operationId: "addWebhook",
    summary: "Add an endpoint; its signing secret is in this answer only",
    tags: ["webhooks"],
    engineBody: { schema: WebhookInput, name: "WebhookInput" },
    responses: {
      "201": answer("The endpoint, with its secret.", ref("CreatedWebhookEndpoint")),
      "400": refused(
        "A refused URL (named why), an unknown event type, a description too long, or 50 endpoints already.",
      ),
      "403": admin,
    },
    async handle(app, _input, request) {
      const body = await bodyObject(request);
      return {
        status: 201,
        json: await app.webhooks.endpoints.add({
          url: body.url,
          events: body.events,
          description: body.description,
          format: body.format,
        }),
      };
    },
  }),
  defineRoute({
    method: "GET",
    path: "/api/webhooks",
    scope: "admin",
    operationId: "listWebhooks",
    summary: "Every endpoint (never a secret)",
    tags: ["webhooks"],
    responses: {
      "200": answer(
        "The endpoints, oldest first.",
        object({ webhooks: { type: "array", items: ref("WebhookEndpoint") } }),
      ),
      "403": admin,
    },
    async handle(app) {
      return { status: 200, json: { webhooks: await app.webhooks.endpoints.list() } };
    },
  }),
  defineRoute({
    method: "DELETE",
    path: "/api/webhooks/{id}",
    scope: "admin",
    operationId: "removeWebhook",
    summary: "Remove an endpoint and its deliveries",
    tags: ["webhooks"],
    params: Endpoint,
    responses: { "204": bare("Removed."), "403": admin, "404": noEndpoint },
    async handle(app, { params }) {
      await app.webhooks.endpoints.remove(params.id);
      return { status: 204 };
    },
  }),
  defineRoute({
    method: "POST",
    path: "/api/webhooks/{id}/rotate-secret",
    scope: "admin",
    operationId: "rotateWebhookSecret",
    summary: "A new secret; the old one still signs for the grace period (both signatures are sent)",
    tags: ["webhooks"],
    params: Endpoint,
    responses: {
      "200": answer("The endpoint, with its new secret.", ref("RotatedWebhookEndpoint")),
      "403": admin,
      "404": noEndpoint,
    },
    async handle(app, { params }) {
      return { status: 200, json: await app.webhooks.endpoints.rotate(params.id) };
    },
  }),
  defineRoute({
    method: "GET",
    path: "/api/webhooks/{id}/deliveries",
    scope: "admin",
    operationId: "listWebhookDeliveries",
    summary: "An endpoint's deliveries by event id, oldest first, with every attempt",
    tags: ["webhooks"],
    params: Endpoint,
    handlerQuery: {
      cursor: described(z.string(), "The previous page's next_cursor."),
      limit: described(z.int().min(1).max(100), "Page size, default 50."),
    },
    responses: {
      "200": answer(
        "A page.",
        object({
          deliveries: { type: "array", items: ref("WebhookDelivery") },
          next_cursor: { type: ["string", "null"] },
        }),
      ),
      "400": refused("A bad cursor or limit."),
      "403": admin,
      "404": noEndpoint,
    },
    async handle(app, { params }, request) {
      const { query } = request;
      return {
        status: 200,
        json: await app.webhooks.endpoints.deliveries(
          params.id,
          query.get("cursor") ?? undefined,
          query.get("limit") ?? undefined,
        ),
      };
    },
  }),
  defineRoute({
    method: "POST",
    path: "/api/webhooks/{id}/deliveries/{delivery_id}/redeliver",
    scope: "admin",
    operationId: "redeliverWebhook",
    summary: "Send one delivery again now: the same webhook-id, the current secret(s), a fresh schedule",
    tags: ["webhooks"],
    params: Endpoint.extend({ delivery_id: z.string() }),
    responses: {
      "202": answer("Queued.", object({ id: { type: "string" } })),
      "403": admin,
      "404": refused("No such endpoint, or no such delivery of it."),
    },
    async handle(app, { params }) {
      await app.webhooks.endpoints.redeliver(params.id, params.delivery_id);
      app.webhooks.sender.wake();
      return { status: 202, json: { id: params.delivery_id } };
    },
  }),
  defineRoute({
    method: "POST",
    path: "/api/webhooks/{id}/recover",
    scope: "admin",
    operationId: "recoverWebhook",
    summary:
      "Queue again every event after since_event_id the endpoint wants, read from the log (5,000 log events a call)",
    tags: ["webhooks"],
    params: Endpoint,
    engineBody: { schema: z.object({ since_event_id: z.int().min(0) }) },
    responses: {
      "202": answer(
        "Queued; when more is true, call again from last_event_id.",
        object({ queued: { type: "integer" }, last_event_id: { type: "integer" }, more: { type: "boolean" } }),
      ),
      "400": refused("since_event_id is not a whole number, 0 or more."),
      "403": admin,
      "404": noEndpoint,
    },
    async handle(app, { params }, request) {
      const body = await bodyObject(request);
      const recovered = await app.webhooks.endpoints.recover(params.id, body.since_event_id);
      app.webhooks.sender.wake();
      return { status: 202, json: recovered };
    },
  }),
];

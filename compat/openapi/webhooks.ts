// /api/webhooks and below: managing webhook endpoints and their deliveries (docs/webhooks.md
// "Managing endpoints"), for a holder of the admin scope. The routes are src/server/webhooks/routes.ts.
import { WEBHOOK_TYPES } from "../../src/webhooks/event-types.ts";
import { body, json, query, ref, refusal, type Paths } from "./types.ts";
import { DELIVERY_STATES } from "../../src/storage/webhooks/types.ts";

const str = { type: "string" } as const;
const at = { type: "string", format: "date-time" } as const;
const eventTypes = {
  type: "array",
  items: { type: "string", enum: [...WEBHOOK_TYPES] },
  description: "The types it receives; empty: every type.",
};
const secret = { type: "string", pattern: "^whsec_", description: "whsec_<base64>: shown in this answer only." };

const endpointProperties = {
  id: str,
  url: { type: "string", format: "uri" },
  events: eventTypes,
  description: str,
  created_at: at,
  disabled: { type: "boolean" },
  disabled_reason: { type: ["string", "null"], description: "Why it stopped: a 410, or failing for days." },
  failing_since: { type: ["string", "null"], format: "date-time" },
};

export const webhookSchemas = {
  WebhookInput: {
    type: "object",
    required: ["url"],
    properties: {
      url: {
        type: "string",
        format: "uri",
        description:
          "https off loopback; loopback and private addresses only with CROWS_WEBHOOK_ALLOW_PRIVATE=1; link-local and unspecified never.",
      },
      events: { ...eventTypes, description: "The types to send; missing or empty: every type." },
      description: { type: "string", maxLength: 200 },
    },
  },
  WebhookEndpoint: {
    type: "object",
    required: Object.keys(endpointProperties),
    properties: endpointProperties,
    description: "An endpoint as every surface shows it: never its secret.",
  },
  CreatedWebhookEndpoint: {
    type: "object",
    required: [...Object.keys(endpointProperties), "secret"],
    properties: { ...endpointProperties, secret },
  },
  RotatedWebhookEndpoint: {
    type: "object",
    required: [...Object.keys(endpointProperties), "secret", "previous_secret_expires_at"],
    properties: {
      ...endpointProperties,
      secret,
      previous_secret_expires_at: { ...at, description: "Until then the old secret signs too." },
    },
  },
  WebhookDelivery: {
    type: "object",
    required: ["id", "event_id", "type", "state", "attempts", "next_attempt_at", "delivered_at"],
    properties: {
      id: { type: "string", description: "The webhook-id: msg_<event id>_<endpoint id>." },
      event_id: { type: "integer", description: "The log's event id." },
      type: { type: "string", enum: [...WEBHOOK_TYPES] },
      state: { type: "string", enum: [...DELIVERY_STATES] },
      attempts: {
        type: "array",
        items: {
          type: "object",
          required: ["at", "status", "duration_ms", "error"],
          properties: {
            at,
            status: { type: ["integer", "null"], description: "None when no answer came." },
            duration_ms: { type: "integer" },
            error: { type: ["string", "null"], description: "A short excerpt, never a secret." },
          },
        },
      },
      next_attempt_at: { type: ["string", "null"], format: "date-time" },
      delivered_at: { type: ["string", "null"], format: "date-time" },
    },
  },
};

const id = { name: "id", in: "path", required: true, description: "The endpoint's id.", schema: str };
const admin = refusal("The token lacks the admin scope (named in the answer).");
const noEndpoint = refusal("No such webhook endpoint.");

export const webhookPaths: Paths = {
  "/api/webhooks": {
    post: {
      operationId: "addWebhook",
      summary: "Add an endpoint; its signing secret is in this answer only",
      tags: ["webhooks"],
      requestBody: body(ref("WebhookInput")),
      responses: {
        "201": json("The endpoint, with its secret.", ref("CreatedWebhookEndpoint")),
        "400": refusal(
          "A refused URL (named why), an unknown event type, a description too long, or 50 endpoints already.",
        ),
        "403": admin,
      },
    },
    get: {
      operationId: "listWebhooks",
      summary: "Every endpoint (never a secret)",
      tags: ["webhooks"],
      responses: {
        "200": json("The endpoints, oldest first.", {
          type: "object",
          required: ["webhooks"],
          properties: { webhooks: { type: "array", items: ref("WebhookEndpoint") } },
        }),
        "403": admin,
      },
    },
  },
  "/api/webhooks/{id}": {
    delete: {
      operationId: "removeWebhook",
      summary: "Remove an endpoint and its deliveries",
      tags: ["webhooks"],
      parameters: [id],
      responses: { "204": { description: "Removed." }, "403": admin, "404": noEndpoint },
    },
  },
  "/api/webhooks/{id}/rotate-secret": {
    post: {
      operationId: "rotateWebhookSecret",
      summary: "A new secret; the old one still signs for the grace period (both signatures are sent)",
      tags: ["webhooks"],
      parameters: [id],
      responses: {
        "200": json("The endpoint, with its new secret.", ref("RotatedWebhookEndpoint")),
        "403": admin,
        "404": noEndpoint,
      },
    },
  },
  "/api/webhooks/{id}/deliveries": {
    get: {
      operationId: "listWebhookDeliveries",
      summary: "An endpoint's deliveries by event id, oldest first, with every attempt",
      tags: ["webhooks"],
      parameters: [
        id,
        query("cursor", "The previous page's next_cursor.", str),
        query("limit", "Page size, default 50.", { type: "integer", minimum: 1, maximum: 100 }),
      ],
      responses: {
        "200": json("A page.", {
          type: "object",
          required: ["deliveries", "next_cursor"],
          properties: {
            deliveries: { type: "array", items: ref("WebhookDelivery") },
            next_cursor: { type: ["string", "null"] },
          },
        }),
        "400": refusal("A bad cursor or limit."),
        "403": admin,
        "404": noEndpoint,
      },
    },
  },
  "/api/webhooks/{id}/deliveries/{delivery_id}/redeliver": {
    post: {
      operationId: "redeliverWebhook",
      summary: "Send one delivery again now: the same webhook-id, the current secret(s), a fresh schedule",
      tags: ["webhooks"],
      parameters: [id, { name: "delivery_id", in: "path", required: true, schema: str }],
      responses: {
        "202": json("Queued.", { type: "object", required: ["id"], properties: { id: str } }),
        "403": admin,
        "404": refusal("No such endpoint, or no such delivery of it."),
      },
    },
  },
  "/api/webhooks/{id}/recover": {
    post: {
      operationId: "recoverWebhook",
      summary:
        "Queue again every event after since_event_id the endpoint wants, read from the log (5,000 log events a call)",
      tags: ["webhooks"],
      parameters: [id],
      requestBody: body({
        type: "object",
        required: ["since_event_id"],
        properties: { since_event_id: { type: "integer", minimum: 0 } },
      }),
      responses: {
        "202": json("Queued; when more is true, call again from last_event_id.", {
          type: "object",
          required: ["queued", "last_event_id", "more"],
          properties: { queued: { type: "integer" }, last_event_id: { type: "integer" }, more: { type: "boolean" } },
        }),
        "400": refusal("since_event_id is not a whole number, 0 or more."),
        "403": admin,
        "404": noEndpoint,
      },
    },
  },
};

// The shapes of webhook endpoints and their deliveries (docs/webhooks.md "Managing endpoints"),
// named once; the routes are compat/webhooks.ts.
import { WEBHOOK_TYPES } from "../../src/webhooks/event-types.ts";
import { DELIVERY_STATES } from "../../src/storage/webhooks/types.ts";
import { WEBHOOK_FORMATS } from "../../src/webhooks/formats.ts";

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

/** Added after the fields above (issue 33): always present in answers, listed apart so old clients' `required` stays as it was. */
const format = {
  type: "string",
  enum: [...WEBHOOK_FORMATS],
  description:
    'The body\'s shape: standard (Standard Webhooks JSON), slack, discord or ntfy (docs/webhooks.md "Formats").',
};

export const webhookSchemas = {
  WebhookEndpoint: {
    type: "object",
    required: Object.keys(endpointProperties),
    properties: { ...endpointProperties, format },
    description: "An endpoint as every surface shows it: never its secret.",
  },
  CreatedWebhookEndpoint: {
    type: "object",
    required: [...Object.keys(endpointProperties), "secret"],
    properties: { ...endpointProperties, format, secret },
  },
  RotatedWebhookEndpoint: {
    type: "object",
    required: [...Object.keys(endpointProperties), "secret", "previous_secret_expires_at"],
    properties: {
      ...endpointProperties,
      format,
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

// The deliveries crows POSTs to an endpoint, one per event type (OpenAPI 3.1's top-level webhooks):
// the Standard Webhooks headers and the {type, timestamp, data} body (docs/webhooks.md "A delivery"
// and "Event types"; the types are src/webhooks/event-types.ts, and a type missing here fails the
// typecheck).
import { WEBHOOK_TYPES, type WebhookType } from "../../src/webhooks/event-types.ts";
import type { PathItem, Schema } from "./types.ts";
import { TARGETS } from "../../src/flock/events.ts";

const str = { type: "string" } as const;
const at = { type: "string", format: "date-time" } as const;
const url = { type: "string", format: "uri", description: "A decide link: GET shows it, POST decides." } as const;

interface Described {
  summary: string;
  /** What `data` adds to the log event's own payload. */
  adds: Record<string, Schema>;
}

const EVENTS: Record<WebhookType, Described> = {
  "approval.requested": {
    summary: "A triage or an answer waits on the owner (item.triaged / item.answered with needs_approval)",
    adds: {
      list: str,
      item: str,
      text: { ...str, description: "The item's text." },
      target: { type: "string", enum: [...TARGETS] },
      proposal: { type: "object", description: "triage: mode, task_type, subtasks, reason; output: answer, crows." },
      deadline: at,
      approve_url: url,
      reject_url: url,
    },
  },
  "approval.decided": {
    summary: "A verdict other than auto: approved, rejected or timeout, with its actor when the event has one",
    adds: {
      verdict: { type: "string", enum: ["approved", "rejected", "timeout"] },
      actor: { $ref: "#/components/schemas/Actor" },
      reason: { type: "string", description: "The reason given with the verdict; absent when none was." },
    },
  },
  "approval.reminder": {
    summary:
      "A pending approval's window nears its end (the log's approval.reminder: item_id, target, round, deadline), at most once per round and only while it still waits",
    adds: {
      list: str,
      item: str,
      text: { ...str, description: "The item's text." },
      approve_url: url,
      reject_url: url,
    },
  },
  "list.finished": { summary: "A list finished (the log's list.finished)", adds: {} },
  "item.skipped": { summary: "An item was skipped (the log's item.skipped)", adds: {} },
  "ask.opened": {
    summary: "A crow asks the owner in a nest (an ask_owner message)",
    adds: {
      approval_phrase: str,
      deadline: at,
      approve_url: { ...url, description: "Posts the approval phrase as the owner's reply." },
    },
  },
  "ask.resolved": {
    summary:
      "An ask was resolved: the owner's reply approved it (verdict approved), or its window ended unanswered (the log's ask.expired, verdict timeout)",
    adds: {
      ask_id: str,
      approval_phrase: str,
      verdict: {
        type: "string",
        enum: ["approved", "timeout"],
        description:
          "An ask has no explicit no: anything but the phrase leaves it open until its window ends, which is a timeout.",
      },
      resolved: {
        type: "string",
        enum: ["approved", "rejected"],
        description: "The ask's resolved from now on: approved, or rejected on a timeout.",
      },
      deadline: { ...at, description: "On a timeout: the moment the window ended (ask.opened's deadline)." },
      actor: { $ref: "#/components/schemas/Actor" },
      reason: { type: "string", description: "The owner's reason with the reply; absent when none was given." },
    },
  },
  "crow.flagged": {
    summary: "The Sentry flagged a crow, which is quarantined (its reinstate ask follows as ask.opened)",
    adds: {},
  },
  "trust.changed": { summary: "A trust level changed (the log's trust.changed)", adds: {} },
  "tool_call.requested": {
    summary:
      "A crow's tool call waits on the owner (the log's tool.asked: call_id, server, tool, a summary of its args, deadline); its whole arguments are at GET /api/tool-calls and on its links' pages",
    adds: { approve_url: url, reject_url: url },
  },
  "tool_call.decided": {
    summary: "A tool call's one decision (the log's tool.decided): approved, refused (with a reason) or timeout",
    adds: {},
  },
};

const header = (name: string, description: string, pattern: string) => ({
  name,
  in: "header",
  required: true,
  description,
  schema: { type: "string", pattern },
});

const HEADERS = [
  header(
    "webhook-id",
    "msg_<the log's event id>_<endpoint id>: the same on every retry, redelivery and recovery; dedupe on it.",
    "^msg_[0-9]+_.+$",
  ),
  header("webhook-timestamp", "The send's Unix seconds.", "^[0-9]+$"),
  header(
    "webhook-signature",
    'v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>"> under the secret; during a rotation\'s grace, two, space-separated.',
    "^v1,[A-Za-z0-9+/=]+( v1,[A-Za-z0-9+/=]+)*$",
  ),
];

const operationId = (type: string) => type.replace(/\.(\w)/g, (_, c: string) => c.toUpperCase());

function delivery(type: WebhookType, { summary, adds }: Described): PathItem {
  const body: Schema = {
    type: "object",
    required: ["type", "timestamp", "data"],
    properties: {
      type: { type: "string", const: type },
      timestamp: { ...at, description: "The event's moment (webhook-timestamp is the send's)." },
      data: {
        type: "object",
        description: "The log event's own payload (docs/contract.md), plus what the type adds.",
        properties: adds,
        additionalProperties: true,
      },
    },
  };
  return {
    post: {
      operationId: operationId(type),
      summary,
      tags: ["webhooks"],
      security: [],
      parameters: HEADERS,
      requestBody: { required: true, content: { "application/json": { schema: body } } },
      responses: {
        "2XX": { description: "Delivered." },
        "410": { description: "Gone: the endpoint is disabled at once, and nothing more is sent to it." },
        default: {
          description:
            "A failure (as is no answer within the timeout): retried on the schedule, honouring Retry-After.",
        },
      },
    },
  };
}

/** The document's top-level webhooks: one POST per type the code sends. */
export const webhookEvents: Record<string, PathItem> = Object.fromEntries(
  WEBHOOK_TYPES.map((type) => [type, delivery(type, EVENTS[type])]),
);

// GET /api/audit: the audit trail (the events that carry an actor), newest first.
import { json, query, ref, refusal, type Paths } from "./types.ts";
import { ACTOR_KINDS } from "../../src/base/actor.ts";

export const auditSchemas = {
  AuditEntry: {
    type: "object",
    required: ["id", "stream", "seq", "kind", "ts", "actor", "payload"],
    properties: {
      id: { type: "integer", description: "The log's global id." },
      stream: { type: "string" },
      seq: { type: "integer" },
      kind: { type: "string", description: "The event's name." },
      ts: { type: "string", format: "date-time" },
      actor: ref("Actor"),
      payload: { type: "object" },
    },
  },
};

export const auditPaths: Paths = {
  "/api/audit": {
    get: {
      operationId: "getAudit",
      summary: "The audit trail from the durable log, newest first, a page at a time",
      tags: ["audit"],
      parameters: [
        query("before", "Entries below this id: the previous page's next_cursor.", { type: "integer", minimum: 0 }),
        query("limit", "Page size, default 50.", { type: "integer", minimum: 1, maximum: 500 }),
        query("actor_kind", "Only this kind of actor.", { type: "string", enum: [...ACTOR_KINDS] }),
        query("token_id", "Only this token's.", { type: "string" }),
        query("kind", "Only these event names (repeated or comma-separated).", { type: "string" }),
        query("since", "From this time (inclusive).", { type: "string", format: "date-time" }),
        query("until", "Up to this time (inclusive).", { type: "string", format: "date-time" }),
      ],
      responses: {
        "200": json("A page.", {
          type: "object",
          required: ["entries", "next_cursor"],
          properties: {
            entries: { type: "array", items: ref("AuditEntry") },
            next_cursor: { type: ["integer", "null"] },
          },
        }),
        "400": refusal("A bad parameter, named."),
      },
    },
  },
};

// GET /api/audit: the audit trail (src/access/audit.ts) as JSON, newest first. Query: before (a
// next_cursor), limit (1-500, default 50), actor_kind (owner, token, system, link), token_id,
// kind (event names, repeated or comma-separated), since and until (RFC 3339). Needs read.
import { z } from "zod";
import { auditEntries, auditQueryOf } from "../src/access/audit.ts";
import { ACTOR_KINDS } from "../src/base/actor.ts";
import { ref } from "./openapi/types.ts";
import { described } from "./query-params.ts";
import { answer, refused } from "./responses.ts";
import { defineRoute } from "./route.ts";

const at = z.string().meta({ format: "date-time" });

export const auditRoutes = [
  defineRoute({
    method: "GET",
    path: "/api/audit",
    scope: "read",
    operationId: "getAudit",
    summary: "The audit trail from the durable log, newest first, a page at a time",
    tags: ["audit"],
    // The audit trail reads and checks its own query (auditQueryOf, auditEntries), with its words.
    handlerQuery: {
      before: described(z.int().min(0), "Entries below this id: the previous page's next_cursor."),
      limit: described(z.int().min(1).max(500), "Page size, default 50."),
      actor_kind: described(z.enum(ACTOR_KINDS), "Only this kind of actor."),
      token_id: described(z.string(), "Only this token's."),
      kind: described(z.string(), "Only these event names (repeated or comma-separated)."),
      since: described(at, "From this time (inclusive)."),
      until: described(at, "Up to this time (inclusive)."),
    },
    responses: {
      "200": answer("A page.", {
        type: "object",
        required: ["entries", "next_cursor"],
        properties: {
          entries: { type: "array", items: ref("AuditEntry") },
          next_cursor: { type: ["integer", "null"] },
        },
      }),
      "400": refused("A bad parameter, named."),
    },
    async handle(app, _input, request) {
      return { status: 200, json: await auditEntries(app.prisma, auditQueryOf(request.query)) };
    },
  }),
];

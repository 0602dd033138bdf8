// GET /api/audit: the audit trail (src/access/audit.ts) as JSON, newest first. Query: before (a
// next_cursor), limit (1-500, default 50), actor_kind (owner, token, system, link), token_id,
// kind (event names, repeated or comma-separated), since and until (RFC 3339). Needs read.
import type { Route } from "./router.ts";
import { auditEntries, auditQueryOf } from "../src/access/audit.ts";

export const auditRoutes: Route[] = [
  {
    method: "GET",
    path: "/api/audit",
    async handle(app, request) {
      return { status: 200, json: await auditEntries(app.prisma, auditQueryOf(request.query)) };
    },
  },
];

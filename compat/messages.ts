// GET/POST /api/nests/{nest_id}/messages (EVENTS.md "Nest messages", HTTP API). The rules live in
// the posting path (src/nests/chat.ts); refusals leave through the one error handler: 404
// unknown nest, 400 {"message"}, 403 {"message"} for a quarantined crow, 429 {"message","cooldown_s"}.
import type { Route } from "./router.ts";
import { bodyObject } from "./router.ts";
import { requirePostScope } from "../src/access/post-scope.ts";

export const messageRoutes: Route[] = [
  {
    method: "GET",
    path: "/api/nests/{nest_id}/messages",
    async handle(app, request) {
      const records = await app.chat.list(request.params.nest_id ?? "");
      return { status: 200, json: records };
    },
  },
  {
    method: "POST",
    path: "/api/nests/{nest_id}/messages",
    async handle(app, request) {
      const nestId = request.params.nest_id ?? "";
      await app.chat.requireNest(nestId); // an unknown nest is a 404 before the body is judged
      const body = await bodyObject(request);
      await requirePostScope(app.prisma, request.principal, nestId, { author: body.author, refers_to: body.refers_to });
      const record = await app.chat.post(nestId, {
        author: body.author,
        text: body.text,
        to: body.to,
        kind: body.kind,
        refers_to: body.refers_to,
        approval_phrase: body.approval_phrase,
        mode: body.mode,
        invited: body.invited,
        actor: request.principal.actor,
      });
      return { status: 201, json: record };
    },
  },
];

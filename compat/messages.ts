// GET/POST /api/nests/{nest_id}/messages (EVENTS.md "Nest messages", HTTP API); GET also pages:
// ?limit=N gives the newest N, &before=<msg_id> the N before it, still in msg_id order. The rules live in
// the posting path (src/nests/chat.ts); refusals leave through the one error handler: 404
// unknown nest, 400 {"message"}, 403 {"message"} for a quarantined crow, 429 {"message","cooldown_s"}.
import type { Route } from "./router.ts";
import { bodyObject } from "./router.ts";
import { requirePostScope } from "../src/access/post-scope.ts";
import { HttpError } from "../src/http/http-error.ts";
import { intParam, textParam } from "./query-params.ts";
import { MAX_PAGE } from "../src/base/util/clamp.ts";
import { msgIdPrefix, msgNumberText } from "../src/base/streams.ts";

/** The page size when only `before` is given. */
const DEFAULT_PAGE = 50;

/** `before` as a message number: a msg_id of this nest (todo-12) or its number (12). */
function beforeNumber(nestId: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const text = msgNumberText(nestId, raw);
  const n = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n) || n < 1)
    throw new HttpError(400, `before must be a msg_id of this nest (${msgIdPrefix(nestId)}<n>).`);
  return n;
}

export const messageRoutes: Route[] = [
  {
    method: "GET",
    path: "/api/nests/{nest_id}/messages",
    async handle(app, request) {
      const nestId = request.params.nest_id ?? "";
      const limit = intParam(request.query, "limit", 1, MAX_PAGE);
      const before = beforeNumber(nestId, textParam(request.query, "before"));
      // Bare, the contract's answer: every record. Either parameter makes it a page of the newest.
      if (limit === undefined && before === undefined) return { status: 200, json: await app.chat.list(nestId) };
      return { status: 200, json: await app.chat.newest(nestId, limit ?? DEFAULT_PAGE, before) };
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

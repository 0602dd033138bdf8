// GET/POST /api/nests/{nest_id}/messages (docs/contract.md "Nest messages", HTTP API); GET also pages:
// ?limit=N gives the newest N, &before=<msg_id> the N before it, still in msg_id order. The rules live in
// the posting path (src/nests/chat.ts); refusals leave through the one error handler: 404
// unknown nest, 400 {"message"}, 403 {"message"} for a quarantined crow, 429 {"message","cooldown_s"}.
import { z } from "zod";
import { requirePostScope } from "../src/access/post-scope.ts";
import { HttpError } from "../src/http/http-error.ts";
import { intQuery, textQuery } from "./query-params.ts";
import { MAX_PAGE } from "../src/base/util/clamp.ts";
import { msgIdPrefix, msgNumberText } from "../src/base/streams.ts";
import { ref } from "./openapi/types.ts";
import { answer, refused } from "./responses.ts";
import { bodyObject, defineRoute } from "./route.ts";

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

const NestPath = z.object({
  nest_id: z.string().describe("The nest's id (a slug of its name; todo is the default nest)."),
});

/** Documented here; the posting path checks it (src/nests/post-input.ts), after the nest and the scope. */
const MessageInput = z.object({
  author: z.string(),
  text: z.string(),
  to: z.string().optional(),
  kind: z.string().describe("A crow's kind header.").optional(),
  refers_to: z.string().optional(),
  approval_phrase: z.string().optional(),
  mode: z.string().optional(),
  invited: z.int().optional(),
  reason: z
    .string()
    .max(1000)
    .describe("The owner's reason with a reply to an ask (at most 1,000 characters); refused on any other message.")
    .optional(),
});

export const messageRoutes = [
  defineRoute({
    method: "GET",
    path: "/api/nests/{nest_id}/messages",
    scope: "read",
    operationId: "getNestMessages",
    summary: "A nest's message records in msg_id order: every one, or a page of the newest",
    tags: ["nests"],
    params: NestPath,
    query: {
      limit: intQuery("limit", 1, MAX_PAGE, "Only the newest N (still in msg_id order)."),
      before: textQuery("before", "Only those before this msg_id (or its number); alone, pages 50."),
    },
    responses: {
      "200": answer("The records, with resolved as of the read.", { type: "array", items: ref("MessageRecord") }),
      "400": refused("A bad limit or before."),
      "404": refused("An unknown nest."),
    },
    async handle(app, { params, query }) {
      const nestId = params.nest_id;
      const limit = query.limit;
      const before = beforeNumber(nestId, query.before);
      // Bare, the contract's answer: every record. Either parameter makes it a page of the newest.
      if (limit === undefined && before === undefined) return { status: 200, json: await app.chat.list(nestId) };
      return { status: 200, json: await app.chat.newest(nestId, limit ?? DEFAULT_PAGE, before) };
    },
  }),
  defineRoute({
    method: "POST",
    path: "/api/nests/{nest_id}/messages",
    // write, or decide for the owner's reply to an ask (requirePostScope tells once it has the body)
    scope: "post",
    operationId: "postNestMessage",
    summary: "Post a message",
    tags: ["nests"],
    params: NestPath,
    engineBody: { schema: MessageInput, name: "MessageInput" },
    responses: {
      "201": answer("The stored record (server-assigned kind, tagged_by, msg_id).", ref("MessageRecord")),
      "400": refused("Bad input."),
      "403": refused("The crow author is quarantined."),
      "404": refused("An unknown nest."),
      "429": answer("The poster is rate-limited.", ref("RateLimited")),
    },
    async handle(app, { params }, request) {
      const nestId = params.nest_id;
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
        reason: body.reason,
        actor: request.principal.actor,
      });
      return { status: 201, json: record };
    },
  }),
];

// POST /api/lists: {"text", "requester", "nest_id"?} -> 202 {"list_id"}; 400 {"message"} for bad
// input; 404 {"message"} for an unknown nest; 429 {"message","cooldown_s"} when pranked.
import { z } from "zod";
import { NEST_ID_BLANK, REQUESTER_REQUIRED, TEXT_NOT_STRING } from "../src/flock/refusals.ts";
import { ref } from "./openapi/types.ts";
import { answer, refused } from "./responses.ts";
import { defineRoute, engineCheck } from "./route.ts";
import { parseRequester, parseTodoText } from "../src/flock/todo-text.ts";

// The engine's own checks run here too (parseTodoText, parseRequester), so every refusal keeps its
// words and its order: the text first, then the requester, then the nest.
const ListInput = z.object({
  text: z.string(TEXT_NOT_STRING).superRefine(engineCheck(parseTodoText)).describe("The todo list, one item a line."),
  requester: z.string(REQUESTER_REQUIRED).superRefine(engineCheck(parseRequester)),
  // null is absent, as it always was.
  nest_id: z
    .preprocess(
      (value) => value ?? undefined,
      z
        .string(NEST_ID_BLANK)
        .refine((id) => id.trim() !== "", NEST_ID_BLANK)
        .optional(),
    )
    .describe("The nest to work it in; default todo."),
});

export const listRoutes = [
  defineRoute({
    method: "POST",
    path: "/api/lists",
    scope: "write",
    operationId: "postList",
    summary: "Hand a todo list to the flock",
    tags: ["lists"],
    body: { schema: ListInput, name: "ListInput" },
    responses: {
      "202": answer("Accepted: follow it on /api/events?list_id=.", ref("ListAccepted")),
      "400": refused("A bad body."),
      "404": refused("An unknown nest."),
      "429": answer("The requester is pranked: a cooldown.", ref("RateLimited")),
    },
    async handle(app, { body }, request) {
      const keep = request.idempotency;
      const { listId } = await app.flock.submitList({
        text: body.text,
        requester: body.requester,
        nestId: body.nest_id,
        actor: request.principal.actor,
        signal: request.signal,
        ...(keep ? { alsoWrite: (tx, id) => keep.recordIn(tx, { status: 202, body: { list_id: id } }) } : {}),
      });
      return { status: 202, json: { list_id: listId } };
    },
  }),
];

// POST /api/verdicts: {"item_id", "target": "triage"|"output", "approve": bool} -> 204; 404 when
// nothing is waiting (including a second answer); 400 for a bad body (approve is required, so a
// missing value is never read as a no).
import { z } from "zod";
import { TARGETS } from "../src/flock/events.ts";
import { APPROVE_REQUIRED, ITEM_ID_REQUIRED, TARGET_INVALID } from "../src/flock/refusals.ts";
import { bare, refused } from "./responses.ts";
import { defineRoute } from "./route.ts";

const VerdictInput = z.object({
  item_id: z.string(ITEM_ID_REQUIRED).refine((id) => id.trim() !== "", ITEM_ID_REQUIRED),
  target: z.enum(TARGETS, TARGET_INVALID),
  approve: z.boolean(APPROVE_REQUIRED),
});

export const verdictRoutes = [
  defineRoute({
    method: "POST",
    path: "/api/verdicts",
    scope: "decide",
    operationId: "postVerdict",
    summary: "The owner's answer to a pending approval",
    tags: ["lists"],
    body: { schema: VerdictInput, name: "VerdictInput" },
    responses: {
      "204": bare("Recorded."),
      "400": refused("A bad body (approve is required)."),
      "404": refused("Nothing is waiting (a second answer too)."),
    },
    async handle(app, { body }, request) {
      await app.flock.postVerdict({
        itemId: body.item_id,
        target: body.target,
        approve: body.approve,
        actor: request.principal.actor,
      });
      return { status: 204 };
    },
  }),
];

// POST /api/verdicts: {"item_id", "target": "triage"|"output", "approve": bool, "reason"?, "rework"?, "edit"?} -> 204; 404 when
// nothing is waiting (including a second answer); 400 for a bad body (approve is required, so a
// missing value is never read as a no).
import { z } from "zod";
import { TARGETS } from "../src/flock/events.ts";
import {
  APPROVE_REQUIRED,
  EDIT_NOT_OBJECT,
  ITEM_ID_REQUIRED,
  REASON_NOT_TEXT,
  REWORK_NOT_BOOLEAN,
  TARGET_INVALID,
} from "../src/flock/refusals.ts";
import { MAX_REASON_CHARS } from "../src/flock/reason.ts";
import { bare, refused } from "./responses.ts";
import { defineRoute } from "./route.ts";

const VerdictInput = z.object({
  item_id: z.string(ITEM_ID_REQUIRED).refine((id) => id.trim() !== "", ITEM_ID_REQUIRED),
  target: z.enum(TARGETS, TARGET_INVALID),
  approve: z.boolean(APPROVE_REQUIRED),
  // The owner's word (docs/rules.md "Reasons", "Rework", "Edits"): types here, the rest in the engine.
  reason: z
    .string(REASON_NOT_TEXT)
    .nullish()
    .describe(
      `Why, in the owner's words: optional, at most ${MAX_REASON_CHARS.toLocaleString("en-US")} characters after trimming (longer: 400).`,
    ),
  rework: z
    .boolean(REWORK_NOT_BOOLEAN)
    .nullish()
    .describe("With a rejection only: send the item back for another try, tries and budget permitting."),
  edit: z
    .record(z.string(), z.unknown(), EDIT_NOT_OBJECT)
    .nullish()
    .describe(
      'With an approval only: a triage\'s {"mode", "task_type", "subtasks"} (any of them) or an output\'s {"answer"}; the work follows the edit.',
    ),
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
        reason: body.reason,
        rework: body.rework,
        edit: body.edit,
        actor: request.principal.actor,
      });
      return { status: 204 };
    },
  }),
];

// POST /api/lists/{list_id}/cancel -> 202 {"list_id", "cancelled_at"}: the list is cancelling, and
// its stream shows the rest (docs/rules.md "Cancelling a list"). Asked again while it winds down,
// the same answer; 409 once it has finished (cancelled or not); 404 for an unknown list.
import { z } from "zod";
import { answer, refused } from "./responses.ts";
import { defineRoute } from "./route.ts";

const Cancelling = z.object({
  list_id: z.string(),
  cancelled_at: z.string().meta({ format: "date-time" }).describe("When the first cancel was recorded."),
});

export const cancelRoutes = [
  defineRoute({
    method: "POST",
    path: "/api/lists/{list_id}/cancel",
    scope: "write",
    operationId: "cancelList",
    summary: "Cancel a running list: what waits is skipped, flights in the air land, approvals waiting are rejected",
    description:
      "Needs write. The list's stream ends with list.finished carrying cancelled: true and the canceller's actor. Asked again before it finishes, the same 202.",
    tags: ["lists"],
    params: z.object({ list_id: z.string() }),
    responses: {
      "202": answer("Cancelling: follow the rest on /api/events?list_id=.", Cancelling),
      "404": refused("An unknown list."),
      "409": refused("The list has finished (ran to its end, or was cancelled before): nothing to cancel."),
    },
    async handle(app, { params }, request) {
      const { listId, cancelledAt } = await app.flock.cancelList({
        listId: params.list_id,
        actor: request.principal.actor,
      });
      return { status: 202, json: { list_id: listId, cancelled_at: cancelledAt.toISOString() } };
    },
  }),
];

// POST /api/lists/{list_id}/cancel -> 202 {"list_id", "cancelled_at"}: the list is cancelling, and
// its stream shows the rest (docs/rules.md "Cancelling a list"). Asked again while it winds down,
// the same answer; 409 once it has finished (cancelled or not); 404 for an unknown list.
import type { Route } from "./router.ts";

export const cancelRoutes: Route[] = [
  {
    method: "POST",
    path: "/api/lists/{list_id}/cancel",
    async handle(app, request) {
      const { listId, cancelledAt } = await app.flock.cancelList({
        listId: request.params.list_id,
        actor: request.principal.actor,
      });
      return { status: 202, json: { list_id: listId, cancelled_at: cancelledAt.toISOString() } };
    },
  },
];

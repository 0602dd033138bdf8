// POST /api/verdicts: {"item_id", "target": "triage"|"output", "approve": bool, "reason"?, "rework"?, "edit"?} -> 204; 404 when
// nothing is waiting (including a second answer); 400 for a bad body (approve is required, so a
// missing value is never read as a no).
import { bodyObject, type Route } from "./router.ts";

export const verdictRoutes: Route[] = [
  {
    method: "POST",
    path: "/api/verdicts",
    async handle(app, request) {
      const body = await bodyObject(request);
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
  },
];

// POST /api/lists: {"text", "requester", "nest_id"?} -> 202 {"list_id"}; 400 {"message"} for bad
// input; 404 {"message"} for an unknown nest; 429 {"message","cooldown_s"} when pranked.
import { bodyObject, type Route } from "./router.ts";

export const listRoutes: Route[] = [
  {
    method: "POST",
    path: "/api/lists",
    async handle(app, request) {
      const body = await bodyObject(request);
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
  },
];

// Named tokens over REST, for a holder of the admin scope (the access gate checks it: 403 naming
// it otherwise). POST /api/tokens {"name", "scopes": [...], "expires_in_s"?} -> 201 with the
// secret, shown this once; GET /api/tokens -> {"tokens": [...]} (never a secret); DELETE
// /api/tokens/{id} -> 204 (404 for an unknown id). A token never grants a scope it does not hold.
import { bodyObject, type Route } from "./router.ts";

export const tokenRoutes: Route[] = [
  {
    method: "POST",
    path: "/api/tokens",
    async handle(app, request) {
      const body = await bodyObject(request);
      const created = await app.tokens.create(
        { name: body.name, scopes: body.scopes, expiresInS: body.expires_in_s },
        request.principal.actor,
        request.principal.scopes,
      );
      const { id, name, scopes, secret, prefix, created_at, expires_at } = created;
      return {
        status: 201,
        json: { id, name, scopes, secret, prefix, created_at, expires_at },
        headers: { "cache-control": "no-store" },
      };
    },
  },
  {
    method: "GET",
    path: "/api/tokens",
    async handle(app) {
      return { status: 200, json: { tokens: await app.tokens.list() } };
    },
  },
  {
    method: "DELETE",
    path: "/api/tokens/{token_id}",
    async handle(app, request) {
      await app.tokens.revoke(request.params.token_id, request.principal.actor);
      return { status: 204 };
    },
  },
];

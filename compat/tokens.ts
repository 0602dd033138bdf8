// Named tokens over REST, for a holder of the admin scope (the access gate checks it: 403 naming
// it otherwise). POST /api/tokens {"name", "scopes": [...], "expires_in_s"?} -> 201 with the
// secret, shown this once; GET /api/tokens -> {"tokens": [...]} (never a secret); DELETE
// /api/tokens/{id} -> 204 (404 for an unknown id). A token never grants a scope it does not hold.
import { z } from "zod";
import { SCOPES } from "../src/access/scopes.ts";
import { ref } from "./openapi/types.ts";
import { answer, bare, refused } from "./responses.ts";
import { checkExpires, checkName, checkScopes } from "../src/access/token-store.ts";
import { defineRoute, judgedBy } from "./route.ts";

/** Judged by the token store's own checks (src/access/token-store.ts), with their words and in their order. */
const TokenInput = z.object({
  name: judgedBy(checkName, z.string()),
  scopes: judgedBy(checkScopes, z.array(z.enum(SCOPES)).min(1)),
  expires_in_s: judgedBy(checkExpires, z.int().min(1).optional()),
});

export const tokenRoutes = [
  defineRoute({
    method: "POST",
    path: "/api/tokens",
    scope: "admin",
    operationId: "createToken",
    summary: "Mint a named token (admin scope); the secret is in this answer only",
    tags: ["tokens"],
    body: { schema: TokenInput, name: "TokenInput" },
    responses: {
      "201": answer("The token, with its secret.", ref("CreatedToken")),
      "400": refused("A bad name, scope list or lifetime, or a scope the caller does not hold."),
    },
    async handle(app, { body }, request) {
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
  }),
  defineRoute({
    method: "GET",
    path: "/api/tokens",
    scope: "admin",
    operationId: "listTokens",
    summary: "Every named token (never a secret)",
    tags: ["tokens"],
    responses: {
      "200": answer("The tokens.", {
        type: "object",
        required: ["tokens"],
        properties: { tokens: { type: "array", items: ref("Token") } },
      }),
    },
    async handle(app) {
      return { status: 200, json: { tokens: await app.tokens.list() } };
    },
  }),
  defineRoute({
    method: "DELETE",
    path: "/api/tokens/{token_id}",
    scope: "admin",
    operationId: "revokeToken",
    summary: "Revoke a named token: it stops working at once, streams included",
    tags: ["tokens"],
    params: z.object({ token_id: z.string() }),
    responses: { "204": bare("Revoked."), "404": refused("No such token.") },
    async handle(app, { params }, request) {
      await app.tokens.revoke(params.token_id, request.principal.actor);
      return { status: 204 };
    },
  }),
];

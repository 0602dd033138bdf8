// POST/GET /api/tokens and DELETE /api/tokens/{token_id}: named tokens, for the admin scope.
import { body, json, ref, refusal, type Paths } from "./types.ts";
import { ACTOR_KINDS } from "../../src/base/actor.ts";
import { SCOPES } from "../../src/access/scopes.ts";

export const tokenSchemas = {
  Actor: {
    type: "object",
    required: ["kind"],
    description: "Who caused a write: owner, a named token, the system, or a link.",
    properties: {
      kind: { type: "string", enum: [...ACTOR_KINDS] },
      token_id: { type: "string" },
      token_name: { type: "string" },
      webhook_id: { type: "string" },
    },
  },
  Token: {
    type: "object",
    required: ["id", "name", "prefix", "scopes", "created_at", "expires_at", "last_used_at", "revoked_at"],
    properties: {
      id: { type: "string" },
      name: { type: "string" },
      prefix: { type: "string", description: "The secret's first characters, to tell tokens apart." },
      scopes: { type: "array", items: { type: "string", enum: [...SCOPES] } },
      created_at: { type: "string", format: "date-time" },
      expires_at: { type: ["string", "null"], format: "date-time" },
      last_used_at: { type: ["string", "null"], format: "date-time" },
      revoked_at: { type: ["string", "null"], format: "date-time" },
    },
  },
  CreatedToken: {
    type: "object",
    required: ["id", "name", "scopes", "secret", "prefix", "created_at", "expires_at"],
    properties: {
      id: { type: "string" },
      name: { type: "string" },
      scopes: { type: "array", items: { type: "string" } },
      secret: { type: "string", description: "Shown this once; only its digest is kept." },
      prefix: { type: "string" },
      created_at: { type: "string", format: "date-time" },
      expires_at: { type: ["string", "null"], format: "date-time" },
    },
  },
  TokenInput: {
    type: "object",
    required: ["name", "scopes"],
    properties: {
      name: { type: "string" },
      scopes: { type: "array", minItems: 1, items: { type: "string", enum: [...SCOPES] } },
      expires_in_s: { type: "integer", minimum: 1 },
    },
  },
};

export const tokenPaths: Paths = {
  "/api/tokens": {
    post: {
      operationId: "createToken",
      summary: "Mint a named token (admin scope); the secret is in this answer only",
      tags: ["tokens"],
      requestBody: body(ref("TokenInput")),
      responses: {
        "201": json("The token, with its secret.", ref("CreatedToken")),
        "400": refusal("A bad name, scope list or lifetime, or a scope the caller does not hold."),
      },
    },
    get: {
      operationId: "listTokens",
      summary: "Every named token (never a secret)",
      tags: ["tokens"],
      responses: {
        "200": json("The tokens.", {
          type: "object",
          required: ["tokens"],
          properties: { tokens: { type: "array", items: ref("Token") } },
        }),
      },
    },
  },
  "/api/tokens/{token_id}": {
    delete: {
      operationId: "revokeToken",
      summary: "Revoke a named token: it stops working at once, streams included",
      tags: ["tokens"],
      parameters: [{ name: "token_id", in: "path", required: true, schema: { type: "string" } }],
      responses: { "204": { description: "Revoked." }, "404": refusal("No such token.") },
    },
  },
};

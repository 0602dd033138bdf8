// The shapes of named tokens (compat/tokens.ts) and of an actor, named once.
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
};

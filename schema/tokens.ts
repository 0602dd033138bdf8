// Named tokens over GraphQL, for a holder of the admin scope (its fields declare `admin`; schema/scopes.ts):
// tokens (never a secret), createToken (the secret, shown this once) and revokeToken. REST:
// /api/tokens (compat/tokens.ts). A token never grants a scope it does not hold.
import { builder, principalOfContext } from "./builder.ts";
import { Scope } from "./enums.ts";
import { BadInputError, ForbiddenError, NotFoundError } from "../src/base/errors.ts";
import type { CreatedToken, TokenView } from "../src/access/token-store.ts";

const Token = builder.objectRef<TokenView>("Token").implement({
  description: "A named access token as listings show it: never its secret.",
  fields: (t) => ({
    id: t.exposeID("id", { description: "tok_..., what revokeToken and the audit trail name." }),
    name: t.exposeString("name"),
    prefix: t.exposeString("prefix", { description: "The secret's first characters, to recognise it." }),
    scopes: t.field({ type: [Scope], resolve: (v) => v.scopes }),
    createdAt: t.field({ type: "DateTime", resolve: (v) => v.created_at }),
    expiresAt: t.field({ type: "DateTime", nullable: true, resolve: (v) => v.expires_at }),
    lastUsedAt: t.field({
      type: "DateTime",
      nullable: true,
      description: "Updated at most about once a minute.",
      resolve: (v) => v.last_used_at,
    }),
    revokedAt: t.field({ type: "DateTime", nullable: true, resolve: (v) => v.revoked_at }),
  }),
});

const CreatedTokenRef = builder.objectRef<CreatedToken>("CreatedToken").implement({
  description: "A token just made, with its secret: shown this once, never again.",
  fields: (t) => ({
    token: t.field({ type: Token, resolve: (created) => created }),
    secret: t.exposeString("secret", { description: "crows_<40 base62>: send it as Authorization: Bearer <secret>." }),
  }),
});

builder.queryFields((t) => ({
  tokens: t.field({
    authScopes: { admin: true },
    type: [Token],
    description: "Every named token, oldest first, revoked ones included (admin scope).",
    resolve: (_root, _args, ctx) => ctx.app.tokens.list(),
  }),
}));

builder.mutationFields((t) => ({
  createToken: t.field({
    authScopes: { admin: true },
    type: CreatedTokenRef,
    description:
      "Makes a named token (REST: POST /api/tokens). ForbiddenError when it would hold a scope the caller lacks.",
    args: {
      name: t.arg.string({ required: true }),
      scopes: t.arg.stringList({ required: true, description: "read, decide, write, admin, metrics." }),
      expiresInS: t.arg.int({ description: "Seconds until it expires; none: never." }),
    },
    errors: { types: [BadInputError, ForbiddenError], directResult: true },
    resolve: (_root, args, ctx) => {
      const principal = principalOfContext(ctx);
      return ctx.app.tokens.create(
        { name: args.name, scopes: args.scopes, expiresInS: args.expiresInS ?? undefined },
        principal.actor,
        principal.scopes,
      );
    },
  }),
  revokeToken: t.field({
    authScopes: { admin: true },
    type: Token,
    description: "Revokes a token for good (REST: DELETE /api/tokens/{id}); its open streams end within a heartbeat.",
    args: { id: t.arg.id({ required: true }) },
    errors: { types: [NotFoundError], directResult: true },
    resolve: (_root, args, ctx) => ctx.app.tokens.revoke(String(args.id), principalOfContext(ctx).actor),
  }),
}));

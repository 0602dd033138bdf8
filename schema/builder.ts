// The one Pothos builder every schema/*.ts file adds to. Configuration only: plugins, context,
// scalars and the empty root types; the domain files hang their fields on these.
import SchemaBuilder from "@pothos/core";
import ErrorsPlugin from "@pothos/plugin-errors";
import PrismaPlugin from "@pothos/plugin-prisma";
import RelayPlugin from "@pothos/plugin-relay";
import ScopeAuthPlugin from "@pothos/plugin-scope-auth";
import type PrismaTypes from "../src/generated/pothos-types.ts";
import { getDatamodel } from "../src/generated/pothos-types.ts";
import type { App } from "../src/app.ts";
import { BadInputError } from "../src/base/errors.ts";
import { DEFAULT_CONNECTION_PAGE, MAX_PAGE } from "../src/base/util/clamp.ts";
import { ROOT, type Principal } from "../src/access/principal.ts";
import type { Scope } from "../src/access/scopes.ts";
import { authScopesOf, scopeOfFailure, scopeRefusal } from "./scopes.ts";

/** What every resolver sees: the app container (its prisma client, log and flock), and who asks. */
export interface Context {
  app: App;
  /** Set by the access gate for every request; an in-process caller without one is the owner. */
  principal?: Principal;
}

/** Who a resolver acts for. */
export const principalOfContext = (ctx: Context): Principal => ctx.principal ?? ROOT;

export const builder = new SchemaBuilder<{
  PrismaTypes: PrismaTypes;
  Context: Context;
  // Each root field declares the scopes that may run it (schema/scopes.ts).
  AuthScopes: Record<Scope, boolean>;
  DefaultFieldNullability: false;
  // A connection's edges and nodes are always there (an empty page is an empty list).
  DefaultEdgesNullability: false;
  DefaultNodeNullability: false;
  Scalars: {
    DateTime: { Input: Date; Output: Date | string };
    JSON: { Input: unknown; Output: unknown };
  };
}>({
  // Fields are non-null unless marked `nullable: true`, so the schema says what is always there.
  defaultFieldNullability: false,
  // Scope auth first, so no other plugin's wrapper runs before the check (plugin-scope-auth README);
  // errors before Prisma, so `errors` also wraps t.prismaField (plugin-errors README).
  plugins: [ScopeAuthPlugin, ErrorsPlugin, RelayPlugin, PrismaPlugin],
  scopeAuth: {
    // Checked once when a subscription opens, not on every event.
    authorizeOnSubscribe: true,
    authScopes: (ctx) => authScopesOf(principalOfContext(ctx)),
    unauthorizedError: (_parent, _ctx, _info, result) => scopeRefusal(scopeOfFailure(result.failure)),
  },
  // Cursor connections (schema/connection.ts): pages of at most MAX_PAGE, opaque String cursors.
  // No global node/nodes query: every row is reached through the field that owns it.
  relay: {
    clientMutationId: "omit",
    cursorType: "String",
    nodeQueryOptions: false,
    nodesQueryOptions: false,
    edgesFieldOptions: { nullable: false },
    nodeFieldOptions: { nullable: false },
  },
  prisma: {
    // The client comes from the request's app, so a test server and its restart each use their own.
    client: (ctx) => ctx.app.prisma,
    dmmf: getDatamodel(),
    onUnusedQuery: process.env.NODE_ENV === "production" ? null : "warn",
    defaultConnectionSize: DEFAULT_CONNECTION_PAGE,
    maxConnectionSize: MAX_PAGE,
  },
  errors: {
    // Every field that declares `errors` can refuse bad input. Never the base Error class: that
    // would turn unexpected failures into readable results and defeat Yoga's masking.
    defaultTypes: [BadInputError],
    defaultUnionOptions: { name: ({ fieldName }) => `${fieldName[0]!.toUpperCase()}${fieldName.slice(1)}Result` },
  },
});

/** toISOString()'s form: UTC to the millisecond, a four-digit year. */
const ISO_UTC_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

builder.scalarType("DateTime", {
  description: "An RFC 3339 timestamp.",
  // A string already in toISOString()'s own form (what the stores hand out) is what formatting it
  // again would give: passed through, since a Date parse and format per value was a large share of
  // a ledger's or a list's events' answer. Any other string is parsed and formatted.
  serialize: (value) =>
    value instanceof Date ? value.toISOString() : ISO_UTC_MS.test(value) ? value : new Date(value).toISOString(),
  parseValue: (value) => {
    const date = new Date(String(value));
    if (typeof value !== "string" || Number.isNaN(date.getTime()))
      throw new TypeError("DateTime must be an RFC 3339 string");
    return date;
  },
});

builder.scalarType("JSON", {
  description: "Any JSON value.",
  serialize: (value) => value,
  parseValue: (value) => value,
});

builder.queryType({});
builder.mutationType({});
builder.subscriptionType({});

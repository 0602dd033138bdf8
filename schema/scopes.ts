// Who may run each root field, declared on the field itself with Pothos's scope-auth plugin
// (`authScopes: { write: true }`; several scopes mean any one of them, as postMessage's write or
// decide). Two checks read that one declaration: src/server/graphql/plugins/scopes.ts before an
// operation runs (so a refusal is one 403 with `data: null` on every transport), and the plugin
// itself around each resolver (so the schema run on its own is guarded the same way).
import { GraphQLError, type GraphQLField } from "graphql";
import { AuthScopeFailureType, type AuthFailure } from "@pothos/plugin-scope-auth";
import { isScope, missingScopeMessage, SCOPES, type Scope } from "../src/access/scopes.ts";
import type { Principal } from "../src/access/principal.ts";

/** The scope-auth initializer: the principal's scopes, one boolean each. */
export const authScopesOf = (principal: Principal): Record<Scope, boolean> =>
  Object.fromEntries(SCOPES.map((scope) => [scope, principal.scopes.includes(scope)])) as Record<Scope, boolean>;

/** The refusal, on every transport: a 403 coded "forbidden" whose message names the missing scope. */
export const scopeRefusal = (scope: Scope): GraphQLError =>
  new GraphQLError(missingScopeMessage(scope), { extensions: { code: "forbidden", scope, http: { status: 403 } } });

/** The scopes a root field declares (any one suffices), or undefined when it declares none. */
export function declaredScopes(field: GraphQLField<unknown, unknown>): Scope[] | undefined {
  const options = field.extensions?.pothosOptions as { authScopes?: unknown } | undefined;
  const declared = options?.authScopes;
  if (!declared || typeof declared !== "object") return undefined;
  const scopes = Object.entries(declared)
    .filter(([name, wanted]) => wanted === true && isScope(name))
    .map(([name]) => name as Scope);
  return scopes.length > 0 ? scopes : undefined;
}

/** The first scope a scope-auth failure names (for its refusal); admin when it names none. */
export function scopeOfFailure(failure: AuthFailure): Scope {
  if (failure.kind === AuthScopeFailureType.AuthScope) return isScope(failure.scope) ? failure.scope : "admin";
  if (failure.kind === AuthScopeFailureType.AnyAuthScopes || failure.kind === AuthScopeFailureType.AllAuthScopes)
    return failure.failures[0] ? scopeOfFailure(failure.failures[0]) : "admin";
  return "admin";
}

// Who a request acts as and what it may do: the access gate (src/server/access.ts) sets one per
// request; the compat routes and GraphQL resolvers read its actor and scopes.
import { OWNER, type Actor } from "../base/actor.ts";
import { missingScopeMessage, SCOPES, type Scope } from "./scopes.ts";
import { ForbiddenError } from "../base/errors.ts";

export interface Principal {
  actor: Actor;
  scopes: readonly Scope[];
  /** A named token's id (its open streams are cut when it is revoked or expires). */
  tokenId?: string;
}

/** CROWS_TOKEN, or anyone on loopback when no token is configured: every scope. */
export const ROOT: Principal = Object.freeze({ actor: OWNER, scopes: SCOPES });

/**
 * A decide link's holder: the link is the credential for its one decision (checked where it is
 * served), so it holds no scope for anything else.
 */
export const LINK_HOLDER: Principal = Object.freeze({
  actor: Object.freeze({ kind: "link" }) as Actor,
  scopes: Object.freeze([]) as readonly Scope[],
});

/** A 403 naming the scope when the principal lacks it. */
export function requireScope(principal: Principal, scope: Scope): void {
  if (!principal.scopes.includes(scope)) throw new ForbiddenError(missingScopeMessage(scope));
}

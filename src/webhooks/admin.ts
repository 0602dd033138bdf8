// Who may manage webhooks: a holder of the admin scope (docs/security.md "Scopes"). REST asks it at
// the access gate (each webhook route record, compat/webhooks.ts, needs admin), GraphQL per operation
// (src/server/graphql/plugins/scopes.ts) and again in each resolver through this one check. Reads are
// guarded too: the list names every receiver.
import type { Principal } from "../access/principal.ts";
import { requireScope } from "../access/principal.ts";

export function requireAdmin(principal: Principal): void {
  requireScope(principal, "admin");
}

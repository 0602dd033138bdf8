// Which scope a request needs (docs/security.md "Scopes"): the access gate looks it up here before
// any handler runs. A REST route's record says its own (compat/route.ts); GraphQL answers per
// operation instead (src/server/graphql/plugins/scopes.ts), since one path carries queries,
// mutations and subscriptions. A request no record serves (it will be a 404 or a 405) needs what
// its neighbours need, so a token never learns more from the refusal than its scope allows.
import type { Router } from "../../compat/router.ts";
import type { RouteRecord, RouteScope } from "../../compat/route.ts";

/** A route's scope; "any": every valid token (health); "graphql": decided per operation. */
export type Needed = RouteScope | "any" | "graphql";

const READING = new Set(["GET", "HEAD", "OPTIONS"]);

/** "/api/tokens" for /api/tokens/tok_1/x: the family a path belongs to. */
const familyOf = (path: string): string => path.split("/").slice(0, 3).join("/");

export function neededScope(routes: Router<RouteRecord>, method: string, pathname: string): Needed {
  if (pathname === "/metrics") return "metrics";
  if (pathname === "/healthz" || pathname === "/readyz") return "any";
  if (pathname === "/graphql" || pathname === "/graphql/stream") return "graphql";
  const matched = routes.find(method, pathname);
  if (matched) return matched.scope;
  const onPath = routes.onPath(pathname);
  if (!(pathname === "/api" || pathname.startsWith("/api/"))) return "read";
  // A family every record of which needs admin (tokens, webhooks) needs it for any method and path.
  const family = routes.list().filter((route) => familyOf(route.path) === familyOf(pathname));
  if (family.length > 0 && family.every((route) => route.scope === "admin")) return "admin";
  if (READING.has(method)) return "read";
  // Another write on a served path needs what that path's writes need (a DELETE of /api/verdicts: decide).
  const writes = new Set(onPath.filter((route) => route.method !== "GET").map((route) => route.scope));
  return writes.size === 1 ? [...writes][0]! : "write";
}

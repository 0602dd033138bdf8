// Which scope each path family needs (docs/security.md "Scopes"): the access gate looks a request
// up here before any handler runs. GraphQL answers per operation instead (src/server/graphql/plugins/scopes.ts),
// since one path carries queries, mutations and subscriptions; a nest post needs write, or decide
// when it is the owner's reply to an ask (compat/messages.ts tells once it has the body).
import type { Scope } from "../access/scopes.ts";

/** A scope; "any": every valid token (health); "graphql": decided per operation; "post": write, or decide for an ask reply. */
export type Needed = Scope | "any" | "graphql" | "post";

const NEST_POST = /^\/api\/nests\/[^/]+\/messages\/?$/;
/** Deciding a tool call, or revoking a standing permission: the owner's decisions (docs/tools.md). */
const TOOL_DECISION = /^\/api\/(tool-calls\/[^/]+\/decision|tool-permissions\/[^/]+)\/?$/;

export function neededScope(method: string, pathname: string): Needed {
  if (pathname === "/metrics") return "metrics";
  if (pathname === "/healthz" || pathname === "/readyz") return "any";
  if (pathname === "/graphql" || pathname === "/graphql/stream") return "graphql";
  if (pathname === "/api/tokens" || pathname.startsWith("/api/tokens/")) return "admin";
  if (pathname === "/api/webhooks" || pathname.startsWith("/api/webhooks/")) return "admin";
  const reading = method === "GET" || method === "HEAD" || method === "OPTIONS";
  if (reading || !(pathname === "/api" || pathname.startsWith("/api/"))) return "read";
  if (pathname === "/api/verdicts" || pathname === "/api/verdicts/") return "decide";
  if (NEST_POST.test(pathname)) return "post";
  if (TOOL_DECISION.test(pathname)) return "decide";
  return "write";
}

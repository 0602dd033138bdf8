// The scope a request needs comes from its route record now; what no record serves needs what its
// neighbours need. Held here to the path rules the records replaced (src/server/route-scopes.ts as
// it was, copied below, with the families added since), for every route and a spread of paths no
// route serves.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { restRouter } from "../../compat/index.ts";
import { neededScope } from "../../src/server/route-scopes.ts";
import { DECIDE_PREFIX, isDecidePath } from "../../src/webhooks/links.ts";

/** Deciding a tool call, or revoking a standing permission: the owner's decisions (added since). */
const TOOL_DECISION = /^\/api\/(tool-calls\/[^/]+\/decision|tool-permissions\/[^/]+)\/?$/;
const NEST_POST = /^\/api\/nests\/[^/]+\/messages\/?$/;

/** The regexes this replaced, and the gate's own rule before them: a decide link asks no token. */
function formerScope(method: string, pathname: string): string {
  if (isDecidePath(pathname) && (method === "GET" || method === "HEAD" || method === "POST")) return "link";
  if (pathname === "/metrics") return "metrics";
  if (pathname === "/healthz" || pathname === "/readyz") return "any";
  if (pathname === "/graphql" || pathname === "/graphql/stream") return "graphql";
  if (pathname === "/api/tokens" || pathname.startsWith("/api/tokens/")) return "admin";
  if (pathname === "/api/webhooks" || pathname.startsWith("/api/webhooks/")) return "admin";
  // Families added since, with the rule their records state.
  if (pathname === "/api/tools" || pathname.startsWith("/api/tools/")) return "admin";
  const reading = method === "GET" || method === "HEAD" || method === "OPTIONS";
  if (reading || !(pathname === "/api" || pathname.startsWith("/api/"))) return "read";
  if (pathname === "/api/verdicts" || pathname === "/api/verdicts/") return "decide";
  if (TOOL_DECISION.test(pathname)) return "decide";
  if (NEST_POST.test(pathname)) return "post";
  return "write";
}

const router = restRouter();
const LINK = `${"A".repeat(12)}.${"B".repeat(43)}`;
const concrete = (path: string) => path.replace("{link}", LINK).replace(/\{(\w+)\}/g, "x1");

const UNSERVED = [
  "/",
  "/api",
  "/api/",
  "/api/nope",
  "/api/verdicts/",
  "/api/verdicts/x",
  "/api/tokensx",
  "/api/tokens/x/y",
  "/api/webhooks/x/y/z",
  "/api/nests/x/messages/",
  "/api/nests/x/messages/y",
  "/api/nests/x",
  "/api/trust/history/x",
  "/metrics",
  "/healthz",
  "/readyz",
  "/graphql",
  "/graphql/stream",
  "/console/app.js",
  "/decide/abc",
  `${DECIDE_PREFIX}${LINK}/`,
  `${DECIDE_PREFIX}${LINK}x`,
];
const METHODS = ["GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE"];

test("every route's record asks what the path rules asked", () => {
  for (const route of router.list()) {
    const path = concrete(route.path);
    assert.is(neededScope(router, route.method, path), formerScope(route.method, path), `${route.method} ${path}`);
  }
});

test("every other method on a served path, and every path no route serves, needs what it did", () => {
  const paths = [...router.list().map((route) => concrete(route.path)), ...UNSERVED];
  for (const path of paths)
    for (const method of METHODS)
      assert.is(neededScope(router, method, path), formerScope(method, path), `${method} ${path}`);
});

test("the check can fail: a record that asks another scope is noticed", () => {
  const verdict = router.list().find((route) => route.path === "/api/verdicts")!;
  const was = verdict.scope;
  verdict.scope = "write";
  try {
    assert.is.not(neededScope(router, "POST", "/api/verdicts"), formerScope("POST", "/api/verdicts"));
  } finally {
    verdict.scope = was;
  }
});

test.run();

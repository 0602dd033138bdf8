// The compat API: EVENTS.md's REST + SSE surface, exactly. Each file holds one endpoint family.
import { Router } from "./router.ts";
import { listRoutes } from "./lists.ts";
import { eventRoutes } from "./events.ts";
import { verdictRoutes } from "./verdicts.ts";
import { trustRoutes } from "./trust.ts";
import { personaRoutes } from "./personas.ts";
import { nestRoutes } from "./nests.ts";
import { crowRoutes } from "./crows.ts";
import { messageRoutes } from "./messages.ts";
import { tokenRoutes } from "./tokens.ts";
import { auditRoutes } from "./audit.ts";
import { openApiRoutes } from "./openapi/index.ts";
import { exportRoutes } from "./export.ts";
import { cancelRoutes } from "./cancel.ts";
import type { Route } from "./router.ts";

/** Every route of the REST API: the route table test/openapi.test.ts holds the OpenAPI document to. */
export const compatRoutes: readonly Route[] = [
  ...listRoutes,
  ...eventRoutes,
  ...verdictRoutes,
  ...trustRoutes,
  ...personaRoutes,
  ...nestRoutes,
  ...crowRoutes,
  ...messageRoutes,
  ...tokenRoutes,
  ...auditRoutes,
  ...exportRoutes,
  ...cancelRoutes,
  ...openApiRoutes,
];

export function compatRouter(): Router {
  return new Router().add(...compatRoutes);
}

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

export function compatRouter(): Router {
  return new Router().add(...listRoutes, ...eventRoutes, ...verdictRoutes, ...trustRoutes, ...personaRoutes, ...nestRoutes, ...crowRoutes, ...messageRoutes, ...tokenRoutes, ...auditRoutes);
}

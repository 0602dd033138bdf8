// The REST API: docs/contract.md's REST + SSE surface, exactly, and its extensions. Each file holds one
// endpoint family as route records (compat/route.ts); this table is every REST route, the only one.
import { Router } from "./router.ts";
import type { RouteRecord } from "./route.ts";
import { listRoutes } from "./lists.ts";
import { eventRoutes } from "./events.ts";
import { verdictRoutes } from "./verdicts.ts";
import { trustRoutes } from "./trust.ts";
import { nestRoutes } from "./nests.ts";
import { crowRoutes, personaRoutes } from "./crows.ts";
import { messageRoutes } from "./messages.ts";
import { tokenRoutes } from "./tokens.ts";
import { auditRoutes } from "./audit.ts";
import { exportRoutes } from "./export.ts";
import { webhookRoutes } from "./webhooks.ts";
import { decideRoutes } from "./decide.ts";
import { openApiDocument, openApiRoute } from "./openapi/index.ts";
import { toolServerRoutes } from "./tools.ts";
import { toolCallRoutes } from "./tool-calls.ts";
import { cancelRoutes } from "./cancel.ts";

/**
 * Every REST route (and the decide links' pages), in the document's order: the router, the access
 * check and GET /api/openapi.json read it.
 */
export const restRoutes: readonly RouteRecord[] = [
  ...listRoutes,
  ...verdictRoutes,
  ...eventRoutes,
  ...trustRoutes,
  ...nestRoutes,
  ...messageRoutes,
  ...personaRoutes,
  ...crowRoutes,
  ...tokenRoutes,
  ...auditRoutes,
  ...exportRoutes,
  ...webhookRoutes,
  ...decideRoutes,
  ...toolServerRoutes,
  ...toolCallRoutes,
  ...cancelRoutes,
  openApiRoute(() => restRoutes),
];

export function restRouter(): Router<RouteRecord> {
  return new Router<RouteRecord>().add(...restRoutes);
}

/** The document as GET /api/openapi.json serves it. */
export const restDocument = () => openApiDocument(restRoutes);

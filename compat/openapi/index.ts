// The REST API described as OpenAPI 3.1, served at GET /api/openapi.json. Its paths come from the
// route records (compat/route.ts, compat/openapi/derive.ts); the answers' shared shapes stay named
// components (components.ts and beside it). Webhook deliveries are the document's top-level
// `webhooks`. test/api/openapi.test.ts validates the document and fails when the served routes and
// these paths disagree, or the webhooks and the event types the code sends;
// test/unit/openapi-unchanged.test.ts holds it to the hand-written document it replaced.
import { z } from "zod";
import { defineRoute, type RouteRecord } from "../route.ts";
import { answer } from "../responses.ts";
import { schemas } from "./components.ts";
import { tokenSchemas } from "./tokens.ts";
import { auditSchemas } from "./audit.ts";
import { webhookSchemas } from "./webhooks.ts";
import { toolSchemas } from "./tools.ts";
import { toolCallSchemas } from "./tool-calls.ts";
import { webhookEvents } from "./webhook-events.ts";
import { derivePaths } from "./derive.ts";
import { json, type Operation, type Paths } from "./types.ts";

/** The named shapes the answers share (the bodies' names come from their records). */
const SCHEMAS = { ...schemas, ...tokenSchemas, ...auditSchemas, ...webhookSchemas, ...toolSchemas, ...toolCallSchemas };

/** The 401/403 every path that asks a token can answer once CROWS_TOKEN is set (docs/security.md). */
const ACCESS_REFUSALS = {
  "401": json("A token is needed, or the one sent is not valid here.", { $ref: "#/components/schemas/Refusal" }),
  "403": json("The token lacks the scope this path needs (named in the answer), or a browser origin is not listed.", {
    $ref: "#/components/schemas/Refusal",
  }),
};

function withAccessRefusals(paths: Paths): Paths {
  const out: Paths = {};
  for (const [path, item] of Object.entries(paths)) {
    out[path] = Object.fromEntries(
      Object.entries(item).map(([method, op]: [string, Operation]) => [
        method,
        op.security?.length === 0 ? op : { ...op, responses: { ...ACCESS_REFUSALS, ...op.responses } },
      ]),
    );
  }
  return out;
}

/** The REST API's own version (not the server's): its minor moves with an addition, its major with a CHANGELOG.md break. */
export const API_VERSION = "1.5.0";

/** The document of these route records. */
export function openApiDocument(records: readonly RouteRecord[]) {
  const derived = derivePaths(records);
  const paths: Paths = derived.paths;
  return {
    openapi: "3.1.0",
    info: {
      title: "crows REST API",
      version: API_VERSION,
      description:
        'docs/contract.md\'s HTTP API and its extensions. Every 4xx is {"message"}; with CROWS_TOKEN set, send Authorization: Bearer <token>. ' +
        "A GET needs the read scope, POST /api/verdicts decide, /api/tokens, /api/webhooks and /api/tools/servers admin, other writes write (docs/security.md); a decide link is its own credential. " +
        "The GraphQL API at /graphql is described by its own SDL (schema/schema.graphql).",
    },
    servers: [{ url: "/" }],
    security: [{}, { bearer: [] }],
    tags: ["lists", "streams", "trust", "nests", "crows", "tokens", "audit", "export", "webhooks", "tools", "meta"].map(
      (name) => ({ name }),
    ),
    paths: withAccessRefusals(paths),
    // What crows POSTs to an endpoint, one entry per event type (OpenAPI 3.1's top-level webhooks).
    webhooks: webhookEvents,
    components: {
      schemas: { ...SCHEMAS, ...derived.components },
      securitySchemes: {
        bearer: {
          type: "http",
          scheme: "bearer",
          description: "CROWS_TOKEN (every scope), a named token (its scopes), or a CROWS_READ_TOKENS token (read).",
        },
      },
    },
  };
}

/** GET /api/openapi.json: the document of every record `all` gives (the table this route is in). */
export function openApiRoute(all: () => readonly RouteRecord[]): RouteRecord {
  let cached: ReturnType<typeof openApiDocument> | undefined;
  return defineRoute({
    method: "GET",
    path: "/api/openapi.json",
    scope: "read",
    operationId: "getOpenApi",
    summary: "This document",
    tags: ["meta"],
    responses: { "200": answer("OpenAPI 3.1.", z.object({}).loose()) },
    async handle() {
      // Built once: the document is the same for the server's life.
      return { status: 200, json: (cached ??= openApiDocument(all())) };
    },
  });
}

// The REST API described as OpenAPI 3.1, served at GET /api/openapi.json. One file per path family;
// a branch that adds a family adds its file and one line to FAMILIES (and its schemas to SCHEMAS).
// Webhook deliveries are the document's top-level `webhooks`. test/openapi.test.ts validates the
// document and fails when the served routes (compat's table, the webhook routes, the decide links)
// and these paths disagree, or the webhooks and the event types the code sends.
import type { Route } from "../router.ts";
import { schemas } from "./components.ts";
import { crowPaths } from "./crows.ts";
import { exportPaths } from "./export.ts";
import { listPaths } from "./lists.ts";
import { nestPaths } from "./nests.ts";
import { trustPaths } from "./trust.ts";
import { tokenPaths, tokenSchemas } from "./tokens.ts";
import { auditPaths, auditSchemas } from "./audit.ts";
import { webhookPaths, webhookSchemas } from "./webhooks.ts";
import { decidePaths } from "./decide.ts";
import { cancelPaths, cancelSchemas } from "./cancel.ts";
import { webhookEvents } from "./webhook-events.ts";
import { json, type Operation, type Paths } from "./types.ts";

const selfPaths: Paths = {
  "/api/openapi.json": {
    get: {
      operationId: "getOpenApi",
      summary: "This document",
      tags: ["meta"],
      responses: { "200": json("OpenAPI 3.1.", { type: "object" }) },
    },
  },
};

/** Every family of paths. */
const FAMILIES: Paths[] = [
  listPaths,
  trustPaths,
  nestPaths,
  crowPaths,
  tokenPaths,
  auditPaths,
  exportPaths,
  webhookPaths,
  decidePaths,
  cancelPaths,
  selfPaths,
];
const SCHEMAS = { ...schemas, ...tokenSchemas, ...auditSchemas, ...webhookSchemas, ...cancelSchemas };

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

export function openApiDocument() {
  const paths: Paths = {};
  for (const family of FAMILIES) {
    for (const [path, item] of Object.entries(family)) paths[path] = { ...paths[path], ...item };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "crows REST API",
      version: API_VERSION,
      description:
        'EVENTS.md\'s HTTP API and its extensions. Every 4xx is {"message"}; with CROWS_TOKEN set, send Authorization: Bearer <token>. ' +
        "A GET needs the read scope, POST /api/verdicts decide, /api/tokens and /api/webhooks admin, other writes write (docs/security.md); a decide link is its own credential. " +
        "The GraphQL API at /graphql is described by its own SDL (schema/schema.graphql).",
    },
    servers: [{ url: "/" }],
    security: [{}, { bearer: [] }],
    tags: ["lists", "streams", "trust", "nests", "crows", "tokens", "audit", "export", "webhooks", "meta"].map(
      (name) => ({ name }),
    ),
    paths: withAccessRefusals(paths),
    // What crows POSTs to an endpoint, one entry per event type (OpenAPI 3.1's top-level webhooks).
    webhooks: webhookEvents,
    components: {
      schemas: SCHEMAS,
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

let cached: ReturnType<typeof openApiDocument> | undefined;

export const openApiRoutes: Route[] = [
  {
    method: "GET",
    path: "/api/openapi.json",
    async handle() {
      // Built once: the document is the same for the server's life.
      return { status: 200, json: (cached ??= openApiDocument()) };
    },
  },
];

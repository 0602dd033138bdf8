// The tool servers an owner connects (docs/tools.md "Connecting servers"), for the admin scope.
// POST adds one (env and header values are write-only: the answer and every list show their names
// only); GET lists them with their state (never starting one), GET one also lists its tools
// (starting it if needed); DELETE removes it and stops its process; POST .../policies and
// .../nests change who may use what. The registry checks the bodies (src/tools/), with its words.
import { z } from "zod";
import { TOOL_POLICIES } from "../src/tools/types.ts";
import { ref } from "./openapi/types.ts";
import { answer, bare, refused } from "./responses.ts";
import { bodyObject, defineRoute } from "./route.ts";

const secrets = (what: string) =>
  z
    .record(z.string(), z.string())
    .describe(`${what}: written once, sent to the server, never shown again (lists show the names only).`);

const ToolServerInput = z
  .object({
    name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/),
    transport: z.enum(["stdio", "http"]).optional(),
    command: z.string().optional(),
    args: z.array(z.string()).max(64).optional(),
    env: secrets(
      "Environment variables (stdio): the only ones it gets beside HOME, LOGNAME, PATH, SHELL, TERM, USER",
    ).optional(),
    cwd: z.string().describe("An absolute path; none: <data folder>/tools/<id>/.").optional(),
    url: z.string().meta({ format: "uri" }).optional(),
    headers: secrets("Headers sent with every request (http)").optional(),
    nests: z
      .union([z.literal("all"), z.array(z.string())])
      .describe('"all" (or none): every nest; else these nest ids.')
      .optional(),
    policies: z.record(z.string(), z.enum(TOOL_POLICIES as ["allow", "ask", "deny"])).optional(),
  })
  .describe('A stdio server ("command") or a Streamable HTTP one ("url"); "transport" is inferred when left out.');

const Server = z.object({ server_id: z.string().describe("The server's id (ts_...).") });
const admin = refused("The token lacks the admin scope (named in the answer).");
const noServer = refused("No such tool server.");
const policy = z.enum(TOOL_POLICIES as ["allow", "ask", "deny"]);

export const toolServerRoutes = [
  defineRoute({
    method: "POST",
    path: "/api/tools/servers",
    scope: "admin",
    operationId: "addToolServer",
    summary: "Connect a tool server (stdio or Streamable HTTP); env and header values are write-only",
    tags: ["tools"],
    engineBody: { schema: ToolServerInput, name: "ToolServerInput" },
    responses: {
      "201": answer("The server (secrets by name only).", ref("ToolServer")),
      "400": refused("A field that breaks its rule (named), an unknown nest, or 50 servers already."),
      "403": admin,
      "409": refused("The name is taken."),
    },
    async handle(app, _input, request) {
      const body = await bodyObject(request);
      const view = await app.tools.registry.add(
        {
          name: body.name,
          transport: body.transport,
          command: body.command,
          args: body.args,
          env: body.env,
          cwd: body.cwd,
          url: body.url,
          headers: body.headers,
          nests: body.nests,
          policies: body.policies,
        },
        request.principal.actor,
      );
      return { status: 201, json: view, headers: { "cache-control": "no-store" } };
    },
  }),
  defineRoute({
    method: "GET",
    path: "/api/tools/servers",
    scope: "admin",
    operationId: "listToolServers",
    summary: "Every tool server with its state (starts none)",
    tags: ["tools"],
    responses: {
      "200": answer("The servers, oldest first.", {
        type: "object",
        required: ["servers"],
        properties: { servers: { type: "array", items: ref("ToolServerStatus") } },
      }),
      "403": admin,
    },
    async handle(app) {
      return { status: 200, json: { servers: await app.tools.statuses() } };
    },
  }),
  defineRoute({
    method: "GET",
    path: "/api/tools/servers/{server_id}",
    scope: "admin",
    operationId: "getToolServer",
    summary: "One tool server with its tools listed (starting it when needed)",
    tags: ["tools"],
    params: Server,
    responses: { "200": answer("The server.", ref("ToolServerStatus")), "403": admin, "404": noServer },
    async handle(app, { params }) {
      return { status: 200, json: await app.tools.status(params.server_id, { list: true }) };
    },
  }),
  defineRoute({
    method: "DELETE",
    path: "/api/tools/servers/{server_id}",
    scope: "admin",
    operationId: "removeToolServer",
    summary: "Remove a tool server and stop it",
    tags: ["tools"],
    params: Server,
    responses: { "204": bare("Removed."), "403": admin, "404": noServer },
    async handle(app, { params }, request) {
      await app.tools.registry.remove(params.server_id, request.principal.actor);
      return { status: 204 };
    },
  }),
  defineRoute({
    method: "POST",
    path: "/api/tools/servers/{server_id}/policies",
    scope: "admin",
    operationId: "setToolPolicies",
    summary: "Set tools' policies: allow, ask, deny, or null for the default (audited)",
    tags: ["tools"],
    params: Server,
    engineBody: { schema: z.object({ policies: z.record(z.string(), policy.nullable()) }) },
    responses: {
      "200": answer("The server.", ref("ToolServerStatus")),
      "400": refused("No tool named, a bad tool name or policy."),
      "403": admin,
      "404": noServer,
    },
    async handle(app, { params }, request) {
      const body = await bodyObject(request);
      await app.tools.registry.setPolicies(params.server_id, body.policies, request.principal.actor);
      return { status: 200, json: await app.tools.status(params.server_id) };
    },
  }),
  defineRoute({
    method: "POST",
    path: "/api/tools/servers/{server_id}/nests",
    scope: "admin",
    operationId: "setToolServerNests",
    summary: "Which nests may use the server (audited)",
    tags: ["tools"],
    params: Server,
    engineBody: {
      schema: z.object({ nests: z.union([z.literal("all"), z.null(), z.array(z.string())]) }),
    },
    responses: {
      "200": answer("The server.", ref("ToolServerStatus")),
      "400": refused("A bad or unknown nest id."),
      "403": admin,
      "404": noServer,
    },
    async handle(app, { params }, request) {
      const body = await bodyObject(request);
      await app.tools.registry.setNests(params.server_id, body.nests, request.principal.actor);
      return { status: 200, json: await app.tools.status(params.server_id) };
    },
  }),
];

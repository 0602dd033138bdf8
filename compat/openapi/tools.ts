// /api/tools/servers*: the MCP tool servers an owner connects (docs/tools.md), for the admin scope.
import { body, json, ref, refusal, type Paths } from "./types.ts";
import { TOOL_POLICIES } from "../../src/tools/types.ts";

const str = { type: "string" };
const policy = { type: "string", enum: [...TOOL_POLICIES] };
const names = { type: "array", items: str };
const secrets = (what: string) => ({
  type: "object",
  additionalProperties: str,
  description: `${what}: written once, sent to the server, never shown again (lists show the names only).`,
});

export const toolSchemas = {
  ToolServerInput: {
    type: "object",
    required: ["name"],
    description: 'A stdio server ("command") or a Streamable HTTP one ("url"); "transport" is inferred when left out.',
    properties: {
      name: { type: "string", pattern: "^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$" },
      transport: { type: "string", enum: ["stdio", "http"] },
      command: str,
      args: { type: "array", maxItems: 64, items: str },
      env: secrets(
        "Environment variables (stdio): the only ones it gets beside HOME, LOGNAME, PATH, SHELL, TERM, USER",
      ),
      cwd: { type: "string", description: "An absolute path; none: <data folder>/tools/<id>/." },
      url: { type: "string", format: "uri" },
      headers: secrets("Headers sent with every request (http)"),
      nests: { oneOf: [{ const: "all" }, names], description: '"all" (or none): every nest; else these nest ids.' },
      policies: { type: "object", additionalProperties: policy },
    },
  },
  ToolServer: {
    type: "object",
    required: [
      "id",
      "name",
      "transport",
      "command",
      "args",
      "cwd",
      "url",
      "env_names",
      "header_names",
      "nests",
      "policies",
      "created_at",
    ],
    properties: {
      id: str,
      name: str,
      transport: { type: "string", enum: ["stdio", "http"] },
      command: str,
      args: names,
      cwd: { type: "string", description: "Empty: its own folder under the data folder." },
      url: str,
      env_names: names,
      header_names: names,
      nests: { type: ["array", "null"], items: str, description: "null: every nest." },
      policies: { type: "object", additionalProperties: policy, description: "The owner's choices only." },
      created_at: { type: "string", format: "date-time" },
    },
  },
  ToolServerStatus: {
    allOf: [
      ref("ToolServer"),
      {
        type: "object",
        required: ["state", "tools"],
        properties: {
          state: {
            type: "object",
            required: ["status", "last_error", "tools", "tools_dropped", "calls", "errors", "restarts"],
            properties: {
              status: { type: "string", enum: ["idle", "starting", "up", "down", "stopped"] },
              last_error: { type: ["string", "null"] },
              last_error_at: { type: ["string", "null"], format: "date-time" },
              tools: { type: ["integer", "null"] },
              tools_dropped: { type: "integer" },
              calls: { type: "integer" },
              errors: { type: "integer" },
              restarts: { type: "integer" },
              started_at: { type: ["string", "null"], format: "date-time" },
            },
          },
          tools: {
            type: "array",
            items: {
              type: "object",
              required: ["name", "description", "annotations", "policy", "default_policy"],
              properties: {
                name: str,
                description: str,
                annotations: { type: "object" },
                policy,
                default_policy: policy,
              },
            },
          },
        },
      },
    ],
  },
};

const id = { name: "server_id", in: "path", required: true, description: "The server's id (ts_...).", schema: str };
const admin = refusal("The token lacks the admin scope (named in the answer).");
const noServer = refusal("No such tool server.");

export const toolPaths: Paths = {
  "/api/tools/servers": {
    post: {
      operationId: "addToolServer",
      summary: "Connect a tool server (stdio or Streamable HTTP); env and header values are write-only",
      tags: ["tools"],
      requestBody: body(ref("ToolServerInput")),
      responses: {
        "201": json("The server (secrets by name only).", ref("ToolServer")),
        "400": refusal("A field that breaks its rule (named), an unknown nest, or 50 servers already."),
        "403": admin,
        "409": refusal("The name is taken."),
      },
    },
    get: {
      operationId: "listToolServers",
      summary: "Every tool server with its state (starts none)",
      tags: ["tools"],
      responses: {
        "200": json("The servers, oldest first.", {
          type: "object",
          required: ["servers"],
          properties: { servers: { type: "array", items: ref("ToolServerStatus") } },
        }),
        "403": admin,
      },
    },
  },
  "/api/tools/servers/{server_id}": {
    get: {
      operationId: "getToolServer",
      summary: "One tool server with its tools listed (starting it when needed)",
      tags: ["tools"],
      parameters: [id],
      responses: { "200": json("The server.", ref("ToolServerStatus")), "403": admin, "404": noServer },
    },
    delete: {
      operationId: "removeToolServer",
      summary: "Remove a tool server and stop it",
      tags: ["tools"],
      parameters: [id],
      responses: { "204": { description: "Removed." }, "403": admin, "404": noServer },
    },
  },
  "/api/tools/servers/{server_id}/policies": {
    post: {
      operationId: "setToolPolicies",
      summary: "Set tools' policies: allow, ask, deny, or null for the default (audited)",
      tags: ["tools"],
      parameters: [id],
      requestBody: body({
        type: "object",
        required: ["policies"],
        properties: { policies: { type: "object", additionalProperties: { oneOf: [policy, { type: "null" }] } } },
      }),
      responses: {
        "200": json("The server.", ref("ToolServerStatus")),
        "400": refusal("No tool named, a bad tool name or policy."),
        "403": admin,
        "404": noServer,
      },
    },
  },
  "/api/tools/servers/{server_id}/nests": {
    post: {
      operationId: "setToolServerNests",
      summary: "Which nests may use the server (audited)",
      tags: ["tools"],
      parameters: [id],
      requestBody: body({
        type: "object",
        required: ["nests"],
        properties: { nests: { oneOf: [{ const: "all" }, { type: "null" }, names] } },
      }),
      responses: {
        "200": json("The server.", ref("ToolServerStatus")),
        "400": refusal("A bad or unknown nest id."),
        "403": admin,
        "404": noServer,
      },
    },
  },
};

// /api/tool-calls and /api/tool-permissions (compat/tool-calls.ts; docs/tools.md).
import { body, json, query, ref, refusal, type Paths, type Schema } from "./types.ts";
import { TOOL_DECISIONS } from "../../src/flock/tool-events.ts";

const str = { type: "string" } as const;
const at = { type: "string", format: "date-time" } as const;
const nullable = (schema: Schema): Schema => ({ oneOf: [schema, { type: "null" }] });
const object = (properties: Record<string, Schema>, extra: Schema = {}): Schema => ({
  type: "object",
  required: Object.keys(properties),
  properties,
  ...extra,
});

export const toolCallSchemas: Record<string, Schema> = {
  PendingToolCall: object(
    {
      call_id: str,
      list_id: str,
      item_id: str,
      crow: str,
      task_type: str,
      server_id: str,
      server: str,
      tool: str,
      args: { type: "object", description: "The call's arguments, whole (at most CROWS_TOOL_ARGS_BYTES of JSON)." },
      read_only: { type: "boolean" },
      deadline: nullable(at),
      asked_at: at,
    },
    { description: "A tool call waiting for the owner; unanswered by its deadline, it is refused (timeout)." },
  ),
  ToolCallDecisionInput: {
    type: "object",
    required: ["approve"],
    properties: {
      approve: { type: "boolean" },
      reason: {
        type: "string",
        maxLength: 1000,
        description: "Why it was refused: the crow's next model call is told.",
      },
      always: {
        type: "boolean",
        description: "With approve: a standing permission for this crow, this task type and this tool.",
      },
    },
  },
  ToolCallDecision: object({ call_id: str, decision: { type: "string", enum: [...TOOL_DECISIONS] } }),
  ToolPermission: object({
    permission_id: str,
    crow: str,
    task_type: str,
    server_id: str,
    tool: str,
    granted_at: at,
    granted_by: str,
    call_id: str,
    revoked_at: nullable(at),
  }),
};

const callId = { name: "call_id", in: "path", required: true, schema: str };
const permissionId = { name: "permission_id", in: "path", required: true, schema: str };

export const toolCallPaths: Paths = {
  "/api/tool-calls": {
    get: {
      operationId: "listPendingToolCalls",
      summary: "Tool calls waiting for the owner's decision, oldest first, with their whole arguments",
      tags: ["tools"],
      responses: {
        "200": json("The calls.", object({ tool_calls: { type: "array", items: ref("PendingToolCall") } })),
      },
    },
  },
  "/api/tool-calls/{call_id}/decision": {
    post: {
      operationId: "decideToolCall",
      summary: "Approve or refuse a tool call (with a reason), or approve it always for this crow and task type",
      tags: ["tools"],
      parameters: [callId],
      requestBody: body(ref("ToolCallDecisionInput")),
      responses: {
        "200": json("Decided.", ref("ToolCallDecision")),
        "400": refusal("A bad body: approve missing or not a boolean, a reason too long, always without approve."),
        "404": refusal("Nothing waits on this call: no such call, decided already, or its deadline passed."),
      },
    },
  },
  "/api/tool-permissions": {
    get: {
      operationId: "listToolPermissions",
      summary: "Standing permissions, newest first",
      tags: ["tools"],
      parameters: [
        query("revoked", "true: revoked ones too (the audit).", { type: "string", enum: ["true", "false"] }),
      ],
      responses: {
        "200": json("The permissions.", object({ permissions: { type: "array", items: ref("ToolPermission") } })),
      },
    },
  },
  "/api/tool-permissions/{permission_id}": {
    delete: {
      operationId: "revokeToolPermission",
      summary: "Revoke a standing permission: the tool asks again from the next call",
      tags: ["tools"],
      parameters: [permissionId],
      responses: { "204": { description: "Revoked." }, "404": refusal("No such permission, or revoked already.") },
    },
  },
};

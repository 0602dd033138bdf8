// The owner's side of tool calls (docs/tools.md "The approval of a call"):
//   GET    /api/tool-calls                          calls waiting for a decision, with their whole arguments (read);
//   POST   /api/tool-calls/{call_id}/decision       {"approve", "reason"?, "always"?} -> 200 {call_id, decision} (decide);
//                                                   404 when nothing waits on it (decided, or past its deadline);
//   GET    /api/tool-permissions                    standing permissions; ?revoked=true lists revoked ones too (read);
//   DELETE /api/tool-permissions/{permission_id}    revokes one -> 204 (decide).
import { z } from "zod";
import type { ToolCall, ToolPermission } from "../src/generated/prisma/client.ts";
import { ref } from "./openapi/types.ts";
import { described } from "./query-params.ts";
import { answer, bare, refused } from "./responses.ts";
import { bodyObject, defineRoute } from "./route.ts";

const Call = z.object({ call_id: z.string() });
const Permission = z.object({ permission_id: z.string() });
const DecisionInput = z.object({
  approve: z.boolean(),
  reason: z.string().max(1000).describe("Why it was refused: the crow's next model call is told.").optional(),
  always: z
    .boolean()
    .describe("With approve: a standing permission for this crow, this task type and this tool.")
    .optional(),
});

export const toolCallRoutes = [
  defineRoute({
    method: "GET",
    path: "/api/tool-calls",
    scope: "read",
    operationId: "listPendingToolCalls",
    summary: "Tool calls waiting for the owner's decision, oldest first, with their whole arguments",
    tags: ["tools"],
    responses: {
      "200": answer("The calls.", {
        type: "object",
        required: ["tool_calls"],
        properties: { tool_calls: { type: "array", items: ref("PendingToolCall") } },
      }),
    },
    async handle(app) {
      const calls = await app.flock.toolCalls.pending();
      return { status: 200, json: { tool_calls: calls.map(pendingCallJson) } };
    },
  }),
  defineRoute({
    method: "POST",
    path: "/api/tool-calls/{call_id}/decision",
    scope: "decide",
    operationId: "decideToolCall",
    summary: "Approve or refuse a tool call (with a reason), or approve it always for this crow and task type",
    tags: ["tools"],
    params: Call,
    engineBody: { schema: DecisionInput, name: "ToolCallDecisionInput" },
    responses: {
      "200": answer("Decided.", ref("ToolCallDecision")),
      "400": refused("A bad body: approve missing or not a boolean, a reason too long, always without approve."),
      "404": refused("Nothing waits on this call: no such call, decided already, or its deadline passed."),
    },
    async handle(app, { params }, request) {
      const body = await bodyObject(request);
      const decision = await app.flock.toolCalls.decide(
        params.call_id,
        { approve: body.approve, reason: body.reason, always: body.always },
        request.principal.actor,
      );
      return { status: 200, json: { call_id: params.call_id, decision } };
    },
  }),
  defineRoute({
    method: "GET",
    path: "/api/tool-permissions",
    scope: "read",
    operationId: "listToolPermissions",
    summary: "Standing permissions, newest first",
    tags: ["tools"],
    handlerQuery: { revoked: described(z.enum(["true", "false"]), "true: revoked ones too (the audit).") },
    responses: {
      "200": answer("The permissions.", {
        type: "object",
        required: ["permissions"],
        properties: { permissions: { type: "array", items: ref("ToolPermission") } },
      }),
    },
    async handle(app, _input, request) {
      const rows = await app.flock.toolCalls.permissions.list(request.query.get("revoked") === "true");
      return { status: 200, json: { permissions: rows.map(permissionJson) } };
    },
  }),
  defineRoute({
    method: "DELETE",
    path: "/api/tool-permissions/{permission_id}",
    scope: "decide",
    operationId: "revokeToolPermission",
    summary: "Revoke a standing permission: the tool asks again from the next call",
    tags: ["tools"],
    params: Permission,
    responses: { "204": bare("Revoked."), "404": refused("No such permission, or revoked already.") },
    async handle(app, { params }, request) {
      await app.flock.toolCalls.permissions.revoke(params.permission_id, request.principal.actor);
      return { status: 204 };
    },
  }),
];

/** A call waiting for the owner: its arguments whole (bounded by CROWS_TOOL_ARGS_BYTES when asked). */
export function pendingCallJson(call: ToolCall) {
  let args: unknown = call.args;
  try {
    args = JSON.parse(call.args);
  } catch {}
  return {
    call_id: call.id,
    list_id: call.listId,
    item_id: call.nestId === "" ? call.itemId : "",
    crow: call.crow,
    task_type: call.taskType,
    server_id: call.serverId,
    server: call.serverName,
    tool: call.tool,
    args,
    read_only: call.readOnly,
    deadline: call.deadline?.toISOString() ?? null,
    asked_at: call.createdAt.toISOString(),
    // A nest crow's call (answering a request): its nest and the request; "" for a list flight's.
    nest_id: call.nestId,
    refers_to: call.nestId === "" ? "" : call.itemId,
  };
}

export function permissionJson(row: ToolPermission) {
  return {
    permission_id: row.id,
    crow: row.crow,
    task_type: row.taskType,
    server_id: row.serverId,
    tool: row.tool,
    granted_at: row.grantedAt.toISOString(),
    granted_by: row.grantedBy,
    call_id: row.callId,
    revoked_at: row.revokedAt?.toISOString() ?? null,
  };
}

// The owner's side of tool calls (docs/tools.md "The approval of a call"):
//   GET    /api/tool-calls                          calls waiting for a decision, with their whole arguments (read);
//   POST   /api/tool-calls/{call_id}/decision       {"approve", "reason"?, "always"?} -> 200 {call_id, decision} (decide);
//                                                   404 when nothing waits on it (decided, or past its deadline);
//   GET    /api/tool-permissions                    standing permissions; ?revoked=true lists revoked ones too (read);
//   DELETE /api/tool-permissions/{permission_id}    revokes one -> 204 (decide).
import type { ToolCall, ToolPermission } from "../src/generated/prisma/client.ts";
import { bodyObject, type Route } from "./router.ts";

export const toolCallRoutes: Route[] = [
  {
    method: "GET",
    path: "/api/tool-calls",
    async handle(app) {
      const calls = await app.flock.toolCalls.pending();
      return { status: 200, json: { tool_calls: calls.map(pendingCallJson) } };
    },
  },
  {
    method: "POST",
    path: "/api/tool-calls/{call_id}/decision",
    async handle(app, request) {
      const body = await bodyObject(request);
      const callId = request.params.call_id!;
      const decision = await app.flock.toolCalls.decide(
        callId,
        { approve: body.approve, reason: body.reason, always: body.always },
        request.principal.actor,
      );
      return { status: 200, json: { call_id: callId, decision } };
    },
  },
  {
    method: "GET",
    path: "/api/tool-permissions",
    async handle(app, request) {
      const rows = await app.flock.toolCalls.permissions.list(request.query.get("revoked") === "true");
      return { status: 200, json: { permissions: rows.map(permissionJson) } };
    },
  },
  {
    method: "DELETE",
    path: "/api/tool-permissions/{permission_id}",
    async handle(app, request) {
      await app.flock.toolCalls.permissions.revoke(request.params.permission_id!, request.principal.actor);
      return { status: 204 };
    },
  },
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
    item_id: call.itemId,
    crow: call.crow,
    task_type: call.taskType,
    server_id: call.serverId,
    server: call.serverName,
    tool: call.tool,
    args,
    read_only: call.readOnly,
    deadline: call.deadline?.toISOString() ?? null,
    asked_at: call.createdAt.toISOString(),
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

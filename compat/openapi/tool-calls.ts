// The named answer shapes of /api/tool-calls and /api/tool-permissions (compat/tool-calls.ts holds
// the routes; docs/tools.md).
import type { Schema } from "./types.ts";
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
      nest_id: { type: "string", description: 'A nest crow\'s call: its nest (list_id and item_id are then "").' },
      refers_to: { type: "string", description: 'A nest crow\'s call: the request it answers; "" otherwise.' },
    },
    { description: "A tool call waiting for the owner; unanswered by its deadline, it is refused (timeout)." },
  ),
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

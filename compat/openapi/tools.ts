// The named answer shapes of /api/tools/servers* (compat/tools.ts holds the routes; docs/tools.md).
import { ref } from "./types.ts";
import { TOOL_POLICIES } from "../../src/tools/types.ts";

const str = { type: "string" };
const policy = { type: "string", enum: [...TOOL_POLICIES] };
const names = { type: "array", items: str };

export const toolSchemas = {
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

// The shape of an audit entry (compat/audit.ts), named once.
import { ref } from "./types.ts";

export const auditSchemas = {
  AuditEntry: {
    type: "object",
    required: ["id", "stream", "seq", "kind", "ts", "actor", "payload"],
    properties: {
      id: { type: "integer", description: "The log's global id." },
      stream: { type: "string" },
      seq: { type: "integer" },
      kind: { type: "string", description: "The event's name." },
      ts: { type: "string", format: "date-time" },
      actor: ref("Actor"),
      payload: { type: "object" },
    },
  },
};

// POST /api/lists/{list_id}/cancel (compat/cancel.ts; docs/rules.md "Cancelling a list").
import { json, refusal, type Paths, type Schema } from "./types.ts";

export const cancelSchemas: Record<string, Schema> = {
  ListCancelling: {
    type: "object",
    required: ["list_id", "cancelled_at"],
    properties: {
      list_id: { type: "string" },
      cancelled_at: { type: "string", format: "date-time", description: "When the first cancel was recorded." },
    },
  },
};

export const cancelPaths: Paths = {
  "/api/lists/{list_id}/cancel": {
    post: {
      operationId: "cancelList",
      summary: "Cancel a running list: what waits is skipped, flights in the air land, approvals waiting are rejected",
      description:
        "Needs write. The list's stream ends with list.finished carrying cancelled: true and the canceller's actor. Asked again before it finishes, the same 202.",
      tags: ["lists"],
      parameters: [{ name: "list_id", in: "path", required: true, schema: { type: "string" } }],
      responses: {
        "202": json("Cancelling: follow the rest on /api/events?list_id=.", {
          $ref: "#/components/schemas/ListCancelling",
        }),
        "404": refusal("An unknown list."),
        "409": refusal("The list has finished (ran to its end, or was cancelled before): nothing to cancel."),
      },
    },
  },
};

// GET /api/export/events (NDJSON), /api/export/verdicts and /api/export/trust-history (CSV).
import { query, refusal, type Paths } from "./types.ts";

const after = query(
  "after",
  "Resume after this id: the last one a previous export delivered (default 0: from the start).",
  { type: "integer", minimum: 0 },
);

const csv = (description: string, columns: string) => ({
  description: `${description} Columns, always in this order, after a header row: ${columns}.`,
  content: { "text/csv": { schema: { type: "string" } } },
});

export const exportPaths: Paths = {
  "/api/export/events": {
    get: {
      operationId: "exportEvents",
      summary: "The log as NDJSON, one event a line, from a resume point to where it ended when the export began",
      tags: ["export"],
      parameters: [
        after,
        query("stream", "Only this stream's events (list:<id>, nest:<id>, watch:<id>).", { type: "string" }),
      ],
      responses: {
        "200": {
          description:
            "One JSON object a line: id (the resume point), stream, seq, name, ts and payload (the event's wire payload).",
          content: {
            "application/x-ndjson": {
              schema: {
                type: "object",
                required: ["id", "stream", "seq", "name", "ts", "payload"],
                properties: {
                  id: { type: "integer" },
                  stream: { type: "string" },
                  seq: { type: "integer" },
                  name: { type: "string" },
                  ts: { type: "string", format: "date-time" },
                  payload: { type: "object" },
                },
              },
            },
          },
        },
        "400": refusal("A bad after or stream."),
      },
    },
  },
  "/api/export/verdicts": {
    get: {
      operationId: "exportVerdicts",
      summary: "Every verdict the log recorded, as CSV",
      tags: ["export"],
      parameters: [after],
      responses: {
        "200": csv(
          "Verdicts in log order; resume with the last event_id. actor is the verdict's actor kind, with the token's id and name for a token.",
          "event_id, ts, list_id, item_id, target, verdict, actor, actor_token_id, actor_token_name",
        ),
        "400": refusal("A bad after."),
      },
    },
  },
  "/api/export/trust-history": {
    get: {
      operationId: "exportTrustHistory",
      summary: "The whole trust history, as CSV",
      tags: ["export"],
      parameters: [after],
      responses: {
        "200": csv(
          "Entries by id; resume with the last id. actor is who decided the entry's verdict (for the Sentry's record, who replied to its ask), with the token's id and name for a token; empty on entries older than deciders on the ledger.",
          "id, at, holder, task_type, verdict, subject, from, to, actor, actor_token_id, actor_token_name",
        ),
        "400": refusal("A bad after."),
      },
    },
  },
};

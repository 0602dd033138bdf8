// GET /api/trust (bounded) and GET /api/trust/history (the whole history, a page at a time).
import { json, query, ref, refusal, type Paths } from "./types.ts";

export const trustPaths: Paths = {
  "/api/trust": {
    get: {
      operationId: "getTrust",
      summary: "The ledger: every record's counts, newest 20 history rows and history_total",
      tags: ["trust"],
      responses: { "200": json("Sorted by holder, then task type.", ref("TrustLedger")) },
    },
  },
  "/api/trust/history": {
    get: {
      operationId: "getTrustHistory",
      summary: "A page of the whole trust history, newest first by page, oldest first within it",
      tags: ["trust"],
      parameters: [
        query("holder", "One holder's entries.", { type: "string" }),
        query("task_type", "One task type's entries.", { type: "string" }),
        query("before", "Entries with an id below this (the previous page's next_before).", {
          type: "integer",
          minimum: 1,
        }),
        query("limit", "Page size, default 50.", { type: "integer", minimum: 1, maximum: 100 }),
      ],
      responses: { "200": json("The page.", ref("TrustHistoryPage")), "400": refusal("A bad parameter, named.") },
    },
  },
};

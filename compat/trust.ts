// GET /api/trust: every ledger record with its counts, its newest history rows and history_total
// (docs/flock.md §3: bounded); GET /api/trust/history pages the whole history back by entry id,
// each entry with who decided it (`actor`, null on entries older than deciders on the ledger) and
// the reason they gave (`reason`, only when one was given).
import { MAX_PAGE } from "../src/base/util/clamp.ts";
import { ref } from "./openapi/types.ts";
import { intQuery, textQuery } from "./query-params.ts";
import { answer, refused } from "./responses.ts";
import { defineRoute } from "./route.ts";

/** The page size of /api/trust/history when `limit` is absent. */
const DEFAULT_HISTORY_PAGE = 50;

export const trustRoutes = [
  defineRoute({
    method: "GET",
    path: "/api/trust",
    scope: "read",
    operationId: "getTrust",
    summary: "The ledger: every record's counts, newest 20 history rows and history_total",
    tags: ["trust"],
    responses: { "200": answer("Sorted by holder, then task type.", ref("TrustLedger")) },
    async handle(app) {
      return { status: 200, json: { ledger: await app.flock.trust.snapshot() } };
    },
  }),
  defineRoute({
    method: "GET",
    path: "/api/trust/history",
    scope: "read",
    operationId: "getTrustHistory",
    summary: "A page of the whole trust history, newest first by page, oldest first within it",
    tags: ["trust"],
    query: {
      holder: textQuery("holder", "One holder's entries."),
      task_type: textQuery("task_type", "One task type's entries."),
      before: intQuery(
        "before",
        1,
        Number.MAX_SAFE_INTEGER,
        "Entries with an id below this (the previous page's next_before).",
      ),
      limit: intQuery("limit", 1, MAX_PAGE, "Page size, default 50."),
    },
    responses: { "200": answer("The page.", ref("TrustHistoryPage")), "400": refused("A bad parameter, named.") },
    async handle(app, { query }) {
      const limit = query.limit ?? DEFAULT_HISTORY_PAGE;
      const entries = await app.flock.trust.page(
        { holder: query.holder, taskType: query.task_type },
        limit,
        query.before,
      );
      return {
        status: 200,
        json: {
          history: entries.map((e) => ({
            id: e.id,
            holder: e.holder,
            task_type: e.taskType,
            verdict: e.verdict,
            subject: e.subject,
            from: e.from,
            to: e.to,
            at: e.at,
            actor: e.actor,
            // Absent when none was given, as on the verdict event (docs/rules.md "Reasons").
            ...(e.reason === null ? {} : { reason: e.reason }),
          })),
          // The page before this one starts below its first id; a short page is the oldest.
          next_before: entries.length === limit ? entries[0]!.id : null,
        },
      };
    },
  }),
];

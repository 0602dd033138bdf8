// GET /api/trust: every ledger record with its counts, its newest history rows and history_total
// (FLOCK.md section 3: bounded); GET /api/trust/history pages the whole history back by entry id,
// each entry with who decided it (`actor`, null on entries older than deciders on the ledger) and
// the reason they gave (`reason`, only when one was given).
import type { Route } from "./router.ts";
import { intParam, textParam } from "./query-params.ts";
import { MAX_PAGE } from "../src/base/util/clamp.ts";

/** The page size of /api/trust/history when `limit` is absent. */
const DEFAULT_HISTORY_PAGE = 50;

export const trustRoutes: Route[] = [
  {
    method: "GET",
    path: "/api/trust",
    async handle(app) {
      return { status: 200, json: { ledger: await app.flock.trust.snapshot() } };
    },
  },
  {
    method: "GET",
    path: "/api/trust/history",
    async handle(app, request) {
      const holder = textParam(request.query, "holder");
      const taskType = textParam(request.query, "task_type");
      const before = intParam(request.query, "before", 1, Number.MAX_SAFE_INTEGER);
      const limit = intParam(request.query, "limit", 1, MAX_PAGE) ?? DEFAULT_HISTORY_PAGE;
      const entries = await app.flock.trust.page({ holder, taskType }, limit, before);
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
  },
];

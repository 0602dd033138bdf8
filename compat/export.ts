// GET /api/export/events (NDJSON), /api/export/verdicts and /api/export/trust-history (CSV): the
// whole log, or what it recorded, streamed a page at a time with backpressure from a resume point
// (`after`: the last id a client saw) up to where the data ended when the export began. Reads, so
// a read-only token may export (docs/rules.md "Export").
import { z } from "zod";
import type { App } from "../src/app.ts";
import type { SseBody, SseSink } from "../src/http/sse/types.ts";
import { intQuery, textQuery } from "./query-params.ts";
import { answer, refused } from "./responses.ts";
import { defineRoute } from "./route.ts";
import { eventPages, trustHistoryPages, verdictPages, type ExportedEvent } from "../src/log/export-pages.ts";
import { describeError } from "../src/base/describe-error.ts";
import {
  csvRow,
  eventLine,
  REASON_COLUMN,
  TRUST_HISTORY_COLUMNS,
  trustHistoryRow,
  VERDICT_COLUMNS,
  verdictRow,
} from "./export-format.ts";

/**
 * Writes each page as one chunk, waiting for the client to take it before reading the next, and
 * stops reading when the client goes. A failed read cuts the response off rather than ending it,
 * so the client sees an interrupted export (and resumes from its last id) instead of a short one.
 */
function pagedBody<T>(
  app: App,
  what: string,
  pages: AsyncGenerator<T[]>,
  render: (row: T) => string,
  head = "",
): SseBody {
  return {
    start(sink: SseSink) {
      let stopped = false;
      void (async () => {
        try {
          if (head && !sink.write(Buffer.from(head))) await sink.drained();
          for await (const page of pages) {
            if (stopped || sink.closed) break;
            if (!sink.write(Buffer.from(page.map(render).join("")))) await sink.drained();
          }
          if (!sink.closed) sink.end();
        } catch (error) {
          app.logLine(`compat: the ${what} export failed: ${describeError(error)}`);
          if (sink.abort) sink.abort();
          else sink.end();
        } finally {
          await pages.return(undefined);
        }
      })();
      return () => {
        stopped = true;
      };
    },
  };
}

const after = intQuery(
  "after",
  0,
  Number.MAX_SAFE_INTEGER,
  "Resume after this id: the last one a previous export delivered (default 0: from the start).",
);

/** `with=reason`: the CSV's one optional column, appended last (export-format.ts); anything else is a 400. */
const withColumn = textQuery(
  "with",
  `An optional column to append last: "${REASON_COLUMN}" (the owner's reason, docs/rules.md "Reasons").`,
).pipe(z.enum([REASON_COLUMN], `with may only be "${REASON_COLUMN}".`).optional());

const csvHeaders = (name: string) => ({
  "content-type": "text/csv; charset=utf-8",
  "content-disposition": `attachment; filename="${name}.csv"`,
  "cache-control": "no-store",
});

const csv = (description: string, columns: string) =>
  answer(`${description} Columns, always in this order, after a header row: ${columns}.`, z.string(), "text/csv");

const ExportedLine = z.object({
  id: z.int(),
  stream: z.string(),
  seq: z.int(),
  name: z.string(),
  ts: z.string().meta({ format: "date-time" }),
  payload: z.object({}).loose(),
});

export const exportRoutes = [
  defineRoute({
    method: "GET",
    path: "/api/export/events",
    scope: "read",
    operationId: "exportEvents",
    summary: "The log as NDJSON, one event a line, from a resume point to where it ended when the export began",
    tags: ["export"],
    query: { after, stream: textQuery("stream", "Only this stream's events (list:<id>, nest:<id>, watch:<id>).") },
    responses: {
      "200": answer(
        "One JSON object a line: id (the resume point), stream, seq, name, ts and payload (the event's wire payload).",
        ExportedLine,
        "application/x-ndjson",
      ),
      "400": refused("A bad after or stream."),
    },
    async handle(app, { query }) {
      const pages = eventPages(app.prisma, query.after ?? 0, query.stream);
      return {
        stream: pagedBody<ExportedEvent>(app, "events", pages, eventLine),
        init: { status: 200, headers: { "content-type": "application/x-ndjson", "cache-control": "no-store" } },
      };
    },
  }),
  defineRoute({
    method: "GET",
    path: "/api/export/verdicts",
    scope: "read",
    operationId: "exportVerdicts",
    summary: "Every verdict the log recorded, as CSV",
    tags: ["export"],
    query: { after, with: withColumn },
    responses: {
      "200": csv(
        "Verdicts in log order; resume with the last event_id. actor is the verdict's actor kind, with the token's id and name for a token.",
        "event_id, ts, list_id, item_id, target, verdict, actor, actor_token_id, actor_token_name",
      ),
      "400": refused("A bad after."),
    },
    async handle(app, { query }) {
      const pages = verdictPages(app.prisma, query.after ?? 0);
      const reason = query.with === REASON_COLUMN;
      const columns = reason ? [...VERDICT_COLUMNS, REASON_COLUMN] : VERDICT_COLUMNS;
      return {
        stream: pagedBody(app, "verdicts", pages, (e) => verdictRow(e, reason), csvRow(columns)),
        init: { status: 200, headers: csvHeaders("verdicts") },
      };
    },
  }),
  defineRoute({
    method: "GET",
    path: "/api/export/trust-history",
    scope: "read",
    operationId: "exportTrustHistory",
    summary: "The whole trust history, as CSV",
    tags: ["export"],
    query: { after, with: withColumn },
    responses: {
      "200": csv(
        "Entries by id; resume with the last id. actor is who decided the entry's verdict (for the Sentry's record, who replied to its ask), with the token's id and name for a token; empty on entries older than deciders on the ledger.",
        "id, at, holder, task_type, verdict, subject, from, to, actor, actor_token_id, actor_token_name",
      ),
      "400": refused("A bad after."),
    },
    async handle(app, { query }) {
      const pages = trustHistoryPages(app.prisma, app.database.trustReads, query.after ?? 0);
      const reason = query.with === REASON_COLUMN;
      const columns = reason ? [...TRUST_HISTORY_COLUMNS, REASON_COLUMN] : TRUST_HISTORY_COLUMNS;
      return {
        stream: pagedBody(app, "trust history", pages, (e) => trustHistoryRow(e, reason), csvRow(columns)),
        init: { status: 200, headers: csvHeaders("trust-history") },
      };
    },
  }),
];

// GET /api/export/events (NDJSON), /api/export/verdicts and /api/export/trust-history (CSV): the
// whole log, or what it recorded, streamed a page at a time with backpressure from a resume point
// (`after`: the last id a client saw) up to where the data ended when the export began. Reads, so
// a read-only token may export (docs/rules.md "Export").
import type { Route } from "./router.ts";
import type { App } from "../src/app.ts";
import type { SseBody, SseSink } from "../src/http/sse/types.ts";
import { intParam, textParam } from "./query-params.ts";
import { eventPages, trustHistoryPages, verdictPages, type ExportedEvent } from "../src/log/export-pages.ts";
import { describeError } from "../src/base/describe-error.ts";
import { HttpError } from "../src/http/http-error.ts";
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

/** `with=reason`: the CSV's one optional column, appended last (export-format.ts); anything else is a 400. */
function withReasonOf(query: URLSearchParams): boolean {
  const value = textParam(query, "with");
  if (value === undefined) return false;
  if (value !== REASON_COLUMN) throw new HttpError(400, `with may only be "${REASON_COLUMN}".`);
  return true;
}

const afterOf = (query: URLSearchParams) => intParam(query, "after", 0, Number.MAX_SAFE_INTEGER) ?? 0;

const csvHeaders = (name: string) => ({
  "content-type": "text/csv; charset=utf-8",
  "content-disposition": `attachment; filename="${name}.csv"`,
  "cache-control": "no-store",
});

export const exportRoutes: Route[] = [
  {
    method: "GET",
    path: "/api/export/events",
    async handle(app, request) {
      const after = afterOf(request.query);
      const stream = textParam(request.query, "stream");
      const pages = eventPages(app.prisma, after, stream);
      return {
        stream: pagedBody<ExportedEvent>(app, "events", pages, eventLine),
        init: { status: 200, headers: { "content-type": "application/x-ndjson", "cache-control": "no-store" } },
      };
    },
  },
  {
    method: "GET",
    path: "/api/export/verdicts",
    async handle(app, request) {
      const pages = verdictPages(app.prisma, afterOf(request.query));
      const reason = withReasonOf(request.query);
      const columns = reason ? [...VERDICT_COLUMNS, REASON_COLUMN] : VERDICT_COLUMNS;
      return {
        stream: pagedBody(app, "verdicts", pages, (e) => verdictRow(e, reason), csvRow(columns)),
        init: { status: 200, headers: csvHeaders("verdicts") },
      };
    },
  },
  {
    method: "GET",
    path: "/api/export/trust-history",
    async handle(app, request) {
      const pages = trustHistoryPages(app.prisma, app.database.trustReads, afterOf(request.query));
      const reason = withReasonOf(request.query);
      const columns = reason ? [...TRUST_HISTORY_COLUMNS, REASON_COLUMN] : TRUST_HISTORY_COLUMNS;
      return {
        stream: pagedBody(app, "trust history", pages, (e) => trustHistoryRow(e, reason), csvRow(columns)),
        init: { status: 200, headers: csvHeaders("trust-history") },
      };
    },
  },
];

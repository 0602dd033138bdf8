// The bulk export's reads: the log, its verdicts and the trust history, a page at a time in id
// order from a resume point up to where the data ended when the export began, so a reader holds
// one page, never the table (docs/rules.md "Export"). Each read is by an index: the primary key,
// (name) for verdicts (SQLite's carries the rowid), (stream, seq) for one stream.
import type { PrismaClient } from "../generated/prisma/client.ts";
import type { TrustHistoryRow, TrustReads } from "../storage/trust-history.ts";
import type { EventRow } from "../storage/events/types.ts";

/** Rows a page holds: enough to keep a client busy, small enough to hold. */
export const EXPORT_PAGE = 1000;

/** An event as exported: the log's own row (its payload the stored wire JSON, ts in ISO form). */
export type ExportedEvent = EventRow;

const toExported = (row: {
  id: number;
  stream: string;
  seq: number;
  name: string;
  payload: string;
  ts: Date;
}): ExportedEvent => ({ ...row, ts: row.ts.toISOString() });

/**
 * Pages of `read(after)` until it is empty or passes `upTo`, each page's last id the next `after`.
 * A row past `upTo` was written after the export began: the next export's.
 */
async function* pagesUpTo<T>(
  after: number,
  upTo: number,
  idOf: (row: T) => number,
  read: (after: number) => Promise<T[]>,
): AsyncGenerator<T[]> {
  let cursor = after;
  while (cursor < upTo) {
    const page = (await read(cursor)).filter((row) => idOf(row) <= upTo);
    if (page.length === 0) return;
    yield page;
    cursor = idOf(page.at(-1)!);
  }
}

async function lastEventId(prisma: PrismaClient): Promise<number> {
  return (await prisma.event.findFirst({ orderBy: { id: "desc" }, select: { id: true } }))?.id ?? 0;
}

/** The log's events after global id `after`, every stream's or one's. */
export async function* eventPages(
  prisma: PrismaClient,
  after: number,
  stream?: string,
  pageSize = EXPORT_PAGE,
): AsyncGenerator<ExportedEvent[]> {
  const upTo = await lastEventId(prisma);
  if (stream === undefined) {
    yield* pagesUpTo(
      after,
      upTo,
      (e) => e.id,
      async (cursor) =>
        (await prisma.event.findMany({ where: { id: { gt: cursor } }, orderBy: { id: "asc" }, take: pageSize })).map(
          toExported,
        ),
    );
    return;
  }
  // One stream pages by its seq on the (stream, seq) index: a stream's ids rise with its seqs
  // (appends to a stream are serialised), so seq order is id order. The first seq past `after` is
  // found once.
  const first = await prisma.event.findFirst({
    where: { stream, id: { gt: after } },
    orderBy: { seq: "asc" },
    select: { seq: true },
  });
  if (!first) return;
  let seq = first.seq - 1;
  yield* pagesUpTo(
    after,
    upTo,
    (e) => e.id,
    async () => {
      const rows = (
        await prisma.event.findMany({ where: { stream, seq: { gt: seq } }, orderBy: { seq: "asc" }, take: pageSize })
      ).map(toExported);
      seq = rows.at(-1)?.seq ?? seq;
      return rows;
    },
  );
}

/** The log's verdict events after global id `after`. */
export async function* verdictPages(
  prisma: PrismaClient,
  after: number,
  pageSize = EXPORT_PAGE,
): AsyncGenerator<ExportedEvent[]> {
  const upTo = await lastEventId(prisma);
  yield* pagesUpTo(
    after,
    upTo,
    (e) => e.id,
    async (cursor) =>
      (
        await prisma.event.findMany({
          where: { name: "verdict", id: { gt: cursor } },
          orderBy: { id: "asc" },
          take: pageSize,
        })
      ).map(toExported),
  );
}

/** The trust history after entry id `after`. */
export async function* trustHistoryPages(
  prisma: PrismaClient,
  trust: TrustReads,
  after: number,
  pageSize = EXPORT_PAGE,
): AsyncGenerator<TrustHistoryRow[]> {
  const upTo = (await prisma.trustEntry.findFirst({ orderBy: { id: "desc" }, select: { id: true } }))?.id ?? 0;
  yield* pagesUpTo(
    after,
    upTo,
    (e) => e.id,
    (cursor) => trust.entries({ above: cursor, limit: pageSize, descending: false }),
  );
}

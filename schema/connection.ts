// Cursor connections over a row's rising whole-number key (a seq, a message number, an entry id, a
// log id): the one helper every keyed connection uses (docs/graphql.md "Connections"). A cursor is
// the key, named by its connection and made opaque; a page is "the rows past this key", so a row
// inserted anywhere never shifts a page another client holds. Rows the database orders by a unique
// column go through Pothos's prismaConnection instead (lists, items, approvals), with the same bound.
import { BadInputError } from "../src/base/errors.ts";
import { DEFAULT_CONNECTION_PAGE, MAX_PAGE } from "../src/base/util/clamp.ts";

/** A page size when a query gives neither first nor last. */
export const DEFAULT_PAGE = DEFAULT_CONNECTION_PAGE;

/** The Relay arguments every connection takes. */
export interface ConnectionArgs {
  first?: number | null;
  last?: number | null;
  after?: string | null;
  before?: string | null;
}

/** What a keyed connection reads: rows with key above / below the bounds, in key order, at most `limit`. */
export interface KeyRange {
  above?: number;
  below?: number;
  limit: number;
  /** Read from the largest key down (the rows nearest `below`), not from the smallest up. */
  descending: boolean;
}

export interface KeyedConnectionOptions<T> {
  /** Names the cursor: a cursor of another connection is refused, not misread. */
  name: string;
  /** The connection's order: ascending keys (a stream, oldest first) or descending (newest first). */
  order: "asc" | "desc";
  keyOf(row: T): number;
  read(range: KeyRange): Promise<T[]>;
  /** Counted only when a query selects totalCount. */
  totalCount?: () => Promise<number>;
}

export interface Connection<T> {
  edges: Array<{ cursor: string; node: T }>;
  pageInfo: { startCursor?: string | null; endCursor?: string | null; hasPreviousPage: boolean; hasNextPage: boolean };
  totalCount?: () => Promise<number>;
}

/** first / last within 0..MAX_PAGE, so a query's cost can multiply by the bound; a larger ask is refused, not cut. */
export function checkPageSize(args: ConnectionArgs): void {
  for (const name of ["first", "last"] as const) {
    const value = args[name];
    if (value != null && (value < 0 || value > MAX_PAGE)) throw new BadInputError(`${name} must be 0 to ${MAX_PAGE}.`);
  }
  if (args.first != null && args.last != null) throw new BadInputError("Give first or last, not both.");
}

export function encodeCursor(name: string, key: number): string {
  return Buffer.from(`${name}:${key}`, "utf8").toString("base64url");
}

/** The key a cursor of connection `name` carries; a 400 for anything else. */
export function decodeCursor(name: string, cursor: string): number {
  const text = Buffer.from(cursor, "base64url").toString("utf8");
  const key = text.startsWith(`${name}:`) ? text.slice(name.length + 1) : "";
  if (!/^\d{1,15}$/.test(key)) throw new BadInputError(`That cursor does not belong to this connection (${name}).`);
  return Number(key);
}

/**
 * A page of a keyed connection, in the connection's order, with pageInfo and a lazy totalCount.
 * Relay's rules: first/after page forwards, last/before back (last alone: the far end).
 */
export async function keyedConnection<T>(
  args: ConnectionArgs,
  options: KeyedConnectionOptions<T>,
): Promise<Connection<T>> {
  checkPageSize(args);
  const after = args.after ? decodeCursor(options.name, args.after) : undefined;
  const before = args.before ? decodeCursor(options.name, args.before) : undefined;
  const ascending = options.order === "asc";
  const backward = args.last != null || (before !== undefined && args.first == null);
  const size = args.first ?? args.last ?? DEFAULT_PAGE;
  // One row more than the page tells whether there is more beyond it.
  const rows = await options.read({
    // "after" is further along the connection's order: a larger key ascending, a smaller one descending.
    above: ascending ? after : before,
    below: ascending ? before : after,
    limit: size + 1,
    // A backward page is read from its far end, nearest `before`, then turned round.
    descending: ascending === backward,
  });
  const more = rows.length > size;
  const page = rows.slice(0, size);
  if (backward) page.reverse();
  const edges = page.map((node) => ({ cursor: encodeCursor(options.name, options.keyOf(node)), node }));
  return {
    edges,
    pageInfo: {
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges.at(-1)?.cursor ?? null,
      hasPreviousPage: backward ? more : after !== undefined,
      hasNextPage: backward ? before !== undefined : more,
    },
    totalCount: options.totalCount,
  };
}

/** The Prisma `where` on the key column for a range: { gt, lt }. */
export function keyWhere(range: KeyRange): { gt?: number; lt?: number } {
  return {
    ...(range.above === undefined ? {} : { gt: range.above }),
    ...(range.below === undefined ? {} : { lt: range.below }),
  };
}

/**
 * A connection's totalCount, counted only when a query selects it; null for a connection with no
 * cheap count. (The connection object is typed by Pothos without the extra member, hence `object`.)
 */
export function totalCountOf(connection: object): Promise<number> | null {
  const count = (connection as Pick<Connection<unknown>, "totalCount">).totalCount;
  return count ? count() : null;
}

/**
 * A Prisma connection's `maxSize`: Pothos would cut a larger first/last down to it without a word;
 * this refuses it first, as every keyed connection does.
 */
export function checkedMaxSize(args: ConnectionArgs): number {
  checkPageSize(args);
  return MAX_PAGE;
}

// Holding a number within bounds, and the page size every paged read clamps its `limit` with.

/** `value` held within min..max. */
export function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

/** The page size a read asked for (`fallback` when it asked none), held within 1..max. */
export function pageLimit(asked: number | null | undefined, fallback: number, max: number): number {
  return clamp(asked ?? fallback, 1, max);
}

/**
 * The most rows one page may ask for: every GraphQL connection's `first`/`last` and the REST pages
 * (/api/trust/history, a nest's ?limit=). A query's cost can multiply by it.
 */
export const MAX_PAGE = 100;

/** A connection's page when a query gives neither first nor last. */
export const DEFAULT_CONNECTION_PAGE = 20;

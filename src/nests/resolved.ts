// `resolved` (docs/contract.md Payload): computed whenever a record is read, never stored. (The expiry is
// also logged, once, as `ask.expired` by the ask's obligation, obligations/ask-expiry.ts; the
// record's `resolved` does not wait for that event.) It sits below both the posting path (chat.ts)
// and the ask desk (asks.ts), so neither has to import the other for it.

export type Resolved = "" | "approved" | "rejected";

/** The parts of a message row `resolved` depends on. */
export interface ResolvableRow {
  kind: string;
  approvedAt: Date | null;
  createdAt: Date;
}

/** `resolved` at `nowMs`: approved once an exact reply landed in time; rejected past the window. */
export function resolvedOf(row: ResolvableRow, nowMs: number, windowMs: number): Resolved {
  if (row.kind !== "ask_owner") return "";
  if (row.approvedAt) return "approved";
  return nowMs > row.createdAt.getTime() + windowMs ? "rejected" : "";
}

// Where a list and each of its items stand, as stored (docs/flock.md §4; the walk is ListRun's):
//   pending -> awaiting_triage -> working -> awaiting_output -> done
//   or skipped (with a SkipReason) from any stage before done.
// A list is running until every item is done or skipped, then finished. The schema's enums are
// made from these arrays.
export const ITEM_STAGES = ["pending", "awaiting_triage", "working", "awaiting_output", "done", "skipped"] as const;
export type ItemStage = (typeof ITEM_STAGES)[number];

/** The stages an item never leaves. */
export const TERMINAL_STAGES: ReadonlySet<string> = new Set<ItemStage>(["done", "skipped"]);

export const LIST_STATUSES = ["running", "finished"] as const;
export type ListStatus = (typeof LIST_STATUSES)[number];

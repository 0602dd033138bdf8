// How an item's run ends early, short of a stage it reached: thrown inside the run (list-run.ts)
// and the work's flights (crow-work.ts), read by ListRun.itemEnded. One file so both raise the
// same classes.
import type { SkipReason } from "./events.ts";

/**
 * The item was no longer in the stage this run saw it in when the run came to move it: another
 * writer moved it first (an instance that took the list over while this one stalled past its
 * lease, or a skip). Its transaction rolls back, so nothing is appended twice and nothing moves back.
 */
export class ItemMovedOn extends Error {
  constructor(
    readonly itemId: string,
    readonly from: string,
  ) {
    super(`item ${itemId} is no longer ${from}`);
  }
}

/** Ends an item's run with a skip. */
export class SkipItem extends Error {
  constructor(readonly reason: SkipReason) {
    super(reason);
  }
}

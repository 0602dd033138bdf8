// What a list's run writes under (docs/rules.md "One owner's story"), in a file of its own so the
// run, its flights, its banter and the approval desk import it without a cycle.
import type { Fence, StaleEpochError } from "../storage/fence.ts";

/**
 * The fence of the lease its instance claimed (every write to the list carries it,
 * EventLog.fencedAppend), and what to do when the database refuses one (the instance steps down
 * from the list: Flock.stepDown).
 */
export interface ListOwner {
  fence: Fence;
  fencedOut(error: StaleEpochError): void;
}

// Who writes a tool call's records, and where (docs/tools.md "At most once"): the call's place
// (its list, or its nest for a nest crow's answer to a request) with the fence of the lease its
// writer holds: a list's run writes under its list's epoch, a nest crow's turn under the epoch of
// the obligation it answers. The call desk fences every call the same way through it.
import type { Fence, StaleEpochError } from "../storage/fence.ts";
import type { CallPlace } from "./tool-events.ts";
import type { ListOwner } from "./list-owner.ts";

export interface CallOwner extends CallPlace {
  /**
   * The lease's fence every record of the call is written under; null only for a nest turn held by
   * no obligation this instance knows (docs/tools.md "Nest crows with tools"): written unfenced.
   */
  fence: Fence | null;
  /** The database refused a record: the writer steps down (its list, or its obligation and turn). */
  fencedOut(error: StaleEpochError): void;
}

/** A list flight's calls: on the list's stream, under the list owner's fence. */
export const listCallOwner = (listId: string, owner: ListOwner): CallOwner => ({
  listId,
  nestId: "",
  fence: owner.fence,
  fencedOut: (error) => owner.fencedOut(error),
});

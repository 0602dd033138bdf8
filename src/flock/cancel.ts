// Cancelling a list (docs/rules.md "Cancelling a list"). Any instance records the cancel in the
// list's row (a conditional update: once); only the instance running the list acts on it, so no two
// writers race over its items. The owner hears of it at once when the cancel came to it, on the
// list stream's bus nudge when it came to another instance, and at the latest on its next lease
// sweep (the row is the truth); an instance that takes the list over reads it at the start.
import { SYSTEM, actorWire, type Actor } from "../base/actor.ts";

/** The error a flight in the air lands with when its list is cancelled. */
export const CANCELLED_FLIGHT_ERROR = "cancelled: the list was cancelled before this flight landed";

/** Ends an item's run when its list is cancelled (it is skipped, with reason rejected). */
export class ListCancelledError extends Error {
  constructor(readonly listId: string) {
    super(`list ${listId} was cancelled`);
  }
}

/** One running list's cancel on the instance running it: aborted once, naming who cancelled. */
export class ListCancel {
  private readonly controller = new AbortController();
  private by: Actor = SYSTEM;

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get cancelled(): boolean {
    return this.controller.signal.aborted;
  }

  /** Who cancelled (system until someone did). */
  get actor(): Actor {
    return this.by;
  }

  /** Cancels from the stored row's cancelledBy; a second call changes nothing. */
  cancelFromRow(cancelledBy: string | null): void {
    if (this.cancelled) return;
    this.by = actorOfStored(cancelledBy);
    this.controller.abort(new Error("the list was cancelled"));
  }
}

/** The canceller as TodoList.cancelledBy keeps it. */
export function storedActor(actor: Actor): string {
  return JSON.stringify(actorWire(actor));
}

/** The actor TodoList.cancelledBy keeps; system when the column holds none it can read. */
export function actorOfStored(stored: string | null): Actor {
  if (!stored) return SYSTEM;
  try {
    const parsed = JSON.parse(stored) as Actor;
    return typeof parsed?.kind === "string" ? actorWire(parsed) : SYSTEM;
  } catch {
    return SYSTEM;
  }
}

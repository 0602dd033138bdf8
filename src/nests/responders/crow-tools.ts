// A nest crow's answer with its nest's tools (docs/tools.md "Nest crows with tools"): the list
// flights' one tool loop and call desk (src/flock/tool-flight.ts, tool-calls.ts), run for a request
// instead of an item. The same policies, approvals (window, fail-safe, reasons), standing
// permissions, step limit, call timeout, output cut and at-most-once records; the calls' events go
// on the nest's side log (watch:<nest_id>). Every record of a call is fenced by the epoch of the
// obligation the crow answers under, as a list flight's is by its list's: a turn whose obligation
// another instance took over has its next record refused, sends nothing more and steps down. The
// token budget is CROWS_TOKEN_BUDGET per answer: a request has no list whose budget it could draw on.
import type { CallOwner } from "../../flock/call-owner.ts";
import { flightKeyOf, type ToolFlightOutcome, type ToolFlights } from "../../flock/tool-flight.ts";
import type { ModelRequest } from "../../models/model.ts";
import type { Fence, StaleEpochError } from "../../storage/fence.ts";

/** One crow's turn at one request: the flight key is <msg_id>/<slot>/<crow>. */
export interface NestToolTurn {
  nestId: string;
  requestId: string;
  /** `nest` for a request's one crow; `lens-<i>` for a conspiracy's lens. */
  slot: string;
  crow: string;
  taskType: string;
}

/** The obligations a turn answers under (Obligations gives them). */
export interface TurnLeases {
  /** The fence of the obligation the crow answers `requestId` under; null when none is known here. */
  callFence(requestId: string, crow: string): Fence | null;
  /** A record under that fence was refused: this instance steps down from the obligation. */
  fencedOut(error: StaleEpochError): void;
  /** Calls `stop` once this instance steps down from obligation `id`; the function returned forgets it. */
  whenSteppedDown(id: string, stop: () => void): () => void;
}

export interface NestCrowToolsDeps {
  /** The tool loop for one turn, its calls written by `owner`, stopped by `signal`. */
  flightsFor(owner: CallOwner, signal: AbortSignal): ToolFlights;
  leases: TurnLeases;
  /** The nest's background work stopping. */
  stopping: AbortSignal;
  tokenBudget: number;
}

export class NestCrowTools {
  /** Turns running in this process: a second turn of the same crow at the same request (a nudge) joins the first. */
  private readonly running = new Map<string, Promise<ToolFlightOutcome | null>>();

  constructor(private readonly deps: NestCrowToolsDeps) {}

  /** The crow's answer through the tool loop; null when the nest offers it no tools (it speaks as ever). */
  answer(turn: NestToolTurn, request: ModelRequest): Promise<ToolFlightOutcome | null> {
    const key = flightKeyOf(turn.requestId, turn.slot, turn.crow);
    const joined = this.running.get(key);
    if (joined) return joined;
    const run = this.run(turn, request).finally(() => this.running.delete(key));
    this.running.set(key, run);
    return run;
  }

  private async run(turn: NestToolTurn, request: ModelRequest): Promise<ToolFlightOutcome | null> {
    const { requestId, slot, crow, nestId, taskType } = turn;
    const { leases } = this.deps;
    // The turn writes under the epoch held now; refused, or its obligation seen taken over by the
    // lease sweep, it steps down and stops (as a list's run): its calls in the air are abandoned.
    const steppedDown = new AbortController();
    const fence = leases.callFence(requestId, crow);
    const owner: CallOwner = {
      listId: "",
      nestId,
      fence,
      fencedOut: (error) => {
        leases.fencedOut(error);
        steppedDown.abort();
      },
    };
    const forget = fence ? leases.whenSteppedDown(fence.id, () => steppedDown.abort()) : () => {};
    try {
      const flights = this.deps.flightsFor(owner, AbortSignal.any([this.deps.stopping, steppedDown.signal]));
      // A turn resumed after a restart finds its stored calls under the same key and goes on from them.
      const prepared = await flights.prepare({ itemId: requestId, slot, crow, nestId });
      if (!prepared) return null;
      const outcome = await flights.run(
        {
          itemId: requestId,
          crow,
          taskType,
          nestId,
          slot,
          budget: { tokenBudget: this.deps.tokenBudget, tokensUsed: 0 },
          request,
        },
        prepared,
      );
      await flights.desk.landed(prepared.flightKey, owner);
      return outcome;
    } finally {
      forget();
    }
  }
}

// A nest crow's answer with its nest's tools (docs/tools.md "Nest crows with tools"): the list
// flights' one tool loop and call desk (src/flock/tool-flight.ts, tool-calls.ts), run for a request
// instead of an item. The same policies, approvals (window, fail-safe, reasons), standing
// permissions, step limit, call timeout, output cut and at-most-once records; the calls' events go
// on the nest's side log (watch:<nest_id>). The token budget is CROWS_TOKEN_BUDGET per answer: a
// request has no list whose budget it could draw on.
import { flightKeyOf, type ToolFlightOutcome, type ToolFlights } from "../../flock/tool-flight.ts";
import type { ModelRequest } from "../../models/model.ts";

/** One crow's turn at one request: the flight key is <msg_id>/<slot>/<crow>. */
export interface NestToolTurn {
  nestId: string;
  requestId: string;
  /** `nest` for a request's one crow; `lens-<i>` for a conspiracy's lens. */
  slot: string;
  crow: string;
  taskType: string;
}

export class NestCrowTools {
  /** Turns running in this process: a second turn of the same crow at the same request (a nudge) joins the first. */
  private readonly running = new Map<string, Promise<ToolFlightOutcome | null>>();

  constructor(
    private readonly flights: ToolFlights,
    private readonly tokenBudget: number,
  ) {}

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
    // A turn resumed after a restart finds its stored calls under the same key and goes on from them.
    const prepared = await this.flights.prepare({ itemId: requestId, slot, crow, nestId });
    if (!prepared) return null;
    const outcome = await this.flights.run(
      {
        listId: "",
        itemId: requestId,
        crow,
        taskType,
        nestId,
        slot,
        budget: { tokenBudget: this.tokenBudget, tokensUsed: 0 },
        request,
        nestRequest: true,
      },
      prepared,
    );
    await this.flights.desk.landed(prepared.flightKey, undefined);
    return outcome;
  }
}

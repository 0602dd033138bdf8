// A flight: one model call by one crow (or the Sentry, the Elder, Quill) on one item, announced by
// crow.flying and closed by crow.landed with its tokens. Tokens count against the list's budget in
// the same transaction as crow.landed. A flight that would start with the budget spent does not
// start (BudgetSpentError): the item is skipped with reason `budget`.
import { landed, tookOff } from "./airborne.ts";
import type { EventLog } from "../log/event-log.ts";
import type { Model, ModelReply, RoleInput } from "../models/model.ts";
import { totalTokens } from "../models/model.ts";
import { renderRequest } from "../models/prompts.ts";
import { listEventPayload } from "./events.ts";
import { listStream } from "../base/streams.ts";
import { isProviderTrouble } from "../models/provider-errors.ts";
import { StoppedError } from "./approvals.ts";
import type { FlightBoard } from "./flight-board.ts";
import { flightWatch, type ProviderWaits } from "./flight-watch.ts";
import type { ToolFlights } from "./tool-flight.ts";
import type { EventDraft, StateTx } from "../log/event-log.ts";
import { StaleEpochError } from "../storage/fence.ts";
import type { ListOwner } from "./list-owner.ts";
import { CANCELLED_FLIGHT_ERROR, ListCancelledError } from "./cancel.ts";

export class BudgetSpentError extends Error {
  constructor(readonly listId: string) {
    super(`the token budget of ${listId} is spent`);
  }
}

export interface ListBudget {
  listId: string;
  tokenBudget: number;
  /** Kept in step with TodoList.tokensUsed, which every landing increments. */
  tokensUsed: number;
}

export interface FlightPlan {
  list: ListBudget;
  itemId: string;
  crow: string;
  /** The persona the crow runs on (a spun crow's backing persona; itself otherwise). */
  persona: string;
  borrowed: boolean;
  work: RoleInput;
  /** A crow's flight that may use its nest's tools (docs/tools.md); absent: no tools, as ever. */
  tools?: { slot: string; taskType: string; nestId: string };
}

/**
 * A failed flight; `provider` marks trouble no other crow can mend (the provider refused the
 * configuration, or stayed unavailable past the patience): the item fails at once.
 */
export type FlightResult =
  | { ok: true; text: string; tokens: number; reply: ModelReply }
  | { ok: false; error: string; tokens: number; provider?: boolean; cancelled?: boolean };

export interface FlightWeather {
  waits: ProviderWaits;
  board?: FlightBoard;
}

export class Flights {
  constructor(
    private readonly log: EventLog,
    private readonly model: Model,
    private readonly signal: AbortSignal,
    private readonly owner: ListOwner,
    private readonly weather?: FlightWeather,
    private readonly tools?: ToolFlights,
    /** The list's cancel: a flight does not start after it, and one in the air is abandoned. */
    private readonly cancel?: AbortSignal,
  ) {}

  async fly(plan: FlightPlan): Promise<FlightResult> {
    const { list, itemId, crow } = plan;
    if (this.signal.aborted) throw new StoppedError();
    if (this.cancel?.aborted) throw new ListCancelledError(list.listId);
    if (list.tokensUsed >= list.tokenBudget) throw new BudgetSpentError(list.listId);
    const prepared = plan.tools && this.tools ? await this.tools.prepare({ itemId, crow, ...plan.tools }) : null;
    // Fenced like every write of the list's owner: a crow.flying from a stale owner would be one
    // the new owner never lands (so not a group commit: those take no fence).
    await this.write(list.listId, async () => [
      {
        name: "crow.flying",
        payload: listEventPayload<"crow.flying">(list.listId, { item_id: itemId, crow, borrowed: plan.borrowed }),
      },
    ]);
    let result: FlightResult;
    let budgetSpent = false;
    // One flight is one crow.flying and one crow.landed, however long the provider makes it wait:
    // the waits show on the FlightBoard, not as landings (docs/rules.md, "Provider weather").
    const watch = this.weather
      ? flightWatch(this.weather.waits, this.weather.board, {
          flightId: this.weather.board?.nextFlightId(itemId) ?? itemId,
          listId: list.listId,
          itemId,
          crow,
        })
      : undefined;
    tookOff(crow);
    try {
      const signal = this.cancel ? AbortSignal.any([this.signal, this.cancel]) : this.signal;
      const request = renderRequest({ ...plan.work, speaker: crow, persona: plan.persona, signal });
      if (prepared && plan.tools && this.tools) {
        const flown = await this.tools.run(
          {
            itemId,
            crow,
            ...plan.tools,
            budget: list,
            request: { ...request, lane: list.listId, ...(watch ? { watch } : {}) },
          },
          prepared,
        );
        budgetSpent = flown.budgetSpent === true;
        result = flown.ok
          ? {
              ok: true,
              text: flown.text,
              tokens: flown.tokens,
              reply: {
                text: flown.text,
                usage: { inputTokens: flown.tokens, outputTokens: 0 },
                model: this.model.name,
              },
            }
          : {
              ok: false,
              error: flown.error ?? "error",
              tokens: flown.tokens,
              ...(flown.provider ? { provider: true } : {}),
            };
      } else {
        const reply = await this.model.generate({ ...request, lane: list.listId, ...(watch ? { watch } : {}) });
        result = { ok: true, text: reply.text, tokens: totalTokens(reply.usage), reply };
      }
      // Cancelled while its tool loop ran: it lands saying so, as a model call cut short does.
      if (!result.ok && this.cancel?.aborted)
        result = { ok: false, error: CANCELLED_FLIGHT_ERROR, tokens: result.tokens, cancelled: true };
    } catch (error) {
      if (error instanceof StoppedError || this.signal.aborted) throw new StoppedError();
      // Cancelled in the air: the flight still lands, once, saying so (every crow.flying lands).
      if (this.cancel?.aborted) result = { ok: false, error: CANCELLED_FLIGHT_ERROR, tokens: 0, cancelled: true };
      else
        result = {
          ok: false,
          error: safeMessage(error),
          tokens: 0,
          ...(isProviderTrouble(error) ? { provider: true } : {}),
        };
    } finally {
      landed(crow);
      watch?.resumed?.();
    }
    // Stepped down while it flew: the fence refuses the landing, so the reply is dropped (the new
    // owner lands this flight as lost).
    await this.land(plan, result, prepared?.flightKey);
    if (result.ok || result.provider) await this.weather?.waits.clear(itemId);
    if (budgetSpent) throw new BudgetSpentError(list.listId);
    if (!result.ok && result.cancelled) throw new ListCancelledError(list.listId);
    return result;
  }

  /** Closes a flight; a reply the caller later finds unusable is landed through here as a failure. */
  private async land(plan: FlightPlan, result: FlightResult, toolFlightKey?: string): Promise<void> {
    const { list, itemId, crow } = plan;
    const payload = result.ok
      ? { item_id: itemId, crow, ok: true, tokens: result.tokens }
      : { item_id: itemId, crow, ok: false, tokens: result.tokens, error: result.error };
    await this.write(list.listId, async (tx) => {
      await tx.addTokens(list.listId, result.tokens);
      // Its tool calls land with it, under the same fence: a later run of the item starts its own.
      if (toolFlightKey) await tx.landToolCalls(toolFlightKey);
      return [{ name: "crow.landed", payload: listEventPayload<"crow.landed">(list.listId, payload) }];
    });
    list.tokensUsed += result.tokens; // after the commit: a refused landing counts nothing
  }

  /** A write of the list's owner, fenced; refused, the owner steps down and the flight stops. */
  private async write(listId: string, build: (tx: StateTx) => Promise<EventDraft[]>): Promise<void> {
    try {
      await this.log.fencedAppend(listStream(listId), this.owner.fence, build);
    } catch (error) {
      if (!(error instanceof StaleEpochError)) throw error;
      this.owner.fencedOut(error);
      throw new StoppedError();
    }
  }
}

/** A one-line error fit for a client: never a key, a prompt or a stack. */
export function safeMessage(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const line = text.split("\n")[0] ?? "error";
  return line.length > 200 ? `${line.slice(0, 197)}...` : line || "error";
}

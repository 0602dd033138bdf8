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
}

/**
 * A failed flight; `provider` marks trouble no other crow can mend (the provider refused the
 * configuration, or stayed unavailable past the patience): the item fails at once.
 */
export type FlightResult =
  | { ok: true; text: string; tokens: number; reply: ModelReply }
  | { ok: false; error: string; tokens: number; provider?: boolean };

export interface FlightWeather {
  waits: ProviderWaits;
  board?: FlightBoard;
}

export class Flights {
  constructor(
    private readonly log: EventLog,
    private readonly model: Model,
    private readonly signal: AbortSignal,
    private readonly weather?: FlightWeather,
  ) {}

  async fly(plan: FlightPlan): Promise<FlightResult> {
    const { list, itemId, crow } = plan;
    if (this.signal.aborted) throw new StoppedError();
    if (list.tokensUsed >= list.tokenBudget) throw new BudgetSpentError(list.listId);
    const stream = listStream(list.listId);
    await this.log.append(
      stream,
      "crow.flying",
      listEventPayload<"crow.flying">(list.listId, { item_id: itemId, crow, borrowed: plan.borrowed }),
    );
    let result: FlightResult;
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
      const request = renderRequest({ ...plan.work, speaker: crow, persona: plan.persona, signal: this.signal });
      const reply = await this.model.generate({ ...request, lane: list.listId, ...(watch ? { watch } : {}) });
      result = { ok: true, text: reply.text, tokens: totalTokens(reply.usage), reply };
    } catch (error) {
      if (this.signal.aborted) throw new StoppedError();
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
    await this.land(plan, result);
    if (result.ok || result.provider) await this.weather?.waits.clear(itemId);
    return result;
  }

  /** Closes a flight; a reply the caller later finds unusable is landed through here as a failure. */
  private async land(plan: FlightPlan, result: FlightResult): Promise<void> {
    const { list, itemId, crow } = plan;
    list.tokensUsed += result.tokens;
    const payload = result.ok
      ? { item_id: itemId, crow, ok: true, tokens: result.tokens }
      : { item_id: itemId, crow, ok: false, tokens: result.tokens, error: result.error };
    await this.log.appendState(listStream(list.listId), async (tx) => {
      await tx.addTokens(list.listId, result.tokens);
      return [{ name: "crow.landed", payload: listEventPayload<"crow.landed">(list.listId, payload) }];
    });
  }
}

/** A one-line error fit for a client: never a key, a prompt or a stack. */
export function safeMessage(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const line = text.split("\n")[0] ?? "error";
  return line.length > 200 ? `${line.slice(0, 197)}...` : line || "error";
}

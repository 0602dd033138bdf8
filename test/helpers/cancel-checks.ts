// What a cancelled list's fresh replay must show (docs/rules.md "Cancelling a list"): each item
// ends once (one item.skipped, or its output's verdict), every crow.flying lands once, and
// list.finished is the last event, saying cancelled and who.
import * as assert from "uvu/assert";
import { pacedCrows } from "./models.ts";

export interface ReplayedEvent {
  name: string;
  payload: Record<string, any>;
}

/** The offline brain, with every crow call whose prompt holds HANG left in the air until aborted. */
export const hangingCrows = () => pacedCrows((_n, request) => ({ never: request.prompt.includes("HANG") }));

/**
 * A list to cancel while it runs: its first item hangs in the air (with hangingCrows), the others
 * wait on the owner or are still to start, so a cancel finds items in every state.
 */
export const CANCEL_LIST_TEXT = [
  "HANG on the phone with the bank until someone answers",
  "Buy milk",
  "Write a haiku about crows",
  "Call the plumber about the sink",
  "Water the plants",
  "Fold the laundry",
].join("\n");

/** Asserts the cancelled list's invariants on `events` (the list stream from seq 1); returns how each item ended. */
export function assertCancelledReplay(events: ReplayedEvent[], itemIds: string[]): Map<string, string> {
  const last = events[events.length - 1];
  assert.is(last?.name, "list.finished", "list.finished is the last event");
  assert.is(events.filter((e) => e.name === "list.finished").length, 1, "one list.finished");
  assert.is(last!.payload.cancelled, true);
  assert.equal(Object.keys(last!.payload), ["list_id", "tokens_used", "token_budget", "ts", "cancelled", "actor"]);
  const ends = new Map<string, string>();
  for (const id of itemIds) {
    const skips = events.filter((e) => e.name === "item.skipped" && e.payload.item_id === id);
    const outputVerdicts = events.filter(
      (e) => e.name === "verdict" && e.payload.item_id === id && e.payload.target === "output",
    );
    assert.is(
      skips.length + outputVerdicts.length,
      1,
      `${id} ends once (skips ${skips.length}, output verdicts ${outputVerdicts.length})`,
    );
    ends.set(id, skips[0] ? `skipped:${skips[0].payload.reason}` : `output:${outputVerdicts[0]!.payload.verdict}`);
    const flying = events.filter((e) => e.name === "crow.flying" && e.payload.item_id === id);
    const landed = events.filter((e) => e.name === "crow.landed" && e.payload.item_id === id);
    assert.is(landed.length, flying.length, `every flight of ${id} lands once`);
    for (const target of ["triage", "output"])
      assert.ok(
        events.filter((e) => e.name === "verdict" && e.payload.item_id === id && e.payload.target === target).length <=
          1,
        `${id} has at most one ${target} verdict`,
      );
  }
  for (const e of events)
    if (e.name === "item.skipped") assert.ok(["rejected", "timeout", "budget", "failure"].includes(e.payload.reason));
  return ends;
}

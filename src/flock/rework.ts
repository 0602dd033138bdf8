// Another try, on request (docs/rules.md "Rework"): a rejection may ask for the target to be worked
// again. Granted inside the verdict's own transaction, so the verdict, the item sent back and its
// stored note commit together, and a restart (even a kill -9) flies the rework once, from the
// stored stage: an output goes back to `working`, a triage to `pending`. The note carries what was
// rejected and why into the next flight's input; the next announcement (item.answered or
// item.triaged) clears it and opens the target's approval again, one round higher.
import type { StateTx } from "../storage/state-shapes.ts";
import type { Target } from "./events.ts";
import { stringArray } from "../base/util/json-column.ts";
import { DEFAULT_NEST } from "../base/default-nest.ts";
import { isAirborne } from "./airborne.ts";

/** What a request for another try got, as the approval row keeps it. */
export const REWORK_OUTCOMES = ["granted", "out_of_tries", "out_of_budget"] as const;
export type ReworkOutcome = (typeof REWORK_OUTCOMES)[number];

/** The triage the Sentry proposed, as a rework of it hands it back. */
export interface PreviousTriage {
  mode: string;
  task_type: string;
  subtasks: string[];
  reason: string;
}

/** The stored note of a rework waiting to fly (Item.rework). */
export type ReworkNote =
  | { target: "output"; reason: string | null; previous: string }
  | { target: "triage"; reason: string | null; previous: PreviousTriage };

export function readReworkNote(text: string | null | undefined): ReworkNote | null {
  if (!text) return null;
  try {
    const note = JSON.parse(text) as ReworkNote;
    return note && (note.target === "output" || note.target === "triage") ? note : null;
  } catch {
    return null;
  }
}

/**
 * Inside the verdict's transaction: sends the item back for another try when it has tries left and
 * its list has budget left; what the request got either way (null: the item was not waiting on
 * this target any more, so nothing was asked of it).
 */
export async function grantRework(
  tx: StateTx,
  request: { listId: string; itemId: string; target: Target; reason: string | undefined; maxTries: number },
): Promise<ReworkOutcome | null> {
  const item = await tx.item(request.itemId);
  const waiting = request.target === "output" ? "awaiting_output" : "awaiting_triage";
  if (!item || item.stage !== waiting) return null;
  if (item.tries >= request.maxTries) return "out_of_tries";
  const tokens = await tx.listTokens(request.listId);
  if (!tokens || tokens.tokensUsed >= tokens.tokenBudget) return "out_of_budget";
  const reason = request.reason ?? null;
  const note: ReworkNote =
    request.target === "output"
      ? { target: "output", reason, previous: item.answer ?? "" }
      : {
          target: "triage",
          reason,
          previous: {
            mode: item.mode ?? "solo",
            task_type: item.taskType ?? "other",
            subtasks: stringArray(item.subtasks),
            reason: item.reason ?? "",
          },
        };
  const moved = await tx.moveItem(item.id, waiting, {
    stage: request.target === "output" ? "working" : "pending",
    tries: item.tries + 1,
    rework: JSON.stringify(note),
  });
  return moved ? "granted" : null;
}

/**
 * A rework's crew of `count`: the crows who worked the rejected answer first (in their order),
 * skipping one that is quarantined or in the air (airborne.ts), then crows picked as ever for the
 * rest, none of the skipped ones.
 */
export async function reworkCrew(
  previous: string[],
  count: number,
  crew: {
    quarantined(): Promise<Set<string>>;
    core(nestId: string): Promise<string[] | null>;
    pick(count: number, exclude: ReadonlySet<string>): Promise<Array<{ crow: string; borrowed: boolean }>>;
  },
  nestId: string,
): Promise<Array<{ crow: string; borrowed: boolean }>> {
  const [quarantined, core] = await Promise.all([crew.quarantined(), crew.core(nestId)]);
  const coreSet = new Set(core ?? []);
  const kept = previous
    .filter((crow) => !quarantined.has(crow) && !isAirborne(crow))
    .slice(0, count)
    .map((crow) => ({ crow, borrowed: nestId !== DEFAULT_NEST && !coreSet.has(crow) }));
  if (kept.length >= count) return kept;
  return [...kept, ...(await crew.pick(count - kept.length, new Set(previous)))];
}

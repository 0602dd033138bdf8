// What a reply to input-required decides (docs/integrations.md "A2A"): each decision is one verdict
// through the engine call POST /api/verdicts makes (app.flock.postVerdict), in the order given, each
// on its own: one the engine refuses decides nothing for its item and the others still stand. No
// rule is decided here; a refusal is named with the engine's own words.
import type { App } from "../../app.ts";
import type { Actor } from "../../base/actor.ts";
import { BadInputError, CrowsError } from "../../base/errors.ts";
import { TARGETS, type Target } from "../../flock/events.ts";
import type { WaitingApproval } from "../agents/list-view.ts";
import type { BatchEntry } from "./reply.ts";

/** A decision not recorded, and why. */
export interface Refusal {
  /** The entry's item id, or "decision N" for an entry without one. */
  name: string;
  why: string;
}

/**
 * Records each entry as a verdict by `actor` on an item of `listId`; returns the refusals. An entry
 * may leave out `target` for an approval the input-required named (`asked`).
 */
export async function decideAll(
  app: App,
  listId: string,
  asked: WaitingApproval[],
  entries: BatchEntry[],
  actor: Actor,
): Promise<Refusal[]> {
  const refused: Refusal[] = [];
  for (const [i, entry] of entries.entries()) {
    const name = typeof entry.item_id === "string" && entry.item_id !== "" ? entry.item_id : `decision ${i + 1}`;
    try {
      await app.flock.postVerdict({ ...verdictOf(entry, listId, asked), actor });
    } catch (error) {
      if (!(error instanceof CrowsError)) throw error;
      refused.push({ name, why: error.message });
    }
  }
  return refused;
}

/** The entry as the engine's verdict input; BadInputError for one that names no approval of this task. */
function verdictOf(entry: BatchEntry, listId: string, asked: WaitingApproval[]) {
  const itemId = entry.item_id;
  if (typeof itemId !== "string" || itemId.trim() === "")
    throw new BadInputError('"item_id" must name an item waiting for a verdict.');
  if (typeof entry.approve !== "boolean") throw new BadInputError('"approve" must be true or false.');
  if (!itemId.startsWith(`${listId}-`)) throw new BadInputError(`${itemId} is not an item of this task's list.`);
  const target = entry.target ?? asked.find((a) => a.item_id === itemId)?.target;
  if (!TARGETS.includes(target as Target))
    throw new BadInputError('"target" must be triage or output (it may be left out for an approval the task named).');
  // Not checked here: the engine trims, bounds and refuses a reason that is not text, as for REST.
  return {
    itemId,
    target: target as Target,
    approve: entry.approve,
    reason: entry.reason as string | null | undefined,
  };
}

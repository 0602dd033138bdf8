// What a reply to input-required decides (docs/integrations.md "A2A"): each decision one verdict,
// each on its own (src/server/agents/decide-each.ts); here, how a caller's entry names it.
import type { App } from "../../app.ts";
import type { Actor } from "../../base/actor.ts";
import { BadInputError } from "../../base/errors.ts";
import { TARGETS, type Target } from "../../flock/events.ts";
import { decideEach, type Refusal, type VerdictInput } from "../agents/decide-each.ts";
import type { WaitingApproval } from "../agents/list-view.ts";
import type { BatchEntry } from "./reply.ts";

/**
 * Records each entry as a verdict by `actor` on an item of `listId`; returns the refusals. An entry
 * may leave out `target` for an approval the input-required named (`asked`).
 */
export function decideAll(
  app: App,
  listId: string,
  asked: WaitingApproval[],
  entries: BatchEntry[],
  actor: Actor,
): Promise<Refusal[]> {
  return decideEach(app, entries, (entry) => verdictOf(entry, listId, asked), actor);
}

/** The entry as the engine's verdict input; BadInputError for one that names no approval of this task. */
function verdictOf(entry: BatchEntry, listId: string, asked: WaitingApproval[]): VerdictInput {
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

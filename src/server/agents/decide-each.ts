// Several verdicts in one call of an agent door (an A2A batch reply, MCP's decide_approvals): each
// is one verdict through the engine call POST /api/verdicts makes (app.flock.postVerdict), in the
// order given, each on its own: one the engine refuses decides nothing for its item and the others
// still stand. No rule is decided here; a refusal is named with the engine's own words.
import type { App } from "../../app.ts";
import type { Actor } from "../../base/actor.ts";
import { CrowsError } from "../../base/errors.ts";
import { MAX_ITEMS } from "../../flock/todo-text.ts";

/**
 * The most decisions one call may hold: every approval a list can have waiting, a triage or an
 * output for each of its items, twice over. More is no owner's reply; refused whole, unread.
 */
export const MAX_DECISIONS = 2 * MAX_ITEMS;

/** The engine's verdict input, less who gives it. */
export type VerdictInput = Omit<Parameters<App["flock"]["postVerdict"]>[0], "actor">;

/** A decision not recorded, and why. */
export interface Refusal {
  /** Where the entry stands in the call's list, from 0. */
  index: number;
  /** The entry's item id, or "decision N" for an entry without one. */
  name: string;
  why: string;
}

/**
 * Records each entry as a verdict by `actor`; returns the refusals, in order. `verdictOf` reads an
 * entry (throwing a CrowsError for one it cannot read, refused like the engine's own refusals).
 */
export async function decideEach<Entry extends { item_id?: unknown }>(
  app: App,
  entries: readonly Entry[],
  verdictOf: (entry: Entry) => VerdictInput,
  actor: Actor,
): Promise<Refusal[]> {
  const refused: Refusal[] = [];
  for (const [i, entry] of entries.entries()) {
    const name = typeof entry.item_id === "string" && entry.item_id !== "" ? entry.item_id : `decision ${i + 1}`;
    try {
      await app.flock.postVerdict({ ...verdictOf(entry), actor });
    } catch (error) {
      if (!(error instanceof CrowsError)) throw error;
      refused.push({ index: i, name, why: error.message });
    }
  }
  return refused;
}

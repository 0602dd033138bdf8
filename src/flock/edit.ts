// Edits before yes (docs/rules.md "Edits"): an approval may carry the owner's changes. A triage's
// edit changes any of mode, task_type and subtasks, and the work follows the edited triage; an
// output's edit is the owner's own text, and that text is the item's answer. Applied and recorded
// ({"before", "after"}, the decider being who) in the verdict's own transaction.
import { BadInputError } from "../base/errors.ts";
import { EDIT_NOT_OBJECT } from "./refusals.ts";
import { isTaskType } from "../base/roster.ts";
import { TRIAGE_MODES } from "../base/triage.ts";
import { stringArray } from "../base/util/json-column.ts";
import type { Item } from "../generated/prisma/client.ts";
import type { StateTx } from "../storage/state-shapes.ts";
import type { Target } from "./events.ts";

/** The longest answer an owner may write in place of the crows' (the same cap as a list, whole). */
export const MAX_EDITED_ANSWER_CHARS = 20_000;
const MAX_SUBTASK_CHARS = 2_000;

export type TriageEdit = { mode?: string; task_type?: string; subtasks?: string[] };
export type OutputEdit = { answer: string };
export type Edit = TriageEdit | OutputEdit;

const chars = (text: string) => [...text].length;

/** The edit as given, checked for its target; undefined for none. BadInputError for a bad one. */
export function readEdit(value: unknown, target: Target, approve: boolean): Edit | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "object" || Array.isArray(value)) throw new BadInputError(EDIT_NOT_OBJECT);
  if (!approve) throw new BadInputError('"edit" goes with an approval ("approve": true) only.');
  const edit = value as Record<string, unknown>;
  const allowed = target === "triage" ? ["mode", "task_type", "subtasks"] : ["answer"];
  const unknown = Object.keys(edit).find((k) => !allowed.includes(k));
  if (unknown !== undefined)
    throw new BadInputError(
      `"edit" of a ${target} takes ${allowed.map((k) => `"${k}"`).join(", ")}; not "${unknown}".`,
    );
  if (target === "output") {
    if (typeof edit.answer !== "string" || edit.answer.trim() === "")
      throw new BadInputError('"edit.answer" must be non-empty text.');
    const answer = edit.answer.trim();
    if (chars(answer) > MAX_EDITED_ANSWER_CHARS)
      throw new BadInputError(
        `"edit.answer" is at most ${MAX_EDITED_ANSWER_CHARS.toLocaleString("en-US")} characters.`,
      );
    return { answer };
  }
  if (Object.keys(edit).length === 0) throw new BadInputError('"edit" names nothing to change.');
  const out: TriageEdit = {};
  if (edit.mode !== undefined) {
    if (!(TRIAGE_MODES as readonly unknown[]).includes(edit.mode))
      throw new BadInputError(`"edit.mode" must be one of ${TRIAGE_MODES.join(", ")}.`);
    out.mode = edit.mode as string;
  }
  if (edit.task_type !== undefined) {
    if (!isTaskType(edit.task_type)) throw new BadInputError('"edit.task_type" must be a known task type.');
    out.task_type = edit.task_type;
  }
  if (edit.subtasks !== undefined) {
    if (!Array.isArray(edit.subtasks) || edit.subtasks.some((s) => typeof s !== "string"))
      throw new BadInputError('"edit.subtasks" must be a list of text.');
    const subtasks = (edit.subtasks as string[]).map((s) => s.trim());
    if (subtasks.some((s) => s === "" || chars(s) > MAX_SUBTASK_CHARS))
      throw new BadInputError(
        `each of "edit.subtasks" is 1 to ${MAX_SUBTASK_CHARS.toLocaleString("en-US")} characters.`,
      );
    out.subtasks = subtasks;
  }
  return out;
}

/** What the triage looks like, as an edit's before and after name it. */
function triageOf(item: Item): Required<TriageEdit> {
  return { mode: item.mode ?? "solo", task_type: item.taskType ?? "other", subtasks: stringArray(item.subtasks) };
}

/**
 * Inside the verdict's transaction: applies the edit to the item waiting on `target`; the record
 * to keep ({before, after}), or null when the item no longer waits there. A split needs 2 to 4
 * subtasks after the edit, any other mode none (as the Sentry's own call, docs/rules.md "Triage").
 */
export async function applyEdit(
  tx: StateTx,
  itemId: string,
  target: Target,
  edit: Edit,
): Promise<{ before: object; after: object } | null> {
  const item = await tx.item(itemId);
  const stage = target === "output" ? "awaiting_output" : "awaiting_triage";
  if (!item || item.stage !== stage) return null;
  if ("answer" in edit) {
    const moved = await tx.moveItem(itemId, stage, { stage, answer: edit.answer });
    return moved ? { before: { answer: item.answer ?? "" }, after: { answer: edit.answer } } : null;
  }
  const before = triageOf(item);
  const after = { ...before, ...edit };
  if (edit.mode !== undefined && edit.mode !== "split" && edit.subtasks === undefined) after.subtasks = [];
  if (after.mode === "split" ? after.subtasks.length < 2 || after.subtasks.length > 4 : after.subtasks.length > 0)
    throw new BadInputError(
      after.mode === "split"
        ? 'A split needs 2 to 4 "edit.subtasks".'
        : `A ${after.mode} triage has no subtasks; leave "edit.subtasks" out or empty.`,
    );
  const moved = await tx.moveItem(itemId, stage, {
    stage,
    mode: after.mode,
    taskType: after.task_type,
    subtasks: JSON.stringify(after.subtasks),
  });
  return moved ? { before, after } : null;
}

// The offline brain's reading of a todo item: word-level rules, deterministic and explainable.
// They are written so every triage mode is reachable on purpose (docs/models.md lists them):
// several joined actions split, a request for several takes is a murder, anything else is solo.
import { isTaskType, type TaskType } from "../base/roster.ts";
import { TRIAGE_MODES, type TriageMode } from "../base/triage.ts";

/** Imperative verbs that make a clause an action of its own ("draft X and email Y"). */
const ACTION_VERBS = new Set(
  (
    "add answer apply archive arrange ask back backup book brainstorm build buy calculate call cancel change check choose clean " +
    "close code collect compare confirm contact cook create critique debug decide delete deploy design document donate download " +
    "draft drop edit email estimate evaluate explain explore file fill find fix follow get go hire implement install interview " +
    "investigate invite learn list look mail make measure meet message migrate move note notify open order organise organize " +
    "outline pack pay pick plan polish post prepare print proofread publish read record refactor register remind rename renew " +
    "rent repair replace reply research reserve return review rewrite run schedule search sell send set share shorten sign sort " +
    "start study submit summarise summarize take tell test text track transfer translate update upgrade upload visit wash water " +
    "withdraw write"
  ).split(" "),
);

/** Words that ask for several takes on the same thing: a murder. */
const MURDER_PATTERNS: readonly RegExp[] = [
  /\bbrainstorm/i,
  /\bideas?\b/i,
  /\boptions\b/i,
  /\bnames? for\b/i,
  /\bcompar(e|ing|ison)\b/i,
  /\bpros and cons\b/i,
  /\breview(s|ing)?\b/i,
  /\bcritique/i,
  /\bopinions?\b/i,
];

/** Checked in this order: code words are the most specific ("write a function" is code). */
const TASK_TYPE_PATTERNS: ReadonlyArray<[TaskType, RegExp]> = [
  [
    "code",
    /\b(code|coding|function|functions|bugs?|script|scripts|api|apis|tests?|testing|refactor|regex|sql|deploy)\b/i,
  ],
  ["research", /\b(research|researching|find out|look up|compare|comparing|comparison)\b/i],
  ["writing", /\b(write|writing|draft|drafting|email|emails|blog|copy|copywriting|essay|letter|post)\b/i],
  ["planning", /\b(plan|planning|schedule|scheduling|organi[sz]e|organi[sz]ing|itinerary|agenda|roadmap)\b/i],
  ["errand", /\b(buy|book|call|pick up|order|return|pay|renew|drop off|collect)\b/i],
];

export function taskTypeOf(text: string): TaskType {
  for (const [taskType, pattern] of TASK_TYPE_PATTERNS) if (pattern.test(text)) return taskType;
  return "other";
}

function startsWithAction(clause: string): boolean {
  const first =
    clause
      .trim()
      .toLowerCase()
      .replace(/^(then|also|and|please)\s+/, "")
      .split(/\s+/)[0] ?? "";
  return ACTION_VERBS.has(first.replace(/[^a-z]/g, ""));
}

function tidyClause(clause: string): string {
  return clause
    .trim()
    .replace(/^(then|also|and)\s+/i, "")
    .replace(/[.;,]+$/, "")
    .trim();
}

/**
 * The separate actions an item joins, when every clause starts with an action verb: "X and Y",
 * "X; Y", "X, then Y", "X, Y and Z". Returns [] when the item is one action. More than four
 * clauses are folded so the last subtask carries the tail (a split has 2-4 subtasks).
 */
export function actionsOf(item: string): string[] {
  const clauses = item
    .split(/\s*;\s*|,\s*(?:and\s+|then\s+)?|\s+and then\s+|\s+then\s+|\s+and\s+/i)
    .map(tidyClause)
    .filter((clause) => clause.length > 0);
  if (clauses.length < 2 || !clauses.every(startsWithAction)) return [];
  if (clauses.length <= 4) return clauses;
  return [...clauses.slice(0, 3), clauses.slice(3).join(", then ")];
}

export function asksForSeveralTakes(item: string): boolean {
  return MURDER_PATTERNS.some((pattern) => pattern.test(item));
}

export interface Triage {
  mode: TriageMode;
  task_type: TaskType;
  subtasks: string[];
  reason: string;
}

function normaliseHintMode(mode: string | undefined): TriageMode | undefined {
  if ((TRIAGE_MODES as readonly string[]).includes(mode ?? "")) return mode as TriageMode;
  if (mode === "conspiracy") return "murder";
  return undefined;
}

/** The offline Sentry's call on one item, preferring the classifier's hints when it gave them. */
export function triageItem(item: string, hints?: { taskType?: string; mode?: string }): Triage {
  const actions = actionsOf(item);
  const severalTakes = asksForSeveralTakes(item);
  const ownMode: TriageMode = actions.length >= 2 ? "split" : severalTakes ? "murder" : "solo";
  const hintedMode = normaliseHintMode(hints?.mode);
  // A split hint is only usable when the item actually names its parts.
  const mode: TriageMode = hintedMode === "split" && actions.length < 2 ? ownMode : (hintedMode ?? ownMode);
  const task_type: TaskType = isTaskType(hints?.taskType) ? hints!.taskType : taskTypeOf(item);
  const subtasks = mode === "split" ? actions : [];
  const reason =
    mode === "split"
      ? `The item joins ${subtasks.length} separate actions.`
      : mode === "murder"
        ? "The item asks for several takes, so several crows should weigh in."
        : "One action, one crow.";
  const overruled = mode !== ownMode ? " (the classifier's call)" : "";
  return { mode, task_type, subtasks, reason: reason + overruled };
}

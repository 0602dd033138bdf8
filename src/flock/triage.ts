// The Sentry's call on an item (docs/flock.md §4.3): mode (solo, split, murder), task_type,
// subtasks (2-4 for split, else none) and a one-line reason. The classifier is asked first for the
// task type and mode (it is quick, cheap and calibrated); the model writes the subtasks and the
// reason. Output that cannot be parsed or validated falls back to solo/other with the reason
// stated, never a crash.
import type { Classifier } from "../classifier/jev.ts";
import { triageQuestions, bandedChoice, itemState } from "../classifier/questions.ts";
import { parseTriage } from "../models/formats.ts";
import type { Mode } from "./events.ts";
import { isTaskType, type TaskType } from "../base/roster.ts";
import type { FlightResult } from "./flights.ts";

export interface Triage {
  mode: Mode;
  taskType: TaskType;
  subtasks: string[];
  reason: string;
}

export interface TriageHints {
  taskType?: string;
  mode?: string;
}

/** What the classifier is sure of (above the band); nothing when it is unsure. */
export async function classifierHints(
  classifier: Classifier,
  itemId: string,
  text: string,
  threshold: number,
): Promise<TriageHints> {
  const answers = await classifier.ask({ state: itemState(text), questions: triageQuestions(), subject: itemId });
  const hints: TriageHints = {};
  const taskType = bandedChoice(answers.task_type, threshold);
  const mode = bandedChoice(answers.triage_mode, threshold);
  if (taskType.sure) hints.taskType = taskType.choice;
  if (mode.sure) hints.mode = mode.choice;
  return hints;
}

export function readTriage(flight: FlightResult, hints: TriageHints): Triage {
  if (!flight.ok) return fallback(`The Sentry could not triage (${flight.error}); flying solo.`);
  const parsed = parseTriage(flight.text);
  if (!parsed.ok) return fallback(`The Sentry's triage was unusable (${parsed.error}); flying solo.`);
  const { mode, task_type, subtasks, reason } = parsed.value;
  // A sure classifier answer on the task type stands over the model's guess.
  const taskType = hints.taskType && isTaskType(hints.taskType) ? hints.taskType : task_type;
  return { mode, taskType, subtasks: mode === "split" ? subtasks : [], reason };
}

function fallback(reason: string): Triage {
  return { mode: "solo", taskType: "other", subtasks: [], reason };
}

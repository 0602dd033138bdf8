// The questions the flock asks Jev, under stable ids: the offline model is trained per id and the
// stored answers are grouped by id for calibration, so an id never changes meaning. Wording follows
// System One's shape (instructions + criteria); the criteria descriptions are what the remote model
// reads, so they state the decision rule, not just the label.
import type { Answer, Question } from "./jev.ts";
import { clamp } from "../base/util/clamp.ts";
import type { TaskType } from "../base/roster.ts";
import type { TriageMode } from "../base/triage.ts";

export const CROW_KINDS = ["say", "request", "claim", "deliver", "refer", "decline"] as const;
export type CrowKind = (typeof CROW_KINDS)[number];
export const REQUEST_MODES = ["solo", "conspiracy", "split"] as const;
export type RequestMode = (typeof REQUEST_MODES)[number];

export const QUESTION_IDS = {
  kind: "kind",
  mode: "mode",
  answersRequest: "answers_request",
  statesFactWithoutSource: "states_fact_without_source",
  contradictsEarlier: "contradicts_earlier",
  taskType: "task_type",
  triageMode: "triage_mode",
} as const;
export type QuestionId = (typeof QUESTION_IDS)[keyof typeof QUESTION_IDS];

export const kindQuestion: Question = {
  type: "choice",
  instructions:
    "Classify the nest message in `text` into the one kind it performs. `author` is who posted it, `to` whom it is addressed (empty: the room) and `refers_to` the message it answers (empty: none).",
  criteria: {
    say: "Ordinary talk: remarks, thanks, opinions, status chatter. Asks nobody for work and hands over no result. The default when nothing else fits.",
    request: "Asks a specific member or the room to do a piece of work (find, write, fix, plan, check something).",
    claim:
      "A crow takes ownership of an earlier request: says it will do it, or which angle it will take, without the result yet.",
    deliver: "Hands over the result of a request: the answer, draft, findings or finished work itself.",
    refer:
      "Points to an existing artifact by name or location (a file, doc, link, earlier output) instead of pasting its content.",
    decline: "Refuses or bows out of a request, giving a reason.",
  },
};

export const modeQuestion: Question = {
  type: "choice",
  instructions: "The message in `text` is a request for work. Decide how the flock should take it up.",
  criteria: {
    solo: "One crow can do it alone: a single, self-contained task.",
    conspiracy:
      "One task that benefits from several crows each giving a distinct reading or lens (perspectives, critiques, competing takes, brainstorms).",
    split:
      "Several separable parts that different crows can do in parallel and combine (a list of sub-tasks, one per region/topic/file).",
  },
};

export const answersRequestQuestion: Question = {
  type: "noul",
  instructions:
    "`message` is a crow's claim or deliver; `request` is the request it refers to. Does the message actually address what the request asked for?",
  criteria: {
    true: "It takes up or delivers what was asked (the same subject and the requested kind of output).",
    false:
      "It is off topic, answers a different question, or is an empty acknowledgement that does not engage with the request.",
  },
};

export const statesFactWithoutSourceQuestion: Question = {
  type: "noul",
  instructions:
    "`message` is a crow's claim or deliver. Does it assert specific factual claims (figures, dates, names, quotes, statistics) without saying where they come from?",
  criteria: {
    true: "It states specific checkable facts as certain and gives no source, link, document or method for them.",
    false:
      "It cites its sources, marks guesses as guesses, or makes no specific factual claims (opinions, plans, code, drafts).",
  },
};

export const contradictsEarlierQuestion: Question = {
  type: "noul",
  instructions:
    "`message` is a crow's claim or deliver; `request` and `earlier` are the request and the earlier messages in the nest. Does the message contradict something stated earlier without acknowledging the change?",
  criteria: {
    true: "It states something incompatible with the request or an earlier message (different figure, date, decision or fact) and does not flag it as a correction.",
    false: "It is consistent with what came before, or it openly corrects an earlier statement.",
  },
};

export const taskTypeQuestion: Question = {
  type: "choice",
  instructions: "`item` is one item of the owner's todo list. What type of task is it?",
  criteria: {
    research: "Find out, compare, look up or summarise information.",
    writing: "Produce prose: emails, posts, copy, letters, docs, edits of text.",
    code: "Write, fix, review or run software, scripts, queries or configuration.",
    planning: "Organise time, steps or resources: schedules, itineraries, roadmaps, budgets.",
    errand: "A practical real-world chore: book, buy, call, pay, renew, pick up, cancel.",
    other: "None of the above.",
  } satisfies Record<TaskType, string>,
};

export const triageModeQuestion: Question = {
  type: "choice",
  instructions: "`item` is one item of the owner's todo list. How should the flock work it?",
  criteria: {
    solo: "One crow does it alone: small and self-contained.",
    split: "It breaks into separable sub-tasks that different crows do in parallel.",
    murder: "One hard or contested task where several crows should each attempt it and the best answer is kept.",
  } satisfies Record<TriageMode, string>,
};

export function tagQuestions(): Record<string, Question> {
  return { [QUESTION_IDS.kind]: kindQuestion };
}

export function modeQuestions(): Record<string, Question> {
  return { [QUESTION_IDS.mode]: modeQuestion };
}

export function watchQuestions(): Record<string, Question> {
  return {
    [QUESTION_IDS.answersRequest]: answersRequestQuestion,
    [QUESTION_IDS.statesFactWithoutSource]: statesFactWithoutSourceQuestion,
    [QUESTION_IDS.contradictsEarlier]: contradictsEarlierQuestion,
  };
}

export function triageQuestions(): Record<string, Question> {
  return { [QUESTION_IDS.taskType]: taskTypeQuestion, [QUESTION_IDS.triageMode]: triageModeQuestion };
}

/** Every question under its id: what the offline trainer and the calibration report iterate. */
export function allQuestions(): Record<string, Question> {
  return { ...tagQuestions(), ...modeQuestions(), ...watchQuestions(), ...triageQuestions() };
}

// State builders: the offline model reads these field names, and the remote one reads them as the
// questions' instructions describe, so callers should build state through here.

export interface MessageStateInput {
  text: string;
  author: string;
  to?: string;
  refers_to?: string;
}

/** State for `kind` and `mode`. The crow's kind header is deliberately left out: Jev must judge the
 * text on its own, or a disagreement could never be detected. */
export function messageState(m: MessageStateInput): Record<string, unknown> {
  return { text: m.text, author: m.author, to: m.to ?? "", refers_to: m.refers_to ?? "" };
}

export interface WatchStateInput {
  /** The claim/deliver text. */
  message: string;
  kind: "claim" | "deliver";
  author: string;
  /** The text of the request it refers to. */
  request: string;
  /** Earlier nest messages, oldest first, as "author: text" lines. */
  earlier?: string[];
}

export function watchState(w: WatchStateInput): Record<string, unknown> {
  return { message: w.message, kind: w.kind, author: w.author, request: w.request, earlier: w.earlier ?? [] };
}

export function itemState(text: string): Record<string, unknown> {
  return { item: text };
}

/** The state as the text that is digested and stored: stable key order, so equal states digest equal. */
export function stateText(state: string | Record<string, unknown>): string {
  if (typeof state === "string") return state;
  return JSON.stringify(sortKeys(state));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) out[key] = sortKeys((value as Record<string, unknown>)[key]);
    return out;
  }
  return value;
}

// The band rule (docs/flock.md §7, docs/contract.md Tagging): a choice stands only at or above the
// threshold; below it the answer is unsure and the caller falls back (header, default, no action).

export type Banded = { sure: true; choice: string; confidence: number } | { sure: false; reason: string };

export function bandedChoice(answer: Answer | undefined, threshold: number): Banded {
  if (!answer) return { sure: false, reason: "no answer" };
  if (answer.type === "unsure") return { sure: false, reason: answer.reason };
  if (answer.type !== "choice") return { sure: false, reason: `expected a choice answer, got ${answer.type}` };
  if (!(answer.confidence >= threshold)) {
    return { sure: false, reason: `confidence ${answer.confidence.toFixed(3)} below ${threshold}` };
  }
  return { sure: true, choice: answer.choice, confidence: answer.confidence };
}

/** The noul probability, or undefined when unsure: callers never quarantine or clear on undefined. */
export function noulValue(answer: Answer | undefined): number | undefined {
  if (!answer || answer.type !== "noul") return undefined;
  return Number.isFinite(answer.noul) ? clamp(answer.noul, 0, 1) : undefined;
}

export interface WatchVerdict {
  /** False when any of the three is unsure: fail closed, no flag and no clearing. */
  sure: boolean;
  breach: boolean;
  scores: { answers_request?: number; states_fact_without_source?: number; contradicts_earlier?: number };
}

/** docs/contract.md Guardrails: a breach is any score at or above the band, or answers_request at or below
 * 1 - band. Only judged when all three answered. */
export function watchVerdict(answers: Record<string, Answer>, threshold: number): WatchVerdict {
  const scores = {
    answers_request: noulValue(answers[QUESTION_IDS.answersRequest]),
    states_fact_without_source: noulValue(answers[QUESTION_IDS.statesFactWithoutSource]),
    contradicts_earlier: noulValue(answers[QUESTION_IDS.contradictsEarlier]),
  };
  const { answers_request: a, states_fact_without_source: f, contradicts_earlier: c } = scores;
  if (a === undefined || f === undefined || c === undefined) return { sure: false, breach: false, scores };
  // The epsilon keeps "at or below 1 - band" true at the edge: 1 - 0.8 is 0.19999999999999996 in floats.
  const eps = 1e-9;
  const breach = f >= threshold - eps || c >= threshold - eps || a <= 1 - threshold + eps;
  return { sure: true, breach, scores };
}

// The classifier interface (Jev, docs/flock.md §7): questions about a state, answered with
// probabilities, batched per call the way System One takes them. Two backends implement it: the
// System One HTTP API and the embedded offline model. A backend that cannot answer (timeout, error,
// a question it was never trained for) answers "unsure", and every caller falls back the way the
// contract's tagging rules say.

/** A question's shape: a choice among labels, a noul (0..1) or a score. */
export const QUESTION_TYPES = ["choice", "noul", "score"] as const;
export type QuestionType = (typeof QUESTION_TYPES)[number];

export type Question =
  | { type: Extract<QuestionType, "choice">; instructions: string; criteria: Record<string, string | null> }
  | { type: Extract<QuestionType, "noul">; instructions: string; criteria: { true: string; false: string } }
  | { type: Extract<QuestionType, "score">; instructions: string; criteria: string[] };

/** The two backends: the embedded offline model and the System One HTTP API. */
export const CLASSIFIER_BACKENDS = ["offline", "systemone"] as const;
export type ClassifierBackend = (typeof CLASSIFIER_BACKENDS)[number];

export type Answer =
  | { type: "choice"; choice: string; confidence: number; probabilities: Record<string, number> }
  | { type: "noul"; noul: number }
  | {
      type: "score";
      score: number;
      confidence: number;
      probabilities: Record<string, number>;
      legend?: Record<string, string>;
    }
  | { type: "unsure"; reason: string };

export interface AskRequest {
  /** What the questions are about: a message with its context, an item, ... */
  state: string | Record<string, unknown>;
  /** Question ids are stable names the offline model is trained under ("kind", "mode", ...). */
  questions: Record<string, Question>;
  /** What the answers are stored against (a msg_id, an item_id). */
  subject: string;
  /** A known label per question, when one exists (a crow's header), stored for calibration. */
  truth?: Record<string, string>;
}

export interface Classifier {
  readonly backend: ClassifierBackend;
  readonly model: string;
  /** Never rejects: a failure answers every question { type: "unsure" }. */
  ask(request: AskRequest): Promise<Record<string, Answer>>;
}

// Records every answer in ClassifierAnswer with its probabilities, so calibration can be measured
// later (docs/flock.md §7). Recording is best effort: a storage failure is reported through
// onError and never reaches the caller, and a backend that throws still yields unsure answers.
import { createHash } from "node:crypto";
import type { Answer, AskRequest, Classifier } from "./jev.ts";
import { stateText } from "./questions.ts";

/** The slice of the Prisma client the recorder uses, so tests can hand in a failing one. */
export interface AnswerStore {
  classifierAnswer: { createMany(args: { data: ClassifierAnswerRow[] }): Promise<unknown> };
}

export interface ClassifierAnswerRow {
  questionId: string;
  questionType: string;
  subject: string;
  stateDigest: string;
  answer: string;
  probabilities: string;
  backend: string;
  model: string;
  latencyMs: number;
  truth: string;
}

export function stateDigest(state: AskRequest["state"]): string {
  return createHash("sha256").update(stateText(state)).digest("hex");
}

/** The answer as stored text: the choice, the noul/score as a number, "" when unsure. */
export function answerText(answer: Answer): string {
  switch (answer.type) {
    case "choice":
      return answer.choice;
    case "noul":
      return String(answer.noul);
    case "score":
      return String(answer.score);
    case "unsure":
      return "";
  }
}

function probabilitiesJson(answer: Answer): string {
  switch (answer.type) {
    case "choice":
      return JSON.stringify(answer.probabilities);
    case "noul":
      return JSON.stringify({ true: answer.noul, false: 1 - answer.noul });
    case "score":
      return JSON.stringify(answer.probabilities);
    case "unsure":
      return JSON.stringify({ unsure: answer.reason });
  }
}

export class RecordingClassifier implements Classifier {
  constructor(
    private readonly inner: Classifier,
    private readonly store: AnswerStore,
    private readonly onError: (error: unknown) => void = () => {},
  ) {}

  get backend(): Classifier["backend"] {
    return this.inner.backend;
  }

  get model(): string {
    return this.inner.model;
  }

  async ask(request: AskRequest): Promise<Record<string, Answer>> {
    const started = performance.now();
    let answers: Record<string, Answer>;
    try {
      answers = await this.inner.ask(request);
    } catch (error) {
      const reason = `classifier failed: ${error instanceof Error ? error.message : String(error)}`;
      answers = Object.fromEntries(
        Object.keys(request.questions).map((id) => [id, { type: "unsure", reason } as Answer]),
      );
    }
    // A backend that skipped a question must not leave the caller with undefined.
    for (const id of Object.keys(request.questions)) {
      answers[id] ??= { type: "unsure", reason: "no answer for this question" };
    }
    const latencyMs = Math.round(performance.now() - started);
    try {
      const digest = stateDigest(request.state);
      const rows: ClassifierAnswerRow[] = Object.keys(request.questions).map((id) => ({
        questionId: id,
        questionType: request.questions[id]!.type,
        subject: request.subject,
        stateDigest: digest,
        answer: answerText(answers[id]!),
        probabilities: probabilitiesJson(answers[id]!),
        backend: this.inner.backend,
        model: this.inner.model,
        latencyMs,
        truth: request.truth?.[id] ?? "",
      }));
      await this.store.classifierAnswer.createMany({ data: rows });
    } catch (error) {
      try {
        this.onError(error);
      } catch {
        // A broken error reporter must not break the caller either.
      }
    }
    return answers;
  }
}

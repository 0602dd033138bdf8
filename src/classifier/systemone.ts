// The System One HTTP client (docs/flock.md §7): POST {base}/v1/systemone with a Bearer key, at
// most 10 questions per request, so larger asks are batched. Fail closed: a timeout, a refused
// connection, a 429/5xx or an unreadable answer makes every question of that batch "unsure", and
// callers never quarantine or clear on unsure.
import type { Answer, AskRequest, Classifier, Question } from "./jev.ts";

export const MAX_QUESTIONS_PER_REQUEST = 10;

export interface SystemOneOptions {
  baseUrl: string;
  apiKey: string;
  /** Pinned model version; "jev-latest" moves under you, so it is never chosen implicitly. */
  model: string;
  timeoutMs: number;
  /** Injected for tests; defaults to the global fetch. */
  fetch?: typeof fetch;
  /** The classifier's own gate (a cap and a circuit; src/models/provider-pacer.ts), apart from the model's. */
  gate?: CallGate;
}

/** What System One needs of a gate: a slot, and a word on how the call went. */
export interface CallGate {
  acquire(
    lane: string,
    options: { failFast: boolean },
  ): Promise<{ release(result: { outcome: "ok" | "weather" | "timeout" | "config"; status?: number }): void }>;
}

export class SystemOneClassifier implements Classifier {
  readonly backend = "systemone" as const;
  readonly model: string;
  private readonly endpoint: string;

  constructor(private readonly options: SystemOneOptions) {
    if (!options.model) throw new Error("System One needs a pinned model (CROWS_JEV_MODEL)");
    this.model = options.model;
    this.endpoint = `${options.baseUrl.replace(/\/+$/, "")}/v1/systemone`;
  }

  async ask(request: AskRequest): Promise<Record<string, Answer>> {
    const ids = Object.keys(request.questions);
    const batches: string[][] = [];
    for (let i = 0; i < ids.length; i += MAX_QUESTIONS_PER_REQUEST)
      batches.push(ids.slice(i, i + MAX_QUESTIONS_PER_REQUEST));
    const results = await Promise.all(
      batches.map((batch) => {
        const questions: Record<string, Question> = {};
        for (const id of batch) questions[id] = request.questions[id]!;
        return this.askBatch(request.state, questions);
      }),
    );
    return Object.assign({}, ...results) as Record<string, Answer>;
  }

  private async askBatch(
    state: AskRequest["state"],
    questions: Record<string, Question>,
  ): Promise<Record<string, Answer>> {
    const ids = Object.keys(questions);
    const unsure = (reason: string) => Object.fromEntries(ids.map((id) => [id, { type: "unsure", reason } as Answer]));
    if (!this.options.gate) return this.call(state, questions, unsure, () => {});
    let ticket: Awaited<ReturnType<CallGate["acquire"]>>;
    try {
      ticket = await this.options.gate.acquire("classifier", { failFast: true });
    } catch {
      return unsure("System One is failing; its circuit is open");
    }
    return this.call(state, questions, unsure, (outcome, status) =>
      ticket.release({ outcome, ...(status ? { status } : {}) }),
    );
  }

  private async call(
    state: AskRequest["state"],
    questions: Record<string, Question>,
    unsure: (reason: string) => Record<string, Answer>,
    done: (outcome: "ok" | "weather" | "timeout" | "config", status?: number) => void,
  ): Promise<Record<string, Answer>> {
    const ids = Object.keys(questions);
    let outcome: "ok" | "weather" | "timeout" | "config" = "weather";
    let status: number | undefined;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.options.timeoutMs);
    try {
      const response = await (this.options.fetch ?? fetch)(this.endpoint, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json",
          authorization: `Bearer ${this.options.apiKey}`,
        },
        body: JSON.stringify({ model: this.model, state, questions }),
        signal: controller.signal,
      });
      // Read the body under the same timer: a server that sends headers then stalls is a timeout too.
      const raw = await response.text();
      status = response.status;
      outcome = response.ok ? "ok" : response.status === 429 || response.status >= 500 ? "weather" : "config";
      if (response.status === 429) return unsure("System One rate limit (429)");
      if (!response.ok) return unsure(`System One answered HTTP ${response.status}`);
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        return unsure("System One answered with unreadable JSON");
      }
      const answers = (body as { answers?: unknown } | null)?.answers;
      if (!answers || typeof answers !== "object") return unsure("System One answer had no answers object");
      const out: Record<string, Answer> = {};
      for (const id of ids) {
        out[id] = parseAnswer((answers as Record<string, unknown>)[id], questions[id]!);
      }
      return out;
    } catch (error) {
      if (controller.signal.aborted) {
        outcome = "timeout";
        return unsure(`System One timed out after ${this.options.timeoutMs} ms`);
      }
      return unsure(`System One unreachable: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      clearTimeout(timer);
      done(outcome, status);
    }
  }
}

function num(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

function probabilities(value: unknown): Record<string, number> | undefined {
  if (!value || typeof value !== "object" || Array.isArray(value)) return undefined;
  const out: Record<string, number> = {};
  for (const [key, p] of Object.entries(value)) {
    const n = num(p);
    if (n === undefined) return undefined;
    out[key] = n;
  }
  return out;
}

/** Checks one answer against the question it answers; anything off-shape is unsure, never a guess. */
export function parseAnswer(raw: unknown, question: Question): Answer {
  if (!raw || typeof raw !== "object") return { type: "unsure", reason: "System One gave no answer for this question" };
  const a = raw as Record<string, unknown>;
  if (a.type === "unsure")
    return { type: "unsure", reason: typeof a.reason === "string" ? a.reason : "System One was unsure" };
  if (a.type !== question.type)
    return { type: "unsure", reason: `System One answered ${String(a.type)} to a ${question.type} question` };
  switch (question.type) {
    case "choice": {
      const choice = a.choice;
      const confidence = num(a.confidence);
      const probs = probabilities(a.probabilities) ?? {};
      if (typeof choice !== "string" || !(choice in question.criteria) || confidence === undefined) {
        return { type: "unsure", reason: "System One choice answer was malformed or outside the criteria" };
      }
      return { type: "choice", choice, confidence, probabilities: probs };
    }
    case "noul": {
      const noul = num(a.noul);
      if (noul === undefined || noul < 0 || noul > 1)
        return { type: "unsure", reason: "System One noul answer was malformed" };
      return { type: "noul", noul };
    }
    case "score": {
      const score = num(a.score);
      const confidence = num(a.confidence);
      if (score === undefined || confidence === undefined)
        return { type: "unsure", reason: "System One score answer was malformed" };
      const answer: Answer = { type: "score", score, confidence, probabilities: probabilities(a.probabilities) ?? {} };
      const legend = a.legend;
      if (legend && typeof legend === "object" && !Array.isArray(legend)) {
        answer.legend = Object.fromEntries(
          Object.entries(legend).filter((e): e is [string, string] => typeof e[1] === "string"),
        );
      }
      return answer;
    }
  }
}

// The embedded offline classifier, the default backend: a small local logistic-regression model
// per question id (model.ts), trained on the project's own labelled examples. It needs no network
// and is deterministic. It is not System One: its answers are only as good as a few hundred
// examples allow (docs/classifier.md has the measured figures), and questions it was never trained
// on, or asked with different labels, answer "unsure".
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Answer, AskRequest, Classifier, Question } from "../jev.ts";
import { DEFAULT_DATA_DIR, dataFiles, loadDataset } from "./dataset.ts";
import { MODEL_FORMAT, predict, type OfflineModel, type QuestionModel } from "./model.ts";
import { trainAll } from "./train.ts";

export const DEFAULT_MODEL_PATH = fileURLToPath(new URL("./model.json", import.meta.url));

export interface OfflineOptions {
  /** A trained model in hand (tests, the calibration script). */
  model?: OfflineModel;
  modelPath?: string;
  dataDir?: string;
}

/** model.json when it matches the shipped data; otherwise a model trained in memory from the data. */
export function loadOfflineModel(options: OfflineOptions = {}): OfflineModel | undefined {
  if (options.model) return options.model;
  const modelPath = options.modelPath ?? DEFAULT_MODEL_PATH;
  const dataDir = options.dataDir ?? DEFAULT_DATA_DIR;
  let stored: OfflineModel | undefined;
  if (existsSync(modelPath)) {
    try {
      const parsed = JSON.parse(readFileSync(modelPath, "utf8")) as OfflineModel;
      if (parsed.format === MODEL_FORMAT && parsed.questions) stored = parsed;
    } catch {
      stored = undefined; // A corrupt model.json is retrained rather than trusted.
    }
  }
  if (dataFiles(dataDir).length === 0) return stored;
  const dataset = loadDataset(dataDir);
  if (stored && stored.dataDigest === dataset.digest) return stored;
  return trainAll(dataset);
}

function sameLabels(model: QuestionModel, question: Question): boolean {
  if (question.type !== model.type) return false;
  if (question.type === "noul") return true;
  if (question.type !== "choice") return false;
  const asked = Object.keys(question.criteria).sort();
  const known = [...model.labels].sort();
  return asked.length === known.length && asked.every((l, i) => l === known[i]);
}

export class OfflineClassifier implements Classifier {
  readonly backend = "offline" as const;
  private loaded: OfflineModel | undefined;
  private tried = false;

  constructor(private readonly options: OfflineOptions = {}) {}

  /** Loads (or trains) on first use, so constructing the app stays cheap. */
  private get trained(): OfflineModel | undefined {
    if (!this.tried) {
      this.tried = true;
      try {
        this.loaded = loadOfflineModel(this.options);
      } catch {
        this.loaded = undefined; // No model at all: every question answers unsure.
      }
    }
    return this.loaded;
  }

  get model(): string {
    const m = this.trained;
    return m ? `offline-logreg-${m.version}` : "offline-untrained";
  }

  async ask(request: AskRequest): Promise<Record<string, Answer>> {
    const model = this.trained;
    const out: Record<string, Answer> = {};
    for (const [id, question] of Object.entries(request.questions)) {
      const qm = model?.questions[id];
      if (!qm) {
        out[id] = { type: "unsure", reason: `the offline model was not trained on question "${id}"` };
        continue;
      }
      if (!sameLabels(qm, question)) {
        out[id] = {
          type: "unsure",
          reason: `question "${id}" was asked with labels the offline model was not trained on`,
        };
        continue;
      }
      const probs = predict(qm, request.state);
      if (qm.type === "noul") {
        out[id] = { type: "noul", noul: probs[qm.labels.indexOf("true")]! };
        continue;
      }
      let best = 0;
      for (let i = 1; i < probs.length; i++) if (probs[i]! > probs[best]!) best = i;
      out[id] = {
        type: "choice",
        choice: qm.labels[best]!,
        confidence: probs[best]!,
        probabilities: Object.fromEntries(qm.labels.map((l, i) => [l, probs[i]!])),
      };
    }
    return out;
  }
}

// Trains one model per question id in questions.ts from the shipped data set. Used by the build
// step (scripts/train-jev.ts, which writes model.json) and by the offline classifier when
// model.json is missing or stale.
import { allQuestions } from "../questions.ts";
import { examplesFor, loadDataset, type Dataset } from "./dataset.ts";
import {
  DEFAULT_TRAIN,
  MODEL_FORMAT,
  modelVersion,
  trainQuestion,
  type OfflineModel,
  type QuestionModel,
  type TrainOptions,
} from "./model.ts";

export function labelsOf(questionId: string): { type: "choice" | "noul"; labels: string[] } | undefined {
  const q = allQuestions()[questionId];
  if (!q) return undefined;
  if (q.type === "choice") return { type: "choice", labels: Object.keys(q.criteria) };
  if (q.type === "noul") return { type: "noul", labels: ["false", "true"] };
  return undefined;
}

/** Trains on the training split only: the held-out split is for the calibration report. */
export function trainAll(dataset: Dataset = loadDataset(), opts: TrainOptions = DEFAULT_TRAIN): OfflineModel {
  const questions: Record<string, QuestionModel> = {};
  for (const id of Object.keys(allQuestions())) {
    const spec = labelsOf(id);
    if (!spec) continue;
    const examples = examplesFor(dataset, id, "train");
    if (examples.length === 0) continue;
    questions[id] = trainQuestion(spec.type, spec.labels, examples, opts);
  }
  return { format: MODEL_FORMAT, dataDigest: dataset.digest, version: modelVersion(questions), questions };
}

// Accuracy and expected calibration error (ECE, equal-width confidence bins) over predictions,
// shared by the calibration report and the tests.

export interface Prediction {
  /** Confidence in the predicted label: the top choice probability, or max(p, 1 - p) for a noul. */
  confidence: number;
  correct: boolean;
}

export interface Bin {
  lo: number;
  hi: number;
  count: number;
  meanConfidence: number;
  accuracy: number;
}

export interface Report {
  n: number;
  accuracy: number;
  ece: number;
  bins: Bin[];
}

export function evaluate(predictions: Prediction[], nBins = 10): Report {
  const bins: Bin[] = Array.from({ length: nBins }, (_, i) => ({
    lo: i / nBins,
    hi: (i + 1) / nBins,
    count: 0,
    meanConfidence: 0,
    accuracy: 0,
  }));
  let correct = 0;
  for (const p of predictions) {
    if (p.correct) correct++;
    // Confidence 1.0 belongs in the top bin, not a bin of its own.
    const b = bins[clamp(Math.floor(p.confidence * nBins), 0, nBins - 1)]!;
    b.count++;
    b.meanConfidence += p.confidence;
    b.accuracy += p.correct ? 1 : 0;
  }
  let ece = 0;
  for (const b of bins) {
    if (b.count === 0) continue;
    b.meanConfidence /= b.count;
    b.accuracy /= b.count;
    ece += (b.count / predictions.length) * Math.abs(b.accuracy - b.meanConfidence);
  }
  return { n: predictions.length, accuracy: predictions.length ? correct / predictions.length : 0, ece, bins };
}

import type { Dataset } from "./dataset.ts";
import { examplesFor } from "./dataset.ts";
import { predict, type OfflineModel } from "./model.ts";
import { clamp } from "../../base/util/clamp.ts";

/** The model's predictions on the held-out split, per question id. */
export function heldOutPredictions(model: OfflineModel, dataset: Dataset): Record<string, Prediction[]> {
  const out: Record<string, Prediction[]> = {};
  for (const [id, qm] of Object.entries(model.questions)) {
    out[id] = examplesFor(dataset, id, "heldout").map((e) => {
      const probs = predict(qm, e.state);
      let best = 0;
      for (let i = 1; i < probs.length; i++) if (probs[i]! > probs[best]!) best = i;
      return { confidence: probs[best]!, correct: qm.labels[best] === e.label };
    });
  }
  return out;
}

/** A stored ClassifierAnswer row as a prediction; undefined for unsure or unreadable rows. */
export function storedPrediction(row: {
  questionType: string;
  answer: string;
  probabilities: string;
  truth: string;
}): Prediction | undefined {
  if (row.answer === "" || row.truth === "") return undefined;
  if (row.questionType === "noul") {
    const p = Number(row.answer);
    if (!Number.isFinite(p)) return undefined;
    const predicted = p >= 0.5 ? "true" : "false";
    return { confidence: Math.max(p, 1 - p), correct: predicted === row.truth };
  }
  let probs: Record<string, unknown>;
  try {
    probs = JSON.parse(row.probabilities) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const p = probs[row.answer];
  if (typeof p !== "number") return undefined;
  return { confidence: p, correct: row.answer === row.truth };
}

// A small multinomial logistic regression per question id, over the binary features of
// features.ts. Trained by deterministic full-batch gradient descent with L2, then temperature-scaled:
// the temperature is fit on out-of-fold logits of the training split (5-fold cross-validation), so
// the held-out split stays untouched for the calibration report. Nothing here is random.
import { createHash } from "node:crypto";
import { extractFeatures } from "./features.ts";

export const MODEL_FORMAT = 1;

export interface Example {
  state: string | Record<string, unknown>;
  label: string;
}

export interface QuestionModel {
  type: "choice" | "noul";
  labels: string[];
  features: string[];
  /** weights[c][f] for class c and feature f. */
  weights: number[][];
  temperature: number;
  trainedOn: number;
}

export interface OfflineModel {
  format: number;
  /** sha256 of the training data, so a stale model.json can be noticed. */
  dataDigest: string;
  /** Short content hash, used as the model name stored with every answer. */
  version: string;
  questions: Record<string, QuestionModel>;
}

export interface TrainOptions {
  iterations: number;
  learningRate: number;
  l2: number;
  folds: number;
}

// Picked by 4-fold cross-validation on the training split (never the held-out one).
export const DEFAULT_TRAIN: TrainOptions = { iterations: 400, learningRate: 1, l2: 0.003, folds: 5 };

interface Encoded {
  x: number[][];
  y: number[];
}

function encode(examples: Example[], index: Map<string, number>, labels: string[]): Encoded {
  const x: number[][] = [];
  const y: number[] = [];
  for (const e of examples) {
    const li = labels.indexOf(e.label);
    if (li < 0) continue;
    const feats: number[] = [];
    for (const f of extractFeatures(e.state)) {
      const i = index.get(f);
      if (i !== undefined) feats.push(i);
    }
    x.push(feats);
    y.push(li);
  }
  return { x, y };
}

function softmax(logits: number[], temperature = 1): number[] {
  const scaled = logits.map((l) => l / temperature);
  const max = Math.max(...scaled);
  const exps = scaled.map((l) => Math.exp(l - max));
  const sum = exps.reduce((a, b) => a + b, 0);
  return exps.map((e) => e / sum);
}

function logits(weights: number[][], feats: number[]): number[] {
  return weights.map((w) => {
    let z = 0;
    for (const f of feats) z += w[f]!;
    return z;
  });
}

/** Plain full-batch gradient descent on mean cross-entropy + L2 (bias feature included in L2: the
 * data set is small and an unregularised bias overfits class priors). */
function fit(data: Encoded, nFeatures: number, nClasses: number, opts: TrainOptions): number[][] {
  const w: number[][] = Array.from({ length: nClasses }, () => new Array<number>(nFeatures).fill(0));
  const n = data.x.length;
  if (n === 0) return w;
  const grad: number[][] = Array.from({ length: nClasses }, () => new Array<number>(nFeatures).fill(0));
  for (let it = 0; it < opts.iterations; it++) {
    for (const g of grad) g.fill(0);
    for (let i = 0; i < n; i++) {
      const feats = data.x[i]!;
      const p = softmax(logits(w, feats));
      for (let c = 0; c < nClasses; c++) {
        const err = p[c]! - (data.y[i] === c ? 1 : 0);
        if (err === 0) continue;
        const g = grad[c]!;
        for (const f of feats) g[f]! += err;
      }
    }
    for (let c = 0; c < nClasses; c++) {
      const wc = w[c]!;
      const g = grad[c]!;
      for (let f = 0; f < nFeatures; f++) wc[f] = wc[f]! - opts.learningRate * (g[f]! / n + opts.l2 * wc[f]!);
    }
  }
  return w;
}

/** The temperature minimising negative log-likelihood of held-aside logits, by grid search. */
function fitTemperature(scored: { logits: number[]; y: number }[]): number {
  if (scored.length === 0) return 1;
  let best = 1;
  let bestLoss = Infinity;
  for (let t = 0.1; t <= 5.0001; t += 0.05) {
    let loss = 0;
    for (const s of scored) loss -= Math.log(Math.max(1e-12, softmax(s.logits, t)[s.y]!));
    if (loss < bestLoss - 1e-12) {
      bestLoss = loss;
      best = Math.round(t * 100) / 100;
    }
  }
  return best;
}

export function trainQuestion(
  type: "choice" | "noul",
  labels: string[],
  examples: Example[],
  opts: TrainOptions = DEFAULT_TRAIN,
): QuestionModel {
  // Vocabulary in first-seen order, then sorted: deterministic regardless of Set iteration details.
  const vocab = new Set<string>();
  for (const e of examples) if (labels.includes(e.label)) for (const f of extractFeatures(e.state)) vocab.add(f);
  const features = [...vocab].sort();
  const index = new Map(features.map((f, i) => [f, i]));
  const data = encode(examples, index, labels);

  // Out-of-fold logits for the temperature: fold k holds every example whose position mod folds is k.
  const scored: { logits: number[]; y: number }[] = [];
  if (data.x.length >= opts.folds * 2) {
    for (let k = 0; k < opts.folds; k++) {
      const train: Encoded = { x: [], y: [] };
      const test: Encoded = { x: [], y: [] };
      data.x.forEach((x, i) => {
        const into = i % opts.folds === k ? test : train;
        into.x.push(x);
        into.y.push(data.y[i]!);
      });
      const wk = fit(train, features.length, labels.length, opts);
      test.x.forEach((x, i) => {
        scored.push({ logits: logits(wk, x), y: test.y[i]! });
      });
    }
  }
  const weights = fit(data, features.length, labels.length, opts);
  const round = (v: number) => Math.round(v * 1e6) / 1e6;
  return {
    type,
    labels,
    features,
    weights: weights.map((w) => w.map(round)),
    temperature: fitTemperature(scored),
    trainedOn: data.x.length,
  };
}

/** Class probabilities for a state, in the order of model.labels. */
const indexCache = new WeakMap<QuestionModel, Map<string, number>>();

export function predict(model: QuestionModel, state: string | Record<string, unknown>): number[] {
  let index = indexCache.get(model);
  if (!index) {
    index = new Map(model.features.map((f, i) => [f, i]));
    indexCache.set(model, index);
  }
  const feats: number[] = [];
  for (const f of extractFeatures(state)) {
    const i = index.get(f);
    if (i !== undefined) feats.push(i);
  }
  return softmax(logits(model.weights, feats), model.temperature);
}

export function modelVersion(questions: Record<string, QuestionModel>): string {
  return createHash("sha256").update(JSON.stringify(questions)).digest("hex").slice(0, 10);
}

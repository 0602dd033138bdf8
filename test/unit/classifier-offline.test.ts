// The embedded offline classifier: a real small model trained on data/jev, deterministic, with
// probabilities that sum to 1, held-out accuracy above the measured floors, and unsure for anything
// it was not trained on.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { Answer, Question } from "../../src/classifier/jev.ts";
import { OfflineClassifier, loadOfflineModel } from "../../src/classifier/offline/classifier.ts";
import { examplesFor, isHeldOut, loadDataset } from "../../src/classifier/offline/dataset.ts";
import { evaluate, heldOutPredictions } from "../../src/classifier/offline/evaluate.ts";
import { extractFeatures } from "../../src/classifier/offline/features.ts";
import { trainQuestion } from "../../src/classifier/offline/model.ts";
import { trainAll } from "../../src/classifier/offline/train.ts";
import {
  allQuestions,
  bandedChoice,
  itemState,
  messageState,
  modeQuestions,
  noulValue,
  tagQuestions,
  triageQuestions,
  watchQuestions,
  watchState,
  watchVerdict,
} from "../../src/classifier/questions.ts";

const dataset = loadDataset();
// Trained in memory here, so the test does not depend on whether postinstall ran.
const model = trainAll(dataset);
const jev = new OfflineClassifier({ model });

test("the shipped data set is a few hundred labelled examples covering every question, with a held-out split", () => {
  assert.ok(dataset.records.length >= 300, `only ${dataset.records.length} records`);
  for (const id of Object.keys(allQuestions())) {
    const train = examplesFor(dataset, id, "train").length;
    const held = examplesFor(dataset, id, "heldout").length;
    assert.ok(train >= 40 && held >= 10, `${id}: ${train} train / ${held} held out`);
    const share = held / (train + held);
    assert.ok(share > 0.1 && share < 0.3, `${id}: held-out share ${share.toFixed(2)}`);
  }
  // Every label a question can give is present in its data.
  for (const [id, q] of Object.entries(allQuestions())) {
    const labels = q.type === "choice" ? Object.keys(q.criteria) : ["true", "false"];
    const seen = new Set(examplesFor(dataset, id, "all").map((e) => e.label));
    for (const l of labels) assert.ok(seen.has(l), `${id} has no "${l}" example`);
  }
});

test("the split is by hash of the state, so it does not depend on order", () => {
  const r = dataset.records[0]!;
  assert.is(isHeldOut(r.state), isHeldOut(JSON.parse(JSON.stringify(r.state))));
  const reordered = { ...(r.state as Record<string, unknown>) };
  const keys = Object.keys(reordered).reverse();
  const flipped = Object.fromEntries(keys.map((k) => [k, reordered[k]]));
  assert.is(isHeldOut(flipped), isHeldOut(r.state));
});

test("training is deterministic: the same data gives the same weights and temperature", () => {
  const examples = examplesFor(dataset, "mode", "train");
  const a = trainQuestion("choice", ["solo", "conspiracy", "split"], examples);
  const b = trainQuestion("choice", ["solo", "conspiracy", "split"], examples);
  assert.equal(a, b);
  assert.ok(a.temperature > 0);
});

test("answers are deterministic and choice probabilities sum to 1", async () => {
  const state = messageState({
    text: "Pepper, can you draft the launch email for Friday?",
    author: "owner",
    to: "Pepper",
  });
  const one = await jev.ask({ state, questions: { ...tagQuestions(), ...modeQuestions() }, subject: "t-1" });
  const two = await jev.ask({ state, questions: { ...tagQuestions(), ...modeQuestions() }, subject: "t-1" });
  assert.equal(one, two);
  for (const answer of Object.values(one)) {
    assert.is(answer.type, "choice");
    if (answer.type !== "choice") continue;
    const sum = Object.values(answer.probabilities).reduce((s, p) => s + p, 0);
    assert.ok(Math.abs(sum - 1) < 1e-9, `sum ${sum}`);
    assert.is(answer.confidence, Math.max(...Object.values(answer.probabilities)));
    assert.is(answer.probabilities[answer.choice], answer.confidence);
  }
});

test("noul answers are probabilities in [0, 1]", async () => {
  const state = watchState({
    message: "It opens at 9.",
    kind: "deliver",
    author: "Hugin",
    request: "When does the bank open?",
  });
  const answers = await jev.ask({ state, questions: watchQuestions(), subject: "t-2" });
  for (const id of Object.keys(watchQuestions())) {
    const v = noulValue(answers[id]);
    assert.ok(v !== undefined && v >= 0 && v <= 1, `${id}: ${JSON.stringify(answers[id])}`);
  }
});

test("held-out accuracy stays above the floors measured when the model was built", () => {
  // Measured (npm run calibration): kind 83.8%, mode 88.9%, answers_request 91.7%,
  // states_fact_without_source 70.8%, contradicts_earlier 75.0%, task_type 94.1%, triage_mode 70.6%,
  // pooled 82.1%. The floors leave room for small data edits, not for a broken model.
  const floors: Record<string, number> = {
    kind: 0.75,
    mode: 0.75,
    answers_request: 0.8,
    states_fact_without_source: 0.6,
    contradicts_earlier: 0.6,
    task_type: 0.8,
    triage_mode: 0.6,
  };
  const held = heldOutPredictions(model, dataset);
  for (const [id, floor] of Object.entries(floors)) {
    const report = evaluate(held[id] ?? []);
    assert.ok(report.n > 0, `${id} has no held-out examples`);
    assert.ok(report.accuracy >= floor, `${id}: held-out accuracy ${report.accuracy.toFixed(3)} below ${floor}`);
  }
  const pooled = evaluate(Object.values(held).flat());
  assert.ok(pooled.accuracy >= 0.75, `pooled ${pooled.accuracy}`);
  assert.ok(pooled.ece < 0.15, `pooled ECE ${pooled.ece}`);
});

test("it beats the majority-class baseline on held-out data for every choice question", () => {
  const held = heldOutPredictions(model, dataset);
  for (const id of ["kind", "mode", "task_type"]) {
    const train = examplesFor(dataset, id, "train");
    const counts = new Map<string, number>();
    for (const e of train) counts.set(e.label, (counts.get(e.label) ?? 0) + 1);
    const majority = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]![0];
    const heldEx = examplesFor(dataset, id, "heldout");
    const baseline = heldEx.filter((e) => e.label === majority).length / heldEx.length;
    const acc = evaluate(held[id]!).accuracy;
    assert.ok(acc > baseline + 0.2, `${id}: ${acc} vs baseline ${baseline}`);
  }
});

test("clear cases come out the way a reader would tag them", async () => {
  const ask = async (state: Record<string, unknown>, questions: Record<string, Question>) =>
    jev.ask({ state, questions, subject: "t-3" });
  const kind = async (text: string, author: string, refers = "") => {
    const a = (await ask(messageState({ text, author, refers_to: refers }), tagQuestions())).kind as Answer;
    return a.type === "choice" ? a.choice : "unsure";
  };
  assert.is(await kind("Rook, could you fix the crash on the settings page please?", "owner"), "request");
  assert.is(await kind("On it, I'll take the settings crash.", "Rook", "n-1"), "claim");
  assert.is(await kind("Sorry, I can't take this one, I don't have access to that repo.", "Inky", "n-1"), "decline");
  assert.is(await kind("Thanks all, great work today.", "owner"), "say");
  const triage = await ask(itemState("Write a cover letter for the marketing job"), triageQuestions());
  assert.is(triage.task_type?.type === "choice" ? triage.task_type.choice : "", "writing");
});

test("a question it was not trained on, or asked with other labels, is unsure", async () => {
  const answers = await jev.ask({
    state: "anything",
    questions: {
      sentiment: { type: "choice", instructions: "Mood?", criteria: { happy: null, sad: null } },
      kind: { type: "choice", instructions: "Kind?", criteria: { say: null, shout: null } },
      mode: { type: "noul", instructions: "Is it solo?", criteria: { true: "yes", false: "no" } },
    },
    subject: "t-4",
  });
  assert.is(answers.sentiment?.type, "unsure");
  assert.is(answers.kind?.type, "unsure");
  assert.is(answers.mode?.type, "unsure");
});

test("without model.json it trains in memory, to the same model the build step writes", () => {
  const inMemory = loadOfflineModel({ modelPath: path.join(os.tmpdir(), "no-such-jev-model.json") });
  assert.ok(inMemory);
  assert.is(inMemory!.version, model.version);
  assert.is(new OfflineClassifier({ model }).model, `offline-logreg-${model.version}`);
});

test("with neither a model nor data, every question is unsure rather than an error", async () => {
  const empty = mkdtempSync(path.join(os.tmpdir(), "jev-empty-"));
  try {
    const bare = new OfflineClassifier({ modelPath: path.join(empty, "model.json"), dataDir: empty });
    const answers = await bare.ask({ state: "hi", questions: tagQuestions(), subject: "t-5" });
    assert.is(answers.kind?.type, "unsure");
    assert.is(bare.model, "offline-untrained");
  } finally {
    rmSync(empty, { recursive: true, force: true });
  }
});

test("features read the header fields and the pair signals of a watch state", () => {
  const f = extractFeatures(messageState({ text: "See plan.md", author: "owner", to: "Pepper", refers_to: "n-2" }));
  assert.ok(f.includes("h:author:owner") && f.includes("h:to") && f.includes("h:ref") && f.includes("thas:file"));
  const w = extractFeatures(
    watchState({
      message: "It's 12 euros, per the menu.",
      kind: "deliver",
      author: "Rook",
      request: "How much is lunch?",
      earlier: ["Owner: it was 10 euros last time."],
    }),
  );
  assert.ok(w.includes("p:source") && w.includes("p:num:alldiff") && w.includes("kind:deliver"));
});

test("the band rule: a choice stands only at or above the threshold", () => {
  const choice = (confidence: number): Answer => ({
    type: "choice",
    choice: "request",
    confidence,
    probabilities: { request: confidence },
  });
  assert.equal(bandedChoice(choice(0.8), 0.8), { sure: true, choice: "request", confidence: 0.8 });
  assert.is(bandedChoice(choice(0.79), 0.8).sure, false);
  assert.is(bandedChoice({ type: "unsure", reason: "timeout" }, 0.8).sure, false);
  assert.is(bandedChoice(undefined, 0.8).sure, false);
  assert.is(bandedChoice({ type: "noul", noul: 0.99 }, 0.8).sure, false);
  assert.is(noulValue({ type: "unsure", reason: "x" }), undefined);
});

test("watchVerdict: breach on a high fact/contradiction score or a low answers_request; unsure never breaches", () => {
  const n = (noul: number): Answer => ({ type: "noul", noul });
  const verdict = (a: number, f: number, c: number) =>
    watchVerdict({ answers_request: n(a), states_fact_without_source: n(f), contradicts_earlier: n(c) }, 0.8);
  assert.is(verdict(0.9, 0.1, 0.1).breach, false);
  assert.is(verdict(0.9, 0.8, 0.1).breach, true);
  assert.is(verdict(0.9, 0.1, 0.85).breach, true);
  assert.is(verdict(0.2, 0.1, 0.1).breach, true);
  assert.is(verdict(0.21, 0.1, 0.1).breach, false);
  const unsure = watchVerdict(
    {
      answers_request: { type: "unsure", reason: "timeout" },
      states_fact_without_source: n(0.99),
      contradicts_earlier: n(0.99),
    },
    0.8,
  );
  assert.equal([unsure.sure, unsure.breach], [false, false]);
});

test("ECE is the count-weighted gap between accuracy and confidence per bin", () => {
  const r = evaluate([
    { confidence: 0.95, correct: true },
    { confidence: 0.95, correct: false },
    { confidence: 0.55, correct: true },
    { confidence: 1, correct: true },
  ]);
  assert.is(r.n, 4);
  assert.is(r.accuracy, 0.75);
  // Top bin: 3 predictions, mean conf 0.9667, acc 0.6667 -> gap 0.3; bin 5: conf 0.55, acc 1 -> gap 0.45.
  assert.ok(Math.abs(r.ece - (0.75 * 0.3 + 0.25 * 0.45)) < 1e-9, String(r.ece));
  assert.is(r.bins[9]!.count, 3);
});

test.run();

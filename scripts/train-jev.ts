// Build step (npm postinstall): trains the offline classifier on data/jev/*.jsonl (training split
// only) and writes src/classifier/offline/model.json. Deterministic: the same data gives the same file.
import { writeFileSync } from "node:fs";
import path from "node:path";
import { DEFAULT_MODEL_PATH } from "../src/classifier/offline/classifier.ts";
import { loadDataset } from "../src/classifier/offline/dataset.ts";
import { trainAll } from "../src/classifier/offline/train.ts";

const started = Date.now();
const dataset = loadDataset();
if (dataset.records.length === 0) {
  console.error("train-jev: no labelled examples in data/jev/, leaving the offline model untrained");
  process.exit(0);
}
const model = trainAll(dataset);
writeFileSync(DEFAULT_MODEL_PATH, JSON.stringify(model) + "\n");
const summary = Object.entries(model.questions)
  .map(([id, q]) => `${id} (${q.trainedOn} examples, ${q.features.length} features, T=${q.temperature})`)
  .join(", ");
console.log(
  `train-jev: wrote ${path.relative(process.cwd(), DEFAULT_MODEL_PATH)} (version ${model.version}) in ${Date.now() - started} ms: ${summary}`,
);

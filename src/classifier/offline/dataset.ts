// The labelled example set the offline model is trained on (data/jev/*.jsonl). One JSON object a
// line: {"state": <state as the questions.ts builders make it>, "labels": {"<question id>": "<label>"}}.
// Noul labels are "true"/"false". The held-out split is a deterministic 80/20 by hash of the state,
// so it never moves when lines are added or reordered.
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { stateText } from "../questions.ts";
import type { Example } from "./model.ts";

export const DEFAULT_DATA_DIR = fileURLToPath(new URL("../../../data/jev/", import.meta.url));

export interface LabelledRecord {
  state: string | Record<string, unknown>;
  labels: Record<string, string>;
  file: string;
  line: number;
}

export interface Dataset {
  records: LabelledRecord[];
  digest: string;
}

export function dataFiles(dir = DEFAULT_DATA_DIR): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith(".jsonl"))
    .sort()
    .map((f) => path.join(dir, f));
}

export function loadDataset(dir = DEFAULT_DATA_DIR): Dataset {
  const hash = createHash("sha256");
  const records: LabelledRecord[] = [];
  for (const file of dataFiles(dir)) {
    const text = readFileSync(file, "utf8");
    hash.update(path.basename(file)).update("\0").update(text).update("\0");
    text.split("\n").forEach((raw, i) => {
      const line = raw.trim();
      if (!line || line.startsWith("//")) return;
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        throw new Error(`${path.basename(file)}:${i + 1}: not JSON`);
      }
      const r = parsed as { state?: unknown; labels?: unknown };
      const stateOk = typeof r.state === "string" || (r.state !== null && typeof r.state === "object");
      if (!stateOk || !r.labels || typeof r.labels !== "object") {
        throw new Error(`${path.basename(file)}:${i + 1}: needs "state" and "labels"`);
      }
      records.push({
        state: r.state as LabelledRecord["state"],
        labels: r.labels as Record<string, string>,
        file: path.basename(file),
        line: i + 1,
      });
    });
  }
  return { records, digest: hash.digest("hex") };
}

/** True for the ~20% of records kept out of training. */
export function isHeldOut(state: LabelledRecord["state"]): boolean {
  const h = createHash("sha256").update(stateText(state)).digest();
  return h.readUInt32BE(0) % 5 === 0;
}

export function examplesFor(dataset: Dataset, questionId: string, split: "train" | "heldout" | "all"): Example[] {
  const out: Example[] = [];
  for (const r of dataset.records) {
    const label = r.labels[questionId];
    if (label === undefined) continue;
    if (split !== "all" && isHeldOut(r.state) !== (split === "heldout")) continue;
    out.push({ state: r.state, label });
  }
  return out;
}

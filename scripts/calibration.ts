// npm run calibration: accuracy and expected calibration error (10 bins) per question, on the
// offline model's held-out split and on stored answers whose truth is known (ClassifierAnswer.truth,
// from DATABASE_URL or .crows/crows.db). Writes the held-out reliability diagram to
// docs/jev-reliability.svg.
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { loadOfflineModel } from "../src/classifier/offline/classifier.ts";
import { loadDataset } from "../src/classifier/offline/dataset.ts";
import {
  evaluate,
  heldOutPredictions,
  storedPrediction,
  type Prediction,
  type Report,
} from "../src/classifier/offline/evaluate.ts";

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

function table(title: string, reports: [string, Report, string?][]): void {
  console.log(`\n${title}`);
  console.log(`${"question".padEnd(28)}${"n".padStart(5)}${"accuracy".padStart(10)}${"ECE".padStart(8)}  note`);
  for (const [id, r, note] of reports) {
    console.log(
      `${id.padEnd(28)}${String(r.n).padStart(5)}${pct(r.accuracy).padStart(10)}${r.ece.toFixed(3).padStart(8)}  ${note ?? ""}`,
    );
  }
}

function escapeXml(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** One panel per question: bars are accuracy per confidence bin, the diagonal is perfect calibration. */
function reliabilitySvg(reports: [string, Report][], subtitle: string): string {
  const cols = 4;
  const pw = 220;
  const ph = 220;
  const pad = 40;
  const rows = Math.ceil(reports.length / cols);
  const width = cols * (pw + pad) + pad;
  const height = rows * (ph + pad + 42) + 70;
  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11">`,
  );
  parts.push(`<rect width="100%" height="100%" fill="#fff"/>`);
  parts.push(
    `<text x="${pad}" y="24" font-size="16" font-weight="bold">Jev offline model: reliability on the held-out split</text>`,
  );
  parts.push(`<text x="${pad}" y="42" fill="#555">${escapeXml(subtitle)}</text>`);
  reports.forEach(([id, r], i) => {
    const x0 = pad + (i % cols) * (pw + pad);
    const y0 = 70 + Math.floor(i / cols) * (ph + pad + 42);
    const X = (v: number) => x0 + v * pw;
    const Y = (v: number) => y0 + 32 + (1 - v) * ph;
    parts.push(`<text x="${x0}" y="${y0 + 10}" font-weight="bold">${escapeXml(id)}</text>`);
    parts.push(
      `<text x="${x0}" y="${y0 + 24}" fill="#333">n=${r.n}  accuracy ${pct(r.accuracy)}  ECE ${r.ece.toFixed(3)}</text>`,
    );
    parts.push(`<rect x="${X(0)}" y="${Y(1)}" width="${pw}" height="${ph}" fill="#fafafa" stroke="#999"/>`);
    for (const b of r.bins) {
      if (b.count === 0) continue;
      const h = b.accuracy * ph;
      parts.push(
        `<rect x="${X(b.lo) + 1}" y="${Y(b.accuracy)}" width="${pw / r.bins.length - 2}" height="${h}" fill="#4a7fb5" fill-opacity="${0.35 + 0.65 * Math.min(1, b.count / Math.max(1, r.n / 4))}"><title>${b.lo.toFixed(1)}-${b.hi.toFixed(1)}: n=${b.count}, acc=${b.accuracy.toFixed(2)}, conf=${b.meanConfidence.toFixed(2)}</title></rect>`,
      );
      parts.push(`<circle cx="${X(b.meanConfidence)}" cy="${Y(b.accuracy)}" r="2.5" fill="#c0392b"/>`);
    }
    parts.push(`<line x1="${X(0)}" y1="${Y(0)}" x2="${X(1)}" y2="${Y(1)}" stroke="#c0392b" stroke-dasharray="4 3"/>`);
    for (const t of [0, 0.5, 1]) {
      parts.push(`<text x="${X(t)}" y="${Y(0) + 14}" text-anchor="middle" fill="#555">${t}</text>`);
      parts.push(`<text x="${X(0) - 4}" y="${Y(t) + 4}" text-anchor="end" fill="#555">${t}</text>`);
    }
  });
  parts.push(
    `<text x="${pad}" y="${height - 10}" fill="#555">x: confidence in the predicted label (10 bins); y: accuracy in the bin. Bars: accuracy; dots: mean confidence; dashed: perfect calibration.</text>`,
  );
  parts.push(`</svg>`);
  return parts.join("\n") + "\n";
}

function databaseFile(): string | undefined {
  const url = process.env.DATABASE_URL?.trim();
  if (url) {
    if (!url.startsWith("file:")) {
      console.log(`\nStored answers: skipped (DATABASE_URL is not a SQLite file: URL)`);
      return undefined;
    }
    return url.slice("file:".length);
  }
  const dataDir = process.env.CROWS_DATA_DIR?.trim() || ".crows";
  return path.join(dataDir, "crows.db");
}

function storedReports(): void {
  const file = databaseFile();
  if (!file) return;
  if (!existsSync(file)) {
    console.log(`\nStored answers: skipped (no database at ${file})`);
    return;
  }
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
    const rows = db
      .prepare(
        `SELECT questionId, questionType, answer, probabilities, truth, backend, model FROM "ClassifierAnswer" WHERE truth != ''`,
      )
      .all() as {
      questionId: string;
      questionType: string;
      answer: string;
      probabilities: string;
      truth: string;
      backend: string;
      model: string;
    }[];
    if (rows.length === 0) {
      console.log(`\nStored answers: none with a known truth in ${file}`);
      return;
    }
    const byKey = new Map<string, { predictions: Prediction[]; unsure: number }>();
    for (const row of rows) {
      const key = `${row.questionId} [${row.backend}]`;
      const entry = byKey.get(key) ?? { predictions: [], unsure: 0 };
      const p = storedPrediction(row);
      if (p) entry.predictions.push(p);
      else entry.unsure++;
      byKey.set(key, entry);
    }
    table(
      `Stored answers with a known truth (${file})`,
      [...byKey.entries()]
        .sort()
        .map(([key, e]) => [key, evaluate(e.predictions), e.unsure ? `${e.unsure} unsure, not scored` : ""]),
    );
  } catch (error) {
    console.log(`\nStored answers: skipped (${error instanceof Error ? error.message : String(error)})`);
  } finally {
    db?.close();
  }
}

const dataset = loadDataset();
const model = loadOfflineModel();
if (!model) {
  console.error("calibration: no offline model and no data set to train one");
  process.exit(1);
}
const heldOut = heldOutPredictions(model, dataset);
const reports: [string, Report][] = Object.entries(heldOut).map(([id, preds]) => [id, evaluate(preds)]);
table(
  `Offline model offline-logreg-${model.version}, held-out split (~20% of data/jev by hash, never trained on)`,
  reports.map(([id, r]) => [id, r, `T=${model.questions[id]!.temperature}`]),
);
const pooled = evaluate(Object.values(heldOut).flat());
console.log(
  `${"all (pooled)".padEnd(28)}${String(pooled.n).padStart(5)}${pct(pooled.accuracy).padStart(10)}${pooled.ece.toFixed(3).padStart(8)}`,
);
storedReports();

const svgPath = path.resolve("docs/jev-reliability.svg");
mkdirSync(path.dirname(svgPath), { recursive: true });
writeFileSync(
  svgPath,
  reliabilitySvg(
    reports,
    `model offline-logreg-${model.version}; ${dataset.records.length} labelled records; pooled held-out n=${pooled.n}, accuracy ${pct(pooled.accuracy)}, ECE ${pooled.ece.toFixed(3)}`,
  ),
);
console.log(`\nwrote ${path.relative(process.cwd(), svgPath)}`);

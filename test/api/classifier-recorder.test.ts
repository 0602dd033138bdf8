// The recorder: every answer lands in ClassifierAnswer (a real temp SQLite database) with its
// probabilities, digest, backend, model and truth; a storage or backend failure never reaches the caller.
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { loadConfig } from "../../src/base/config.ts";
import { createClassifier } from "../../src/classifier/index.ts";
import type { Answer, AskRequest, Classifier } from "../../src/classifier/jev.ts";
import { messageState, stateText, tagQuestions, watchQuestions, watchState } from "../../src/classifier/questions.ts";
import { RecordingClassifier } from "../../src/classifier/recorder.ts";
import { openDatabase, type PrismaClient } from "../../src/storage/db.ts";
import { startFakeSystemOne } from "../helpers/fake-systemone.ts";

let tmp = "";
let prisma: PrismaClient;

test.before(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), "crows-jev-"));
  prisma = (await openDatabase(loadConfig({ CROWS_DATA_DIR: tmp }))).prisma;
});

test.after(async () => {
  await prisma.$disconnect();
  rmSync(tmp, { recursive: true, force: true });
});

test("the offline classifier's answers are stored with digest, probabilities, model, latency and truth", async () => {
  const jev = createClassifier(loadConfig({ CROWS_DATA_DIR: tmp }), prisma);
  assert.is(jev.backend, "offline");
  const state = messageState({
    text: "Hugin, can you look up the museum's opening hours?",
    author: "owner",
    to: "Hugin",
  });
  const answers = await jev.ask({ state, questions: tagQuestions(), subject: "todo-1", truth: { kind: "request" } });
  const rows = await prisma.classifierAnswer.findMany({ where: { subject: "todo-1" } });
  assert.is(rows.length, 1);
  const row = rows[0]!;
  const kind = answers.kind as Extract<Answer, { type: "choice" }>;
  assert.is(row.questionId, "kind");
  assert.is(row.questionType, "choice");
  assert.is(row.answer, kind.choice);
  assert.equal(JSON.parse(row.probabilities), kind.probabilities);
  assert.is(row.stateDigest, createHash("sha256").update(stateText(state)).digest("hex"));
  assert.is(row.backend, "offline");
  assert.is(row.model, jev.model);
  assert.match(row.model, /^offline-logreg-[0-9a-f]{10}$/);
  assert.ok(row.latencyMs >= 0);
  assert.is(row.truth, "request");
});

test("noul answers store the value, and unsure answers store an empty answer with the reason", async () => {
  const jev = createClassifier(loadConfig({ CROWS_DATA_DIR: tmp }), prisma);
  const state = watchState({
    message: "Done, it's 441 euros.",
    kind: "deliver",
    author: "Sable",
    request: "Work out the VAT",
  });
  const questions = {
    ...watchQuestions(),
    sentiment: { type: "choice" as const, instructions: "Mood?", criteria: { up: null, down: null } },
  };
  const answers = await jev.ask({ state, questions, subject: "todo-2" });
  const rows = await prisma.classifierAnswer.findMany({ where: { subject: "todo-2" }, orderBy: { questionId: "asc" } });
  assert.equal(
    rows.map((r) => r.questionId),
    ["answers_request", "contradicts_earlier", "sentiment", "states_fact_without_source"],
  );
  const ar = rows.find((r) => r.questionId === "answers_request")!;
  assert.is(ar.questionType, "noul");
  assert.is(Number(ar.answer), (answers.answers_request as { noul: number }).noul);
  assert.is(ar.truth, "");
  const unsure = rows.find((r) => r.questionId === "sentiment")!;
  assert.is(unsure.answer, "");
  assert.match(JSON.parse(unsure.probabilities).unsure, /not trained/);
});

test("System One answers are stored under the pinned model, and failures as unsure rows", async () => {
  const fake = await startFakeSystemOne({ apiKey: "k", reply: (_c, i) => ({ status: i === 0 ? 200 : 429 }) });
  try {
    const config = loadConfig({
      CROWS_DATA_DIR: tmp,
      CROWS_JEV: "systemone",
      CROWS_JEV_BASE_URL: fake.url,
      CROWS_JEV_API_KEY: "k",
    });
    const jev = createClassifier(config, prisma);
    await jev.ask({ state: "hello", questions: tagQuestions(), subject: "todo-3" });
    const failed = await jev.ask({ state: "hello", questions: tagQuestions(), subject: "todo-4" });
    assert.is(failed.kind?.type, "unsure");
    const ok = await prisma.classifierAnswer.findFirstOrThrow({ where: { subject: "todo-3" } });
    assert.equal([ok.backend, ok.model, ok.answer], ["systemone", "jev-1", "say"]);
    const bad = await prisma.classifierAnswer.findFirstOrThrow({ where: { subject: "todo-4" } });
    assert.is(bad.answer, "");
    assert.match(bad.probabilities, /429/);
  } finally {
    await fake.close();
  }
});

test("a storage failure is reported aside and the caller still gets its answers", async () => {
  const errors: unknown[] = [];
  const inner: Classifier = {
    backend: "offline",
    model: "stub",
    ask: async (r: AskRequest) =>
      Object.fromEntries(Object.keys(r.questions).map((id) => [id, { type: "noul", noul: 0.5 } as Answer])),
  };
  const store = { classifierAnswer: { createMany: async () => Promise.reject(new Error("disk full")) } };
  const jev = new RecordingClassifier(inner, store, (e) => errors.push(e));
  const answers = await jev.ask({ state: "s", questions: watchQuestions(), subject: "x" });
  assert.equal(answers.answers_request, { type: "noul", noul: 0.5 });
  assert.is(errors.length, 1);
  // Even a throwing reporter does not break the caller.
  const loud = new RecordingClassifier(inner, store, () => {
    throw new Error("reporter broke");
  });
  assert.is(
    (await loud.ask({ state: "s", questions: watchQuestions(), subject: "x" })).contradicts_earlier?.type,
    "noul",
  );
});

test("a closed database does not break asking", async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "crows-jev-closed-"));
  const db = (await openDatabase(loadConfig({ CROWS_DATA_DIR: dir }))).prisma;
  await db.$executeRawUnsafe(`DROP TABLE "ClassifierAnswer"`);
  const errors: unknown[] = [];
  const jev = createClassifier(loadConfig({ CROWS_DATA_DIR: dir }), db, (e) => errors.push(e));
  const answers = await jev.ask({
    state: messageState({ text: "hi all", author: "owner" }),
    questions: tagQuestions(),
    subject: "y",
  });
  assert.is(answers.kind?.type, "choice");
  assert.is(errors.length, 1);
  await db.$disconnect();
  rmSync(dir, { recursive: true, force: true });
});

test("a backend that throws, or skips a question, still answers every question unsure", async () => {
  const store = { classifierAnswer: { createMany: async () => undefined } };
  const throwing: Classifier = {
    backend: "systemone",
    model: "jev-1",
    ask: async () => Promise.reject(new Error("boom")),
  };
  const a = await new RecordingClassifier(throwing, store).ask({ state: "s", questions: tagQuestions(), subject: "z" });
  assert.equal(a.kind, { type: "unsure", reason: "classifier failed: boom" });
  const skipping: Classifier = { backend: "offline", model: "m", ask: async () => ({}) };
  const b = await new RecordingClassifier(skipping, store).ask({
    state: "s",
    questions: watchQuestions(),
    subject: "z",
  });
  assert.is(Object.keys(b).length, 3);
  for (const v of Object.values(b)) assert.is(v.type, "unsure");
});

test.run();

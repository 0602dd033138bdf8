// The System One client against a real HTTP server on loopback: the wire shape, Bearer key,
// batching above 10 questions, and fail-closed unsure on timeout, 429, 5xx and malformed answers.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ConfigError, loadConfig } from "../../src/base/config.ts";
import { createBackend } from "../../src/classifier/index.ts";
import type { Answer, Question } from "../../src/classifier/jev.ts";
import { messageState, tagQuestions, watchQuestions } from "../../src/classifier/questions.ts";
import { SystemOneClassifier } from "../../src/classifier/systemone.ts";
import { scripted, startFakeSystemOne, type FakeSystemOne } from "../helpers/fake-systemone.ts";

const KEY = "jev-test-key-7731";

async function withFake(
  options: Parameters<typeof startFakeSystemOne>[0],
  run: (fake: FakeSystemOne, jev: SystemOneClassifier) => Promise<void>,
  timeoutMs = 2_000,
): Promise<void> {
  const fake = await startFakeSystemOne({ apiKey: KEY, ...options });
  try {
    await run(fake, new SystemOneClassifier({ baseUrl: fake.url, apiKey: KEY, model: "jev-1", timeoutMs }));
  } finally {
    await fake.close();
  }
}

function manyQuestions(n: number): Record<string, Question> {
  const out: Record<string, Question> = {};
  for (let i = 0; i < n; i++)
    out[`q${i}`] = { type: "noul", instructions: `Question ${i}?`, criteria: { true: "yes", false: "no" } };
  return out;
}

test("posts {model, state, questions} with the Bearer key and parses choice, noul and score answers", async () => {
  await withFake({ answer: scripted({ kind: "request", answers_request: 0.93 }) }, async (fake, jev) => {
    const state = messageState({ text: "Pepper, draft the email", author: "owner", to: "Pepper" });
    const questions: Record<string, Question> = {
      ...tagQuestions(),
      answers_request: watchQuestions().answers_request!,
      effort: { type: "score", instructions: "How much effort?", criteria: ["none", "some", "lots"] },
    };
    const answers = await jev.ask({ state, questions, subject: "n-1" });
    assert.is(fake.calls.length, 1);
    const call = fake.calls[0]!;
    assert.is(call.path, "/v1/systemone");
    assert.is(call.headers.authorization, `Bearer ${KEY}`);
    assert.is(call.body.model, "jev-1");
    assert.equal(call.body.state, state);
    assert.equal(Object.keys(call.body.questions ?? {}).sort(), ["answers_request", "effort", "kind"]);
    assert.equal(call.body.questions?.kind, tagQuestions().kind);
    const kind = answers.kind as Answer;
    assert.is(kind.type, "choice");
    if (kind.type === "choice") {
      assert.is(kind.choice, "request");
      assert.is(kind.confidence, 0.95);
    }
    assert.equal(answers.answers_request, { type: "noul", noul: 0.93 });
    assert.is(answers.effort?.type, "score");
  });
});

test("more than 10 questions go out as batches of at most 10, and every answer comes back", async () => {
  await withFake({ answer: (id) => ({ type: "noul", noul: Number(id.slice(1)) / 100 }) }, async (fake, jev) => {
    const answers = await jev.ask({ state: "s", questions: manyQuestions(12), subject: "n-2" });
    assert.is(fake.calls.length, 2);
    const sizes = fake.calls.map((c) => Object.keys(c.body.questions ?? {}).length).sort((a, b) => a - b);
    assert.equal(sizes, [2, 10]);
    for (const c of fake.calls) assert.is(c.headers.authorization, `Bearer ${KEY}`);
    assert.is(Object.keys(answers).length, 12);
    assert.equal(answers.q11, { type: "noul", noul: 0.11 });
    assert.equal(answers.q0, { type: "noul", noul: 0 });
  });
});

test("a timeout makes every question unsure, well within the deadline", async () => {
  await withFake(
    { reply: () => ({ delayMs: 1_500 }) },
    async (_fake, jev) => {
      const started = Date.now();
      const answers = await jev.ask({ state: "s", questions: watchQuestions(), subject: "n-3" });
      assert.ok(Date.now() - started < 1_000, `took ${Date.now() - started} ms`);
      for (const id of Object.keys(watchQuestions())) {
        assert.is(answers[id]?.type, "unsure");
        assert.match((answers[id] as { reason: string }).reason, /timed out/);
      }
    },
    150,
  );
});

for (const status of [429, 500, 503, 401]) {
  test(`HTTP ${status} makes every question unsure`, async () => {
    await withFake({ reply: () => ({ status }) }, async (fake, jev) => {
      const answers = await jev.ask({
        state: "s",
        questions: { ...tagQuestions(), ...watchQuestions() },
        subject: "n-4",
      });
      assert.is(fake.calls.length, 1);
      assert.is(Object.keys(answers).length, 4);
      for (const a of Object.values(answers)) assert.is(a.type, "unsure");
      assert.match((answers.kind as { reason: string }).reason, String(status));
    });
  });
}

test("a wrong key gets 401 from the server and reads unsure", async () => {
  const fake = await startFakeSystemOne({ apiKey: KEY });
  try {
    const jev = new SystemOneClassifier({ baseUrl: fake.url, apiKey: "wrong", model: "jev-1", timeoutMs: 2_000 });
    const answers = await jev.ask({ state: "s", questions: tagQuestions(), subject: "n-5" });
    assert.is(answers.kind?.type, "unsure");
  } finally {
    await fake.close();
  }
});

test("only one batch failing leaves the other batch's answers standing", async () => {
  await withFake(
    { reply: (call) => ({ status: Object.keys(call.body.questions ?? {}).length === 2 ? 429 : 200 }) },
    async (_fake, jev) => {
      const answers = await jev.ask({ state: "s", questions: manyQuestions(12), subject: "n-6" });
      const unsure = Object.values(answers).filter((a) => a.type === "unsure").length;
      assert.is(unsure, 2);
      assert.is(answers.q0?.type, "noul");
    },
  );
});

test("malformed bodies and off-shape answers are unsure, never guessed", async () => {
  await withFake({ reply: () => ({ rawBody: "not json {" }) }, async (_fake, jev) => {
    const answers = await jev.ask({ state: "s", questions: tagQuestions(), subject: "n-7" });
    assert.is(answers.kind?.type, "unsure");
  });
  await withFake(
    {
      answer: (id) =>
        id === "kind"
          ? { type: "choice", choice: "shout", confidence: 0.99, probabilities: { shout: 0.99 } }
          : id === "answers_request"
            ? { type: "noul", noul: 1.7 }
            : id === "states_fact_without_source"
              ? { type: "choice", choice: "true", confidence: 1 }
              : undefined,
    },
    async (_fake, jev) => {
      const answers = await jev.ask({
        state: "s",
        questions: { ...tagQuestions(), ...watchQuestions() },
        subject: "n-8",
      });
      assert.is(answers.kind?.type, "unsure", "choice outside the criteria");
      assert.is(answers.answers_request?.type, "unsure", "noul outside [0, 1]");
      assert.is(answers.states_fact_without_source?.type, "unsure", "wrong answer type");
      assert.is(answers.contradicts_earlier?.type, "unsure", "missing answer");
    },
  );
});

test("a refused connection is unsure, not a rejection", async () => {
  const fake = await startFakeSystemOne();
  const url = fake.url;
  await fake.close();
  const jev = new SystemOneClassifier({ baseUrl: url, apiKey: KEY, model: "jev-1", timeoutMs: 1_000 });
  const answers = await jev.ask({ state: "s", questions: tagQuestions(), subject: "n-9" });
  assert.is(answers.kind?.type, "unsure");
  assert.match((answers.kind as { reason: string }).reason, /unreachable/);
});

test("config: the model is pinned (jev-1 by default), and systemone without a URL or key is a startup error", async () => {
  const fake = await startFakeSystemOne({ apiKey: KEY });
  try {
    const jev = createBackend(
      loadConfig({ CROWS_JEV: "systemone", CROWS_JEV_BASE_URL: fake.url, CROWS_JEV_API_KEY: KEY }),
    );
    assert.is(jev.backend, "systemone");
    assert.is(jev.model, "jev-1");
    await jev.ask({ state: "s", questions: tagQuestions(), subject: "n-10" });
    assert.is(fake.calls[0]?.body.model, "jev-1");
    const pinned = createBackend(
      loadConfig({
        CROWS_JEV: "systemone",
        CROWS_JEV_BASE_URL: fake.url,
        CROWS_JEV_API_KEY: KEY,
        CROWS_JEV_MODEL: "jev-1.2",
      }),
    );
    assert.is(pinned.model, "jev-1.2");
  } finally {
    await fake.close();
  }
  assert.throws(
    () => createBackend(loadConfig({ CROWS_JEV: "systemone", CROWS_JEV_API_KEY: KEY })),
    (e: unknown) => e instanceof ConfigError,
  );
  assert.throws(
    () => createBackend(loadConfig({ CROWS_JEV: "systemone", CROWS_JEV_BASE_URL: "http://127.0.0.1:9" })),
    (e: unknown) => e instanceof ConfigError,
  );
  assert.is(createBackend(loadConfig({})).backend, "offline");
});

test.run();

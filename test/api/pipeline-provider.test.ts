// A list against a real OpenAI-compatible HTTP server on loopback (CROWS_MODEL=openai-compatible):
// what a client sees when the provider answers well, slowly, with a 500, or with junk for the Sentry.
// The provider's weather in depth: test/pipeline-weather.test.ts.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer } from "../helpers/server.ts";
import { ownerFollows } from "../helpers/owner.ts";
import { defaultScript, roleOfSystemPrompt, startFakeOpenAI, type FakeScript } from "../helpers/fake-openai.ts";
import type { SseMessage } from "../helpers/sse.ts";

const of = (events: SseMessage[], name: string) => events.filter((e) => e.event === name);

async function listAgainst(script: FakeScript, text: string, env: Record<string, string> = {}) {
  const fake = await startFakeOpenAI(script);
  const server = await startTestServer({
    env: {
      CROWS_MODEL: "openai-compatible:fake-model",
      CROWS_MODEL_BASE_URL: fake.url,
      CROWS_MODEL_API_KEY: "sk-test-secret",
      ...env,
    },
  });
  try {
    const res = await server.post("/api/lists", { text, requester: "provider" });
    assert.is(res.status, 202);
    const owner = await ownerFollows(server.url, res.body.list_id);
    const events = await owner.finished;
    owner.sse.close();
    return { events, calls: fake.calls };
  } finally {
    await server.close();
    await fake.close();
  }
}

test("a list runs against the provider; tokens are the provider's usage", async () => {
  const { events, calls } = await listAgainst(
    (call, i) => ({ ...(defaultScript(call, i) as object), usage: { prompt_tokens: 100 + i, completion_tokens: 7 } }),
    "Buy milk",
  );
  assert.is(events[events.length - 1]!.event, "list.finished");
  const triaged = of(events, "item.triaged")[0]!.data;
  assert.is(triaged.reason, "fake provider: one action", "the Sentry's reason is the provider's");
  assert.is(of(events, "item.answered")[0]!.data.answer, "fake crow answer");
  const landed = of(events, "crow.landed").map((e) => e.data.tokens);
  assert.equal(landed, [107, 108], "Sentry then crow: prompt + completion tokens as reported");
  assert.ok(calls.every((c) => c.body.model === "fake-model" && c.headers.authorization === "Bearer sk-test-secret"));
  assert.ok(!JSON.stringify(events).includes("sk-test-secret"), "the key never reaches a client");
});

test("a reply slower than the timeout is not a lost item: the same crow asks again with more time and lands once", async () => {
  for (const delayMs of [300, 500]) {
    const slowCrows: FakeScript = (call, i) =>
      roleOfSystemPrompt(call.system) === "crow"
        ? { ...(defaultScript(call, i) as object), delayMs }
        : defaultScript(call, i);
    const { events } = await listAgainst(slowCrows, "Buy milk", {
      CROWS_MODEL_TIMEOUT_MS: "200",
      CROWS_MODEL_BACKOFF_MS: "20",
    });
    const crows = of(events, "crow.landed")
      .filter((e) => e.data.crow !== "Sentry")
      .map((e) => e.data);
    assert.is(crows.length, 1, "one flight, one landing");
    assert.is(crows[0]!.ok, true);
    assert.equal(
      of(events, "item.answered").map((e) => e.data.crows),
      [[crows[0]!.crow]],
    );
  }
});

test("a 500 is the provider's weather: the same crow waits and lands once, ok", async () => {
  let crowCalls = 0;
  const firstCrowFails: FakeScript = (call, i) => {
    if (roleOfSystemPrompt(call.system) === "crow" && crowCalls++ < 2) return { status: 500 };
    return defaultScript(call, i);
  };
  const { events, calls } = await listAgainst(firstCrowFails, "Buy milk", { CROWS_MODEL_BACKOFF_MS: "20" });
  const crows = of(events, "crow.landed")
    .filter((e) => e.data.crow !== "Sentry")
    .map((e) => e.data);
  assert.equal(
    crows.map((c) => c.ok),
    [true],
  );
  assert.is(
    calls.filter((c) => roleOfSystemPrompt(c.system) === "crow").length,
    3,
    "two 500s, then the answer, for one flight",
  );
  assert.equal(of(events, "item.answered")[0]!.data.crows, [crows[0]!.crow]);
});

test("malformed JSON from the Sentry falls back to solo/other with the reason stated", async () => {
  const junkSentry: FakeScript = (call, i) =>
    roleOfSystemPrompt(call.system) === "sentry"
      ? { content: "{mode: murder, oops", usage: { prompt_tokens: 10, completion_tokens: 3 } }
      : defaultScript(call, i);
  const { events } = await listAgainst(junkSentry, "Brainstorm names for a bakery");
  const triaged = of(events, "item.triaged")[0]!.data;
  assert.equal([triaged.mode, triaged.task_type, triaged.subtasks], ["solo", "other", []]);
  assert.match(triaged.reason, /unusable/);
  assert.is(of(events, "crow.landed")[0]!.data.ok, true, "the Sentry's flight itself landed");
  assert.is(events[events.length - 1]!.event, "list.finished");
});

test("a split and a murder run on the provider path: one crow per subtask, a murder of distinct crows, the Elder's merge as the answer", async () => {
  const triageOf = (prompt: string) =>
    prompt.includes("Plan the garden party")
      ? {
          mode: "split",
          task_type: "planning",
          subtasks: ["book the tent", "invite the neighbours", "order the cake"],
          reason: "three separate jobs",
        }
      : prompt.includes("Name the new bakery")
        ? { mode: "murder", task_type: "writing", subtasks: [], reason: "many minds help" }
        : { mode: "solo", task_type: "errand", subtasks: [], reason: "one action" };
  const script: FakeScript = (call, i) => {
    const role = roleOfSystemPrompt(call.system);
    if (role === "sentry")
      return { content: JSON.stringify(triageOf(call.prompt)), usage: { prompt_tokens: 10, completion_tokens: 10 } };
    if (role === "elder")
      return { content: `merged by the Elder (call ${i})`, usage: { prompt_tokens: 10, completion_tokens: 10 } };
    return defaultScript(call, i);
  };
  const { events, calls } = await listAgainst(script, "Plan the garden party\nName the new bakery\nBuy milk", {
    CROWS_MURDER_SIZE: "3",
  });
  assert.is(events[events.length - 1]!.event, "list.finished");
  const byItem = (n: number) => events.filter((e) => e.data?.item_id?.endsWith(`-${n}`));
  const flown = (n: number) =>
    byItem(n)
      .filter((e) => e.event === "crow.flying" && !["Sentry", "Elder"].includes(e.data.crow))
      .map((e) => e.data.crow as string);

  const split = byItem(1);
  assert.equal(split.find((e) => e.event === "item.triaged")!.data.subtasks, [
    "book the tent",
    "invite the neighbours",
    "order the cake",
  ]);
  assert.is(flown(1).length, 3, "one crow per subtask");
  for (const subtask of ["book the tent", "invite the neighbours", "order the cake"])
    assert.ok(
      calls.some((c) => roleOfSystemPrompt(c.system) === "crow" && c.prompt.includes(subtask)),
      `a crow was sent "${subtask}"`,
    );
  assert.match(split.find((e) => e.event === "item.answered")!.data.answer, /^merged by the Elder/);

  const murder = byItem(2);
  assert.is(murder.find((e) => e.event === "item.triaged")!.data.mode, "murder");
  assert.is(new Set(flown(2)).size, 3, "a murder of three distinct crows");
  const answered = murder.find((e) => e.event === "item.answered")!.data;
  assert.match(answered.answer, /^merged by the Elder/);
  assert.equal(
    [...answered.crows].sort(),
    [...new Set(flown(2))].sort(),
    "every crow of the murder is credited, never the Elder",
  );

  const solo = byItem(3);
  assert.is(flown(3).length, 1);
  assert.is(solo.find((e) => e.event === "item.answered")!.data.answer, "fake crow answer");
  assert.is(
    calls.filter((c) => roleOfSystemPrompt(c.system) === "elder").length,
    2,
    "the Elder merged the split and the murder, not the solo",
  );
});

test.run();

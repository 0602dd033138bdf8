// A list against a real OpenAI-compatible HTTP server on loopback (CROWS_MODEL=openai-compatible):
// what a client sees when the provider answers well, slowly, with a 500, or with junk for the Sentry.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer } from "./helpers/server.ts";
import { ownerFollows } from "./helpers/owner.ts";
import { defaultScript, roleOfSystemPrompt, startFakeOpenAI, type FakeScript } from "./helpers/fake-openai.ts";
import type { SseMessage } from "./helpers/sse.ts";

const of = (events: SseMessage[], name: string) => events.filter((e) => e.event === name);

async function listAgainst(script: FakeScript, text: string, env: Record<string, string> = {}) {
  const fake = await startFakeOpenAI(script);
  const server = await startTestServer({
    env: { CROWS_MODEL: "openai-compatible:fake-model", CROWS_MODEL_BASE_URL: fake.url, CROWS_MODEL_API_KEY: "sk-test-secret", ...env },
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

test("a reply slower than the timeout lands ok:false, is retried by another crow, then the item fails", async () => {
  const slowCrows: FakeScript = (call, i) => (roleOfSystemPrompt(call.system) === "crow" ? { delayMs: 2_000, content: "too late" } : defaultScript(call, i));
  const { events } = await listAgainst(slowCrows, "Buy milk", { CROWS_MODEL_TIMEOUT_MS: "200" });
  const crows = of(events, "crow.landed").filter((e) => e.data.crow !== "Sentry").map((e) => e.data);
  assert.is(crows.length, 2);
  for (const landed of crows) {
    assert.is(landed.ok, false);
    assert.match(landed.error, /timed out/);
  }
  assert.is.not(crows[0]!.crow, crows[1]!.crow);
  assert.equal(of(events, "item.skipped").map((e) => e.data.reason), ["failure"]);
});

test("a 500 lands ok:false with a short error, and the retry by another crow can save the item", async () => {
  let crowCalls = 0;
  const firstCrowFails: FakeScript = (call, i) => {
    if (roleOfSystemPrompt(call.system) === "crow" && crowCalls++ < 2) return { status: 500 }; // the provider's own retry fails too
    return defaultScript(call, i);
  };
  const { events } = await listAgainst(firstCrowFails, "Buy milk");
  const crows = of(events, "crow.landed").filter((e) => e.data.crow !== "Sentry").map((e) => e.data);
  assert.equal(crows.map((c) => c.ok), [false, true]);
  assert.match(crows[0]!.error, /500/);
  assert.ok(crows[0]!.error.length < 120 && !crows[0]!.error.includes("Triage"), "short, and no prompt in it");
  assert.equal(of(events, "item.answered")[0]!.data.crows, [crows[1]!.crow]);
});

test("malformed JSON from the Sentry falls back to solo/other with the reason stated", async () => {
  const junkSentry: FakeScript = (call, i) =>
    roleOfSystemPrompt(call.system) === "sentry" ? { content: "{mode: murder, oops", usage: { prompt_tokens: 10, completion_tokens: 3 } } : defaultScript(call, i);
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
      ? { mode: "split", task_type: "planning", subtasks: ["book the tent", "invite the neighbours", "order the cake"], reason: "three separate jobs" }
      : prompt.includes("Name the new bakery")
        ? { mode: "murder", task_type: "writing", subtasks: [], reason: "many minds help" }
        : { mode: "solo", task_type: "errand", subtasks: [], reason: "one action" };
  const script: FakeScript = (call, i) => {
    const role = roleOfSystemPrompt(call.system);
    if (role === "sentry") return { content: JSON.stringify(triageOf(call.prompt)), usage: { prompt_tokens: 10, completion_tokens: 10 } };
    if (role === "elder") return { content: `merged by the Elder (call ${i})`, usage: { prompt_tokens: 10, completion_tokens: 10 } };
    return defaultScript(call, i);
  };
  const { events, calls } = await listAgainst(script, "Plan the garden party\nName the new bakery\nBuy milk", { CROWS_MURDER_SIZE: "3" });
  assert.is(events[events.length - 1]!.event, "list.finished");
  const byItem = (n: number) => events.filter((e) => e.data?.item_id?.endsWith(`-${n}`));
  const flown = (n: number) => byItem(n).filter((e) => e.event === "crow.flying" && !["Sentry", "Elder"].includes(e.data.crow)).map((e) => e.data.crow as string);

  const split = byItem(1);
  assert.equal(split.find((e) => e.event === "item.triaged")!.data.subtasks, ["book the tent", "invite the neighbours", "order the cake"]);
  assert.is(flown(1).length, 3, "one crow per subtask");
  for (const subtask of ["book the tent", "invite the neighbours", "order the cake"])
    assert.ok(calls.some((c) => roleOfSystemPrompt(c.system) === "crow" && c.prompt.includes(subtask)), `a crow was sent "${subtask}"`);
  assert.match(split.find((e) => e.event === "item.answered")!.data.answer, /^merged by the Elder/);

  const murder = byItem(2);
  assert.is(murder.find((e) => e.event === "item.triaged")!.data.mode, "murder");
  assert.is(new Set(flown(2)).size, 3, "a murder of three distinct crows");
  const answered = murder.find((e) => e.event === "item.answered")!.data;
  assert.match(answered.answer, /^merged by the Elder/);
  assert.equal([...answered.crows].sort(), [...new Set(flown(2))].sort(), "every crow of the murder is credited, never the Elder");

  const solo = byItem(3);
  assert.is(flown(3).length, 1);
  assert.is(solo.find((e) => e.event === "item.answered")!.data.answer, "fake crow answer");
  assert.is(calls.filter((c) => roleOfSystemPrompt(c.system) === "elder").length, 2, "the Elder merged the split and the murder, not the solo");
});

test.run();

// The model layer's weather rules in-process: what each failure means (provider-errors.ts), how
// long a wait is (Retry-After and reset headers in every form; full-jitter backoff under its cap),
// the retry helper's patience, and the gate's cap, fair round robin, circuit and fail-fast mode.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { APICallError } from "ai";
import {
  classifyProviderError,
  ModelCallError,
  ProviderUnavailableError,
  rateLimitsFrom,
  retryAfterMs,
} from "../../src/models/provider-errors.ts";
import { backoffMs, withRetries, type RetryPolicy } from "../../src/models/retry-policy.ts";
import { ProviderPacer } from "../../src/models/provider-pacer.ts";
import { ADAPTIVE_PACE, AdaptivePace } from "../../src/models/adaptive-pace.ts";
import { SystemOneClassifier } from "../../src/classifier/systemone.ts";
import { startFakeSystemOne } from "../helpers/fake-systemone.ts";

const NOW = Date.parse("2026-12-01T12:00:00Z");
const state = { timedOut: false, aborted: false, timeoutMs: 1000, now: NOW };
const apiError = (statusCode: number | undefined, responseHeaders: Record<string, string> = {}, cause?: unknown) =>
  new APICallError({
    message: "x",
    url: "http://127.0.0.1/v1",
    requestBodyValues: { prompt: "secret prompt" },
    statusCode,
    responseHeaders,
    cause,
  });

test("each failure is classified: weather, config, answer, timeout, aborted", () => {
  for (const status of [408, 409, 429, 500, 502, 503, 504, 529])
    assert.is(classifyProviderError(apiError(status), state).kind, "weather", String(status));
  for (const status of [400, 401, 403, 404, 405, 413, 422])
    assert.is(classifyProviderError(apiError(status), state).kind, "config", String(status));
  const network = ["ECONNREFUSED", "ECONNRESET", "ENOTFOUND", "EAI_AGAIN", "UND_ERR_SOCKET"].map((code) =>
    Object.assign(new Error(code), { code }),
  );
  for (const cause of network)
    assert.is(classifyProviderError(apiError(undefined, {}, cause), state).kind, "weather", cause.message);
  assert.is(
    classifyProviderError(Object.assign(new TypeError("fetch failed"), { cause: { code: "ENOTFOUND" } }), state).kind,
    "weather",
    "DNS",
  );
  assert.is(classifyProviderError(apiError(200), state).kind, "answer");
  assert.is(
    classifyProviderError(Object.assign(new Error("bad json"), { name: "AI_JSONParseError" }), state).kind,
    "answer",
  );
  assert.is(classifyProviderError(apiError(503), { ...state, timedOut: true }).kind, "timeout");
  assert.is(classifyProviderError(apiError(503), { ...state, aborted: true }).kind, "aborted");
  for (const status of [400, 401, 403, 404, 429, 503]) {
    const message = classifyProviderError(apiError(status), state).message;
    assert.not.ok(message.includes("secret prompt"), "never the prompt");
    assert.ok(message.includes(String(status)));
  }
});

test("the provider's word on how long to wait, in every form it gives it", () => {
  const cases: Array<[Record<string, string>, number, number | undefined]> = [
    [{ "retry-after": "1" }, 429, 1_000],
    [{ "Retry-After": "30" }, 503, 30_000],
    [{ "retry-after": "0.5" }, 429, 500],
    [{ "retry-after": new Date(NOW + 7_000).toUTCString() }, 429, 7_000],
    [{ "retry-after": new Date(NOW - 7_000).toUTCString() }, 503, 0],
    [{ "retry-after-ms": "250", "retry-after": "1" }, 429, 250],
    [
      { "x-ratelimit-reset-requests": "6m0s", "x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-tokens": "1s" },
      429,
      360_000,
    ],
    [{ "x-ratelimit-reset-requests": "20ms", "x-ratelimit-reset-tokens": "1.5s" }, 429, 20],
    [{ "x-ratelimit-reset-tokens": "1h2m3.5s", "x-ratelimit-remaining-tokens": "0" }, 429, 3_723_500],
    [
      {
        "anthropic-ratelimit-requests-reset": new Date(NOW + 12_000).toISOString(),
        "anthropic-ratelimit-requests-remaining": "0",
      },
      429,
      12_000,
    ],
    [{ "anthropic-ratelimit-output-tokens-reset": new Date(NOW + 3_000).toISOString() }, 429, 3_000],
    [{ "x-ratelimit-reset": "2" }, 429, 2_000],
    [{ "x-ratelimit-reset": String(NOW / 1000 + 4) }, 429, 4_000],
    [{ "x-ratelimit-reset-requests": "6m0s" }, 503, undefined], // a reset header is no wait on a 5xx
    [{ "retry-after": "soon" }, 429, undefined],
    [{}, 429, undefined],
  ];
  for (const [headers, status, expected] of cases)
    assert.is(retryAfterMs(headers, status, NOW), expected, JSON.stringify(headers));
  assert.is(classifyProviderError(apiError(429, { "retry-after": "3" }), state).retryAfterMs, 3_000);
});

const policy = (patienceMs: number): RetryPolicy => ({
  initialIntervalMs: 100,
  backoffCoefficient: 2,
  maximumIntervalMs: 1_000,
  patienceMs,
  retryable: new Set(["weather", "timeout"]),
  timeoutGrowth: 2,
});

test("backoff is full jitter under an exponential ceiling, capped", () => {
  const p = policy(60_000);
  for (let failures = 1; failures <= 12; failures++) {
    const ceiling = Math.min(1_000, 100 * 2 ** (failures - 1));
    assert.is(
      backoffMs(p, failures, () => 0),
      0,
    );
    assert.is(
      backoffMs(p, failures, () => 0.999999),
      ceiling,
    );
    for (let i = 0; i < 50; i++) {
      const wait = backoffMs(p, failures);
      assert.ok(wait >= 0 && wait <= ceiling, `${wait} within [0, ${ceiling}]`);
    }
  }
});

/** A clock the retry helper sleeps on, so the patience can be minutes long and the test instant. */
function fakeClock() {
  let now = NOW;
  return { now: () => now, sleep: async (ms: number) => void (now += ms), advance: (ms: number) => (now += ms) };
}

test("the retry helper: waits out weather within the patience, honours Retry-After, stops at once on config trouble", async () => {
  for (const patienceMs of [5_000, 90_000, 600_000]) {
    const clock = fakeClock();
    const waits: number[] = [];
    let tries = 0;
    const failUntil = patienceMs / 2; // an outage half the patience long
    const result = await withRetries(
      policy(patienceMs),
      {
        deadline: async (now) => now + patienceMs,
        now: clock.now,
        sleep: clock.sleep,
        waiting: (n) => waits.push(n.retryAt - clock.now()),
      },
      async () => {
        tries++;
        if (clock.now() - NOW < failUntil)
          throw new ModelCallError(
            "model provider answered HTTP 503",
            "weather",
            tries % 3 === 0 ? 2_000 : undefined,
            503,
          );
        return "answered";
      },
    );
    assert.is(result, "answered");
    assert.ok(
      waits.every((w) => w <= 2_000),
      "no wait beyond the cap or the provider's word",
    );
    assert.ok(
      waits.filter((_, i) => (i + 1) % 3 === 0).every((w) => w === 2_000),
      "Retry-After honoured exactly",
    );
  }
  const clock = fakeClock();
  let tries = 0;
  const error = await withRetries(
    policy(10_000),
    { deadline: async (now) => now + 10_000, now: clock.now, sleep: clock.sleep },
    async () => {
      tries++;
      throw new ModelCallError("model provider answered HTTP 503", "weather", undefined, 503);
    },
  ).catch((e: unknown) => e);
  assert.instance(error, ProviderUnavailableError);
  assert.match((error as Error).message, /^model provider unavailable for 10 s \(model provider answered HTTP 503\)$/);
  assert.ok(tries > 3);
  for (const kind of ["config", "answer", "aborted"] as const) {
    let once = 0;
    const e = await withRetries(
      policy(10_000),
      { deadline: async (now) => now + 10_000, now: clock.now, sleep: clock.sleep },
      async () => {
        once++;
        throw new ModelCallError(kind, kind);
      },
    ).catch((x: unknown) => x);
    assert.is((e as ModelCallError).kind, kind);
    assert.is(once, 1, `${kind} is not retried`);
  }
});

test("a stored deadline is kept: a flight that resumes late fails at it, not a fresh patience", async () => {
  const clock = fakeClock();
  const stored = NOW + 3_000;
  const e = await withRetries(
    policy(600_000),
    { deadline: async () => stored, now: clock.now, sleep: clock.sleep },
    async () => {
      throw new ModelCallError("model provider unreachable", "weather");
    },
  ).catch((x: unknown) => x);
  assert.instance(e, ProviderUnavailableError);
  assert.is(clock.now(), stored, "the last try went out at the stored deadline");
});

test("a timed-out call is asked again with more time, never the same doomed call", async () => {
  const clock = fakeClock();
  const factors: number[] = [];
  await withRetries(
    policy(60_000),
    { deadline: async (now) => now + 60_000, now: clock.now, sleep: clock.sleep },
    async (_n, factor) => {
      factors.push(factor);
      if (factors.length < 4) throw new ModelCallError("model call timed out after 1000 ms", "timeout");
      return "ok";
    },
  );
  assert.equal(factors, [1, 2, 4, 8]);
});

const gatePolicy = { initialIntervalMs: 30, backoffCoefficient: 2, maximumIntervalMs: 120 };

test("the gate: never more than the cap in the air, and slots go round the lanes", async () => {
  for (const cap of [1, 2, 3]) {
    const gate = new ProviderPacer("test", { concurrency: cap, circuitFailures: 5, policy: gatePolicy });
    const order: string[] = [];
    let inAir = 0;
    let most = 0;
    const call = async (lane: string, i: number) => {
      const ticket = await gate.acquire(lane);
      inAir++;
      most = Math.max(most, inAir);
      order.push(`${lane}${i}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
      inAir--;
      ticket.release({ outcome: "ok" });
    };
    const long = Array.from({ length: 12 }, (_, i) => call("L", i));
    const short = Array.from({ length: 2 }, (_, i) => call("S", i));
    await Promise.all([...long, ...short]);
    assert.is(most, cap);
    const lastShort = Math.max(order.indexOf("S0"), order.indexOf("S1"));
    assert.ok(
      lastShort <= cap + 3,
      `cap ${cap}: the short lane was done by slot ${lastShort} of ${order.length}: ${order.join(" ")}`,
    );
  }
});

test("the circuit opens after failures in a row, holds calls, and one trial call closes it", async () => {
  for (const threshold of [1, 3]) {
    const gate = new ProviderPacer("test", { concurrency: 4, circuitFailures: threshold, policy: gatePolicy });
    const states: string[] = [];
    gate.listen({ circuit: (s) => states.push(s) });
    for (let i = 0; i < threshold; i++) (await gate.acquire("a")).release({ outcome: "weather", status: 503 });
    assert.is(gate.stats().circuit, "open");
    // Held: several calls wait; when the cooldown ends exactly one goes out as the trial.
    let admitted = 0;
    const tickets = Array.from({ length: 5 }, () => gate.acquire("a").then((t) => (admitted++, t)));
    // The gate's own count says what it admitted, at once (a ticket's .then runs a turn later).
    assert.equal([gate.stats().inFlight, gate.stats().heldByCircuit], [0, 5], "no call while open");
    const trial = await Promise.race(tickets);
    const { inFlight, heldByCircuit, circuit } = gate.stats();
    assert.equal([inFlight, heldByCircuit, circuit], [1, 4, "half-open"], "one trial; the rest still held");
    assert.is(admitted, 1, "one trial");
    trial.release({ outcome: "ok" });
    const rest = await Promise.all(tickets);
    assert.is(admitted, 5);
    for (const t of rest) t.release({ outcome: "ok" });
    assert.is(gate.stats().circuit, "closed");
    assert.equal(states.slice(0, 3), ["open", "half-open", "closed"]);
  }
});

test("a held call whose patience ends behind the open circuit fails as unavailable; a fail-fast call is refused at once", async () => {
  const gate = new ProviderPacer("test", {
    concurrency: 2,
    circuitFailures: 1,
    policy: { initialIntervalMs: 5_000, backoffCoefficient: 2, maximumIntervalMs: 5_000 },
  });
  (await gate.acquire("a")).release({ outcome: "weather", status: 503 });
  const started = Date.now();
  const held = await gate.acquire("a", { patience: async (now) => now + 150 }).catch((e: unknown) => e);
  assert.instance(held, ProviderUnavailableError);
  assert.ok(Date.now() - started >= 140 && Date.now() - started < 2_000, "at its patience, not the cooldown");
  const fast = await gate.acquire("classifier", { failFast: true }).catch((e: unknown) => e);
  assert.instance(fast, ModelCallError);
  assert.match((fast as Error).message, /circuit open/);
});

test("a 429 holds every queued call of the gate for its Retry-After (or the first backoff), other calls too", async () => {
  for (const [retryAfterMs, holdMs] of [
    [250, 250],
    [400, 400],
    [undefined, gatePolicy.initialIntervalMs],
  ] as const) {
    const gate = new ProviderPacer("test", { concurrency: 4, circuitFailures: 50, policy: gatePolicy });
    const limited = await gate.acquire("a");
    const inAir = await gate.acquire("b");
    const releasedAt = Date.now();
    limited.release({ outcome: "weather", status: 429, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) });
    const starts = await Promise.all(
      ["a", "b", "c"].map(async (lane) => {
        const ticket = await gate.acquire(lane);
        const at = Date.now() - releasedAt;
        ticket.release({ outcome: "ok" });
        return at;
      }),
    );
    for (const at of starts)
      assert.ok(
        at >= holdMs - 5,
        `Retry-After ${retryAfterMs ?? "none"}: a queued call started ${at} ms after the 429`,
      );
    inAir.release({ outcome: "ok" });
    if (retryAfterMs === undefined) continue;
    // A fail-fast call (the classifier's) is refused during a hold rather than kept waiting.
    const limitedAgain = await gate.acquire("a");
    limitedAgain.release({ outcome: "weather", status: 429, retryAfterMs });
    const fast = await gate.acquire("classifier", { failFast: true }).catch((e: unknown) => e);
    assert.instance(fast, ModelCallError);
    assert.match((fast as Error).message, /rate limited/);
  }
  // A 503 is the circuit's business, not a hold.
  const gate = new ProviderPacer("test", { concurrency: 4, circuitFailures: 50, policy: gatePolicy });
  (await gate.acquire("a")).release({ outcome: "weather", status: 503, retryAfterMs: 5_000 });
  const before = Date.now();
  (await gate.acquire("a")).release({ outcome: "ok" });
  assert.ok(Date.now() - before < 1_000, "a 503 below the circuit's threshold holds nothing");
});

test("the adaptive pace: off until a 429, cut to beta times the rate sent (then answered), once per spell, grown back cubically, floored, lifted after a calm", () => {
  for (const answeredPerSecond of [2, 5, 10, 40]) {
    const pace = new AdaptivePace();
    let now = 1_000_000;
    const gap = 1000 / answeredPerSecond;
    for (let i = 0; i < answeredPerSecond * 3; i++) {
      assert.is(pace.waitMs(now), 0, "unpaced before any 429");
      pace.started(now);
      pace.answered(now + 10);
      now += gap;
    }
    assert.is(pace.perSecond(), Number.POSITIVE_INFINITY);
    pace.started(now);
    pace.throttled(now, now);
    const cut = pace.perSecond();
    // The first cut is from the rate sent over the window, the refused call included.
    const sent = answeredPerSecond + 1000 / ADAPTIVE_PACE.measureMs;
    const expected = Math.max(ADAPTIVE_PACE.minPerSecond, sent * ADAPTIVE_PACE.beta);
    assert.ok(
      Math.abs(cut - expected) <= expected * 0.15,
      `${answeredPerSecond}/s sent: cut to ${cut}, expected about ${expected}`,
    );
    // Calls sent before the cut were sent at the old rate: their 429s do not cut again.
    pace.throttled(now + 5, now - 1);
    assert.is(pace.perSecond(), cut);
    // Calls start no faster than the pace.
    assert.ok(pace.waitMs(now) > 0);
    let starts = 0;
    for (let t = now; t < now + 1000; t++) {
      if (pace.waitMs(t) === 0) {
        pace.started(t);
        starts++;
      }
    }
    assert.ok(starts <= Math.ceil(cut) + 1, `${starts} starts in a second at ${cut}/s`);
    // Answers grow it back towards the rate of the 429, and past it only slowly.
    const atLimit = cut / ADAPTIVE_PACE.beta;
    const k = Math.cbrt((atLimit * (1 - ADAPTIVE_PACE.beta)) / ADAPTIVE_PACE.cubicScale);
    pace.answered(now + k * 1000);
    assert.ok(
      Math.abs(pace.perSecond() - atLimit) <= atLimit * 0.1,
      `back near ${atLimit}/s after ${k.toFixed(1)} s: ${pace.perSecond()}`,
    );
    pace.answered(now + (k + 1) * 1000);
    assert.ok(pace.perSecond() <= atLimit * 1.2, "the plateau: barely past the rate of the 429 a second later");
    pace.answered(now + 30_000);
    assert.ok(
      pace.perSecond() <= atLimit * ADAPTIVE_PACE.ceilingFactor,
      "an idle spell does not grow it past its ceiling",
    );
    // A later 429 cuts from what the provider answered lately, but from no less than `keep` of the pace; a long calm lifts it.
    for (let t = now + 28_000; t < now + 30_000; t += gap) pace.answered(t);
    pace.started(now + 30_001);
    pace.throttled(now + 30_002, now + 30_001);
    const later = Math.max(
      ADAPTIVE_PACE.minPerSecond,
      Math.max(answeredPerSecond, ADAPTIVE_PACE.keep * atLimit * ADAPTIVE_PACE.ceilingFactor) * ADAPTIVE_PACE.beta,
    );
    assert.ok(
      Math.abs(pace.perSecond() - later) <= later * 0.15,
      `${answeredPerSecond}/s answered: cut to ${pace.perSecond()}, expected about ${later}`,
    );
    pace.answered(now + 30_002 + ADAPTIVE_PACE.liftAfterMs);
    assert.is(pace.perSecond(), Number.POSITIVE_INFINITY, "lifted after a calm");
  }
  // A provider that refuses whatever the rate: 429 after 429, the pace stops at its floor.
  const pace = new AdaptivePace();
  for (let i = 0, now = 0; i < 50; i++, now += 10) {
    pace.started(now);
    pace.throttled(now + 1, now);
  }
  assert.is(pace.perSecond(), ADAPTIVE_PACE.minPerSecond);
});

test("the gate paces to the provider's announced limit while its window runs low, and not while it has room", async () => {
  assert.equal(rateLimitsFrom({ "x-ratelimit-limit-requests": "600", "x-ratelimit-remaining-requests": "3" }), {
    limit: 600,
    remaining: 3,
  });
  assert.equal(
    rateLimitsFrom({ "anthropic-ratelimit-requests-limit": "50", "anthropic-ratelimit-requests-remaining": "0" }),
    { limit: 50, remaining: 0 },
  );
  assert.is(rateLimitsFrom({ "x-ratelimit-limit-requests": "600" }), undefined);
  assert.is(rateLimitsFrom({}), undefined);
  for (const perMinute of [600, 1200]) {
    const gate = new ProviderPacer("test", { concurrency: 4, circuitFailures: 5, policy: gatePolicy });
    (await gate.acquire("a")).release({ outcome: "ok", limits: { limit: perMinute, remaining: 0 } });
    assert.is(gate.stats().rate, perMinute / 60);
    const starts: number[] = [];
    await Promise.all(
      Array.from({ length: 6 }, async () => {
        const ticket = await gate.acquire("a");
        starts.push(Date.now());
        ticket.release({ outcome: "ok", limits: { limit: perMinute, remaining: 0 } });
      }),
    );
    const spacing = 60_000 / perMinute;
    for (let i = 1; i < starts.length; i++)
      assert.ok(
        starts[i]! - starts[i - 1]! >= spacing - 15,
        `${perMinute}/min: starts ${starts[i]! - starts[i - 1]!} ms apart`,
      );
    (await gate.acquire("a")).release({ outcome: "ok", limits: { limit: perMinute, remaining: 500 } });
    assert.is(gate.stats().rate, Number.POSITIVE_INFINITY, "room in the window: unpaced");
  }
});

test("System One calls go through their own gate: capped, and unsure at once while its circuit is open", async () => {
  let inAir = 0;
  let most = 0;
  let down = false;
  const fake = await startFakeSystemOne({
    apiKey: "k-test",
    reply: async () => {
      inAir++;
      most = Math.max(most, inAir);
      await new Promise((resolve) => setTimeout(resolve, 20));
      inAir--;
      return down ? { status: 503 } : {};
    },
  });
  try {
    const gate = new ProviderPacer("systemone", {
      concurrency: 1,
      circuitFailures: 2,
      policy: { initialIntervalMs: 10_000, backoffCoefficient: 2, maximumIntervalMs: 10_000 },
    });
    const classifier = new SystemOneClassifier({
      baseUrl: fake.url,
      apiKey: "k-test",
      model: "jev-1",
      timeoutMs: 2_000,
      gate,
    });
    const question = { q: { type: "choice" as const, instructions: "Which?", criteria: { a: "A", b: "B" } } };
    const answers = await Promise.all(
      ["one", "two", "three", "four"].map((s) => classifier.ask({ state: s, questions: question, subject: s })),
    );
    assert.ok(answers.every((a) => a.q!.type === "choice"));
    assert.is(most, 1, "System One never saw more than its cap");
    assert.is(gate.stats().inFlight, 0);
    down = true;
    for (let i = 0; i < 2; i++) await classifier.ask({ state: "down", questions: question, subject: "down" });
    assert.is(gate.stats().circuit, "open");
    const calls = fake.calls.length;
    const refused = await classifier.ask({ state: "again", questions: question, subject: "again" });
    assert.is(refused.q!.type, "unsure");
    assert.is(fake.calls.length, calls, "no call while its circuit is open");
  } finally {
    await fake.close();
  }
});

test.run();

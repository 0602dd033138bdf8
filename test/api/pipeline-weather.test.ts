// Lists against fake providers with the weather hosted providers have on an ordinary day: rate
// limits (with and without Retry-After, in both forms, and reset headers), 5xx and 529 outages,
// reset connections, an outage many times the backoff cap, one longer than the patience, and a
// refused key. Each asserts what the owner's client sees: every item answered (or failed with the
// provider-unavailable reason after the patience), one landing per flight, tokens counted once.
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { FakeCall, FakeReply } from "../helpers/fake-openai.ts";
import {
  assertAllAnswered,
  assertOneLandingPerFlight,
  finish,
  ITEMS,
  of,
  postList,
  weatherServer,
  withWeather,
} from "../helpers/weather.ts";

const key = (call: FakeCall) => `${call.system}\u0000${call.prompt}`;

test("429s, with Retry-After in seconds or as a date, retry-after-ms, reset headers or nothing: every item answered, each wait honoured", async () => {
  const forms: Array<{ name: string; headers: () => Record<string, string>; atLeastMs: number }> = [
    { name: "Retry-After seconds", headers: () => ({ "retry-after": "1" }), atLeastMs: 900 },
    {
      name: "Retry-After date",
      headers: () => ({ "retry-after": new Date(Date.now() + 2_000).toUTCString() }),
      atLeastMs: 900,
    },
    { name: "retry-after-ms", headers: () => ({ "retry-after-ms": "350" }), atLeastMs: 300 },
    {
      name: "OpenAI reset",
      headers: () => ({ "x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "400ms" }),
      atLeastMs: 350,
    },
    {
      name: "Anthropic reset",
      headers: () => ({
        "anthropic-ratelimit-requests-remaining": "0",
        "anthropic-ratelimit-requests-reset": new Date(Date.now() + 1_500).toISOString(),
      }),
      atLeastMs: 500,
    },
    { name: "no header", headers: () => ({}), atLeastMs: 0 },
  ];
  for (const [n, form] of forms.entries()) {
    const limited = new Map<string, number>(); // call key -> when its 429 was sent
    const gaps: number[] = [];
    const run = await weatherServer(
      withWeather((call, i) => {
        const k = key(call);
        const at = limited.get(k);
        if (at !== undefined) {
          gaps.push(Date.now() - at);
          limited.delete(k);
          return undefined;
        }
        // Half the calls, a different half for each form.
        if ((i + n) % 2 === 0) {
          limited.set(k, Date.now());
          return { status: 429, headers: form.headers() };
        }
        return undefined;
      }),
      { CROWS_MODEL_CIRCUIT_FAILURES: "50" },
    );
    try {
      const listId = await postList(run.server, ITEMS.slice(n % 3, (n % 3) + 3));
      const events = await finish(run.server, listId);
      assertAllAnswered(events);
      assertOneLandingPerFlight(events, run.fake.servedTokens);
      assert.ok(
        of(events, "crow.landed").every((e) => e.data.ok),
        `${form.name}: a rate limit is never a failed landing`,
      );
      assert.ok(gaps.length > 0, `${form.name}: some call was limited and asked again`);
      for (const gap of gaps)
        assert.ok(
          gap >= form.atLeastMs,
          `${form.name}: asked again after ${gap} ms, the provider said ${form.atLeastMs}`,
        );
    } finally {
      await run.close();
    }
  }
});

test("an outage of 500s, 503s, 529s or reset connections is waited out by the same flights, at a handful of calls", async () => {
  const outages: Array<{ name: string; reply: FakeReply }> = [
    { name: "500", reply: { status: 500 } },
    { name: "503", reply: { status: 503 } },
    { name: "529", reply: { status: 529 } },
    { name: "reset", reply: { reset: true } },
  ];
  for (const [n, outage] of outages.entries()) {
    let downUntil = 0;
    let outageCalls = 0;
    const run = await weatherServer(
      withWeather(() => {
        if (Date.now() < downUntil) {
          outageCalls++;
          return outage.reply;
        }
        return undefined;
      }),
    );
    try {
      downUntil = Date.now() + 1_200;
      const items = ITEMS.slice(n, n + 3);
      const listId = await postList(run.server, items);
      const events = await finish(run.server, listId);
      assertAllAnswered(events);
      assertOneLandingPerFlight(events, run.fake.servedTokens);
      const landings = of(events, "crow.landed");
      assert.ok(
        landings.every((e) => e.data.ok),
        `${outage.name}: no landing failed`,
      );
      const answered = of(events, "item.answered");
      assert.ok(answered.every((e) => e.data.crows.length >= 1));
      // Without the circuit each waiting flight would call every backoff (~20-200 ms) for 1.2 s.
      assert.ok(outageCalls <= 20, `${outage.name}: ${outageCalls} calls during the outage`);
    } finally {
      await run.close();
    }
  }
});

test("an outage many times the backoff cap (the minute-long outage, compressed): calls stay few and spaced at the cap", async () => {
  let down = true;
  const outageCallTimes: number[] = [];
  const run = await weatherServer(
    withWeather(() => {
      if (!down) return undefined;
      outageCallTimes.push(Date.now());
      return { status: 503 };
    }),
    { CROWS_MODEL_BACKOFF_MAX_MS: "150" },
  );
  try {
    const listId = await postList(run.server, ITEMS.slice(0, 4));
    setTimeout(() => (down = false), 3_000); // 20 times the cap, as 20 minutes would be at the 60 s default
    const events = await finish(run.server, listId);
    assertAllAnswered(events);
    assertOneLandingPerFlight(events, run.fake.servedTokens);
    // The circuit turned the outage into spaced trial calls, not one call per flight per backoff.
    assert.ok(outageCallTimes.length <= 30, `${outageCallTimes.length} calls in a 3 s outage`);
    const late = outageCallTimes.filter((t) => t > outageCallTimes[0]! + 1_500);
    for (let i = 1; i < late.length; i++)
      assert.ok(late[i]! - late[i - 1]! >= 100, "trial calls are spaced at the cap once the outage is long");
  } finally {
    await run.close();
  }
});

test("an outage longer than the patience: every item fails with the provider-unavailable reason, after the patience", async () => {
  for (const [n, reply] of (
    [{ status: 503 }, { status: 429, headers: { "retry-after": "1" } }, { reset: true }] as FakeReply[]
  ).entries()) {
    let calls = 0;
    const run = await weatherServer(
      withWeather(() => {
        calls++;
        return reply;
      }),
      { CROWS_MODEL_PATIENCE_MS: "1500" },
    );
    try {
      const started = Date.now();
      const items = ITEMS.slice(n, n + 3);
      const listId = await postList(run.server, items);
      const events = await finish(run.server, listId);
      assertOneLandingPerFlight(events);
      const skipped = of(events, "item.skipped");
      assert.is(skipped.length, items.length, "every item failed");
      assert.ok(skipped.every((e) => e.data.reason === "failure"));
      for (const skip of skipped) {
        const landings = of(events, "crow.landed").filter((e) => e.data.item_id === skip.data.item_id);
        assert.is(landings.length, 1, "one flight (the Sentry's), one landing: no other crow asked the same provider");
        assert.match(landings[0]!.data.error, /^model provider unavailable for \d+ s \(/);
        assert.ok(!landings[0]!.data.error.includes("sk-weather-secret"));
      }
      assert.ok(Date.now() - started >= 1_500, "nothing failed before the patience");
      assert.is(of(events, "list.finished")[0]!.data.tokens_used, 0, "waiting spent no tokens");
      assert.ok(calls <= 25, `${calls} calls for ${items.length} waiting flights`);
    } finally {
      await run.close();
    }
  }
});

test("a 401, 403 or 404 is configuration trouble: each item fails at once naming the cause, never retried", async () => {
  const cases: Array<[number, RegExp]> = [
    [401, /HTTP 401.*CROWS_MODEL_API_KEY/],
    [403, /HTTP 403/],
    [404, /HTTP 404.*CROWS_MODEL_BASE_URL/],
  ];
  for (const [n, [status, cause]] of cases.entries()) {
    const run = await weatherServer(withWeather(() => ({ status })));
    try {
      const started = Date.now();
      const items = ITEMS.slice(n, n + 2 + n);
      const listId = await postList(run.server, items);
      const events = await finish(run.server, listId);
      assertOneLandingPerFlight(events);
      assert.equal(
        of(events, "item.skipped").map((e) => e.data.reason),
        items.map(() => "failure"),
      );
      const landings = of(events, "crow.landed");
      assert.is(landings.length, items.length, "one landing per item: the Sentry's, and no crow after it");
      for (const landed of landings) assert.match(landed.data.error, cause);
      assert.is(run.fake.calls.length, items.length, `${status} is never asked twice`);
      assert.ok(Date.now() - started < 10_000, "it failed at once, not after the patience");
    } finally {
      await run.close();
    }
  }
});

test("a bad answer is still the crow's failure: another crow flies once (today's rule)", async () => {
  for (const bad of [{ content: "" }, { rawBody: "<html>oops</html>" }] as FakeReply[]) {
    let crowCalls = 0;
    const run = await weatherServer(
      withWeather((call) => (call.system.includes("Do the owner's task") && crowCalls++ === 0 ? bad : undefined)),
    );
    try {
      const listId = await postList(run.server, ["Buy milk"]);
      const events = await finish(run.server, listId);
      assertAllAnswered(events);
      assertOneLandingPerFlight(events);
      const crows = of(events, "crow.landed").filter((e) => e.data.crow !== "Sentry");
      assert.equal(
        crows.map((c) => c.data.ok),
        [false, true],
      );
      assert.is.not(crows[0]!.data.crow, crows[1]!.data.crow, "another crow");
    } finally {
      await run.close();
    }
  }
});

test.run();

// A provider that limits its rate and says only Retry-After (no x-ratelimit-* headers): a 429 holds
// the whole gate, not only the flight that got it, and the gate learns a pace from the 429s, so
// most calls are answered rather than refused. Seen from the provider's side, and from the
// owner's: every item answered, one landing per flight, tokens counted once.
import { test } from "uvu";
import * as assert from "uvu/assert";
import {
  assertAllAnswered,
  assertOneLandingPerFlight,
  finish,
  ITEMS,
  of,
  postList,
  tokenBucket,
  weatherServer,
  withWeather,
} from "../helpers/weather.ts";

test("a token bucket that says only Retry-After, at several rates and sizes: every item answered, few calls refused", async () => {
  for (const [rate, burst, dateForm] of [
    // A one-deep bucket refuses any two calls closer than 1/R, which a loaded machine's timer
    // jitter alone produces; the shallowest here is two deep.
    [3, 2, false],
    [5, 3, true],
    [10, 4, false],
  ] as const) {
    const bucket = tokenBucket(rate, burst, dateForm);
    const run = await weatherServer(withWeather(bucket.weather), { CROWS_MODEL_CIRCUIT_FAILURES: "50" });
    try {
      // Enough calls that the first few 429s (the pace is learnt from them) are a small share.
      const items = [
        ...ITEMS,
        ...[
          "Call the plumber",
          "Renew the passport",
          "Buy stamps",
          "Book the dentist",
          "Pay the gas bill",
          "Order a new kettle",
          "Return the library books",
          "Email the landlord",
        ],
      ];
      const listId = await postList(run.server, items);
      const events = await finish(run.server, listId, 120_000);
      assertAllAnswered(events);
      assertOneLandingPerFlight(events, run.fake.servedTokens);
      assert.ok(
        of(events, "crow.landed").every((e) => e.data.ok),
        `${rate}/s: a rate limit is never a failed landing`,
      );
      const calls = run.fake.calls.length;
      const share = bucket.limited.length / calls;
      assert.ok(
        share < 0.25,
        `${rate}/s, bucket ${burst}: ${bucket.limited.length} of ${calls} calls got 429 (${(100 * share).toFixed(0)}%)`,
      );
    } finally {
      await run.close();
    }
  }
});

test("a 429 holds every queued call: after it, no call reaches the provider before its Retry-After", async () => {
  for (const [limitAt, retryAfterS] of [
    [2, 1],
    [5, 2],
    [9, 1],
  ] as const) {
    let limitedAt = 0;
    const arrivals: number[] = [];
    const answerOrLimit = withWeather((_call, i) => {
      arrivals.push(Date.now());
      if (i !== limitAt) return undefined;
      limitedAt = Date.now();
      return { status: 429, headers: { "retry-after": String(retryAfterS) } };
    });
    const run = await weatherServer(
      async (call, i) => {
        const reply = await answerOrLimit(call, i);
        // A provider that takes its time, so several flights are in the air when the 429 comes.
        if (reply.status === undefined) await new Promise((resolve) => setTimeout(resolve, 40));
        return reply;
      },
      { CROWS_ITEM_CONCURRENCY: "6" },
    );
    try {
      const listId = await postList(run.server, ITEMS);
      const events = await finish(run.server, listId);
      assertAllAnswered(events);
      assertOneLandingPerFlight(events, run.fake.servedTokens);
      assert.ok(limitedAt > 0, "the provider answered a 429");
      // A call the gate let go just before the 429 reached it may still land a moment after.
      const during = arrivals.filter((t) => t > limitedAt + 250 && t < limitedAt + retryAfterS * 1000 - 50);
      assert.equal(
        during.length,
        0,
        `Retry-After ${retryAfterS} s: ${during.length} calls arrived during the hold, at ${during.map((t) => t - limitedAt).join(", ")} ms`,
      );
      assert.ok(
        arrivals.some((t) => t >= limitedAt + retryAfterS * 1000 - 50),
        "calls resumed after the hold",
      );
    } finally {
      await run.close();
    }
  }
});

test.run();

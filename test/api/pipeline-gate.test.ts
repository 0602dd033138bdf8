// The provider's gate, seen from both ends: a slow provider under several lists at once sees no
// more calls than CROWS_MODEL_CONCURRENCY, and a short list posted behind a long one is served in
// turn, not held to the end.
import { test } from "uvu";
import * as assert from "uvu/assert";
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
import { ownerFollows } from "../helpers/owner.ts";

test("a slow provider under several lists at once: the provider never sees more calls than the cap", async () => {
  for (const [cap, lists, delayMs] of [
    [1, 2, 40],
    [2, 3, 80],
    [3, 4, 60],
  ] as const) {
    const run = await weatherServer(
      withWeather(() => undefined),
      { CROWS_MODEL_CONCURRENCY: String(cap) },
    );
    run.fake.script = async (call, i) => {
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      return withWeather(() => undefined)(call, i);
    };
    try {
      const ids: string[] = [];
      for (let l = 0; l < lists; l++) ids.push(await postList(run.server, ITEMS.slice(l, l + 3), `lister-${l}`));
      const runs = await Promise.all(ids.map((id) => finish(run.server, id)));
      for (const events of runs) {
        assertAllAnswered(events);
        assertOneLandingPerFlight(events);
      }
      assert.is(
        run.fake.maxInFlight,
        cap,
        `cap ${cap}: the provider saw at most ${cap} at once, and the flock used them all`,
      );
    } finally {
      await run.close();
    }
  }
});

// Every item of the long list at once (CROWS_ITEM_CONCURRENCY 50), so its calls fill the queue: a
// first-come queue then holds the short list to the end (checked: 24 of 24 long items answered
// first); the round robin serves it in turn.
test("fairness: a short list posted behind a long one is served in turn, not held to the end", async () => {
  for (const [cap, longItems] of [
    [1, 24],
    [2, 30],
  ] as const) {
    const run = await weatherServer(
      withWeather(() => undefined),
      { CROWS_MODEL_CONCURRENCY: String(cap), CROWS_ITEM_CONCURRENCY: "50" },
    );
    run.fake.script = async (call, i) => {
      await new Promise((resolve) => setTimeout(resolve, 25));
      return withWeather(() => undefined)(call, i);
    };
    try {
      const long = Array.from({ length: longItems }, (_, i) => `${ITEMS[i % ITEMS.length]} (${i + 1})`);
      const longId = await postList(run.server, long, "long");
      const longOwner = await ownerFollows(run.server.url, longId, {}, 120_000);
      await longOwner.sse.waitFor((m) => m.event === "crow.landed", 20_000); // the long list has the provider
      const shortId = await postList(run.server, ["Buy stamps", "Call the plumber"], "short");
      const shortEvents = await finish(run.server, shortId);
      const longAnsweredThen = of(longOwner.sse.messages(), "item.answered").length;
      assertAllAnswered(shortEvents);
      const longEvents = await longOwner.finished;
      longOwner.sse.close();
      assertAllAnswered(longEvents);
      assert.ok(
        longAnsweredThen < longItems / 2,
        `cap ${cap}: the short list finished when the long one had ${longAnsweredThen} of ${longItems} answered`,
      );
    } finally {
      await run.close();
    }
  }
});

test.run();

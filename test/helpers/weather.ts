// Lists run against a fake provider with weather (test/helpers/fake-openai.ts), and the checks of
// what the owner's client saw: one landing per flight, every item answered or failed with the
// provider-unavailable reason, nothing answered twice, tokens counted once.
import * as assert from "uvu/assert";
import { startTestServer, type TestServer } from "./server.ts";
import { ownerFollows } from "./owner.ts";
import { defaultScript, startFakeOpenAI, type FakeOpenAI, type FakeReply, type FakeScript } from "./fake-openai.ts";
import type { SseMessage } from "./sse.ts";

export const of = (events: SseMessage[], name: string) => events.filter((e) => e.event === name);

/** Fast weather: short backoff, a low circuit threshold, a patience the test sets. */
export const WEATHER_ENV: Record<string, string> = {
  CROWS_MODEL: "openai-compatible:fake-model",
  CROWS_MODEL_API_KEY: "sk-weather-secret",
  CROWS_MODEL_BACKOFF_MS: "20",
  CROWS_MODEL_BACKOFF_MAX_MS: "200",
  CROWS_MODEL_CIRCUIT_FAILURES: "3",
  CROWS_MODEL_PATIENCE_MS: "30000",
  CROWS_BANTER_WAIT_MS: "3000",
};

/** A script that answers with `weather` when it returns a reply, and well otherwise. */
export function withWeather(
  weather: (call: Parameters<FakeScript>[0], index: number) => FakeReply | undefined,
): FakeScript {
  return (call, index) => weather(call, index) ?? defaultScript(call, index);
}

export interface WeatherRun {
  fake: FakeOpenAI;
  server: TestServer;
  close(): Promise<void>;
}

export async function weatherServer(script: FakeScript, env: Record<string, string> = {}): Promise<WeatherRun> {
  const fake = await startFakeOpenAI(script);
  const server = await startTestServer({ env: { ...WEATHER_ENV, CROWS_MODEL_BASE_URL: fake.url, ...env } });
  return {
    fake,
    server,
    close: async () => {
      await server.close();
      await fake.close();
    },
  };
}

export async function postList(server: TestServer, items: string[], requester = "weather"): Promise<string> {
  const res = await server.post("/api/lists", { text: items.join("\n"), requester });
  assert.is(res.status, 202, res.text);
  return res.body.list_id as string;
}

/** Follows a list to list.finished, answering every approval yes. */
export async function finish(server: TestServer, listId: string, timeoutMs = 60_000): Promise<SseMessage[]> {
  const owner = await ownerFollows(server.url, listId, {}, timeoutMs);
  try {
    return await owner.finished;
  } finally {
    owner.sse.close();
  }
}

/**
 * The contract's stream under weather: each crow.flying closes with at most one crow.landed (a
 * flight cut by a restart has none), no item is answered or skipped twice or both, and the list's
 * tokens are the landings' tokens plus banter's.
 */
export function assertOneLandingPerFlight(events: SseMessage[], servedTokens?: number): void {
  const open = new Map<string, number>();
  for (const e of events) {
    const key = `${e.data.item_id}|${e.data.crow}`;
    if (e.event === "crow.flying") open.set(key, (open.get(key) ?? 0) + 1);
    if (e.event === "crow.landed") {
      const flying = open.get(key) ?? 0;
      assert.ok(flying > 0, `a landing of ${key} with no flight open`);
      open.set(key, flying - 1);
    }
  }
  const ends = new Map<string, string>();
  for (const e of events) {
    if (e.event !== "item.answered" && e.event !== "item.skipped") continue;
    assert.not.ok(
      ends.has(e.data.item_id),
      `${e.data.item_id} ended twice (${ends.get(e.data.item_id)} then ${e.event})`,
    );
    ends.set(e.data.item_id, e.event);
  }
  const landed = of(events, "crow.landed").reduce((sum, e) => sum + (e.data.tokens as number), 0);
  const banter = of(events, "crow.banter").length;
  const finished = of(events, "list.finished")[0];
  assert.ok(finished, "the list finished");
  if (banter === 0)
    assert.is(finished!.data.tokens_used, landed, "the list's tokens are its landings' tokens, counted once");
  else assert.ok(finished!.data.tokens_used >= landed, "banter adds to the landings' tokens");
  // Every token the provider reported for an answer it completed is counted, and only once.
  if (servedTokens !== undefined)
    assert.is(finished!.data.tokens_used, servedTokens, "tokens_used is what the provider served, once");
}

/** Every item of the list was answered. */
export function assertAllAnswered(events: SseMessage[]): void {
  const started = of(events, "list.started")[0]!;
  const ids = (started.data.items as Array<{ item_id: string }>).map((i) => i.item_id).sort();
  assert.equal(
    of(events, "item.answered")
      .map((e) => e.data.item_id)
      .sort(),
    ids,
    "every item answered",
  );
  assert.equal(of(events, "item.skipped"), [], "nothing skipped");
}

export const ITEMS = [
  "Buy milk",
  "Research flights to Lisbon and book the cheapest one",
  "Brainstorm names for a bakery",
  "Write the release notes",
  "Fix the login bug",
  "Plan the team offsite",
];

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface TokenBucketWeather {
  weather: (call: Parameters<FakeScript>[0], index: number) => FakeReply | undefined;
  /** The 429s it answered, and when. */
  limited: number[];
  /** When each call it let through arrived. */
  served: number[];
}

/**
 * A provider's token bucket of `rate` requests per second holding `burst`; beyond it a 429 with
 * only Retry-After (whole seconds, or an HTTP date when `dateForm`), no rate-limit headers.
 */
export function tokenBucket(rate: number, burst: number, dateForm = false): TokenBucketWeather {
  let tokens = burst;
  let last = Date.now();
  const bucket: TokenBucketWeather = {
    limited: [],
    served: [],
    weather: () => {
      const now = Date.now();
      tokens = Math.min(burst, tokens + ((now - last) / 1000) * rate);
      last = now;
      if (tokens >= 1) {
        tokens -= 1;
        bucket.served.push(now);
        return undefined;
      }
      bucket.limited.push(now);
      const waitMs = Math.ceil(((1 - tokens) / rate) * 1000);
      const retryAfter = dateForm
        ? new Date(now + Math.max(1000, waitMs) + 999).toUTCString()
        : String(Math.ceil(waitMs / 1000));
      return { status: 429, headers: { "retry-after": retryAfter } };
    },
  };
  return bucket;
}

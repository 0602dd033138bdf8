// Benchmark: what a provider's weather costs a list. A fake OpenAI-compatible provider on loopback
// with a token bucket of R requests per second answers 429 (with retry-after-ms and Retry-After,
// as OpenAI does) beyond it. A 50-item list runs through a real App (the owner approves each
// verdict the moment it is asked); the bench prints its wall time next to the ideal calls / R,
// measured in the same run (the calls the provider answered, over R), and the share of calls that
// got 429. Goal: within 1.2x of the ideal, 429s under 10% of calls.
// Further scenarios, each printed with what the owner got (answered / skipped) and what the
// provider saw: half the calls 429 with Retry-After: 1; a 503 outage of BENCH_OUTAGE_MS as the
// list starts; five 10-item lists on a slow provider (the most calls it saw at once).
// Run: npx tsx bench/provider-weather.ts   (BENCH_RATE=5,10  BENCH_ITEMS=50  BENCH_OUTAGE_MS=8000;
// BENCH_ONLY=<regex> runs the scenarios whose line matches it: headers, retry-after, half, outage, slow)
import http from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { loadConfig } from "../src/base/config.ts";
import { createApp, type App } from "../src/app.ts";
import { listStream } from "../src/base/streams.ts";

type Weather = ((now: number, index: number) => { status: number; headers?: Record<string, string> } | undefined) & {
  /** Headers sent with every good answer (a provider's rate-limit announcements). */
  headers?: () => Record<string, string>;
};

interface Provider {
  url: string;
  calls: number;
  answered: number;
  limited: number;
  errors: number;
  inFlight: number;
  maxInFlight: number;
  close(): Promise<void>;
}

/** A chat-completions provider that answers every role well after `latencyMs`, unless `weather` says otherwise. */
async function startProvider(weather: Weather, latencyMs: number): Promise<Provider> {
  const provider: Provider = {
    url: "",
    calls: 0,
    answered: 0,
    limited: 0,
    errors: 0,
    inFlight: 0,
    maxInFlight: 0,
    close: async () => {},
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const index = provider.calls++;
      const trouble = weather(Date.now(), index);
      if (trouble) {
        if (trouble.status === 429) provider.limited++;
        else provider.errors++;
        res
          .writeHead(trouble.status, { "content-type": "application/json", ...trouble.headers })
          .end(JSON.stringify({ error: { message: "weather" } }));
        return;
      }
      provider.inFlight++;
      provider.maxInFlight = Math.max(provider.maxInFlight, provider.inFlight);
      let body: any = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        body = {};
      }
      const system: string = (body.messages ?? []).find((m: any) => m.role === "system")?.content ?? "";
      const content = system.includes("Triage one todo item")
        ? JSON.stringify({ mode: "solo", task_type: "other", subtasks: [], reason: "bench: one action" })
        : system.includes("Write exactly one line")
          ? "Fine flying today."
          : "A bench answer, short and to the point.";
      const usage = { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 };
      const announced = weather.headers?.() ?? {};
      setTimeout(() => {
        provider.inFlight--;
        provider.answered++;
        if (body.stream) {
          res.writeHead(200, { "content-type": "text/event-stream", ...announced });
          const base = { id: `b${index}`, object: "chat.completion.chunk", created: 0, model: "bench" };
          res.write(
            `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: { role: "assistant", content }, finish_reason: null }] })}\n\n`,
          );
          res.write(
            `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\n`,
          );
          res.end(`data: ${JSON.stringify({ ...base, choices: [], usage })}\n\ndata: [DONE]\n\n`);
          return;
        }
        res.writeHead(200, { "content-type": "application/json", ...announced }).end(
          JSON.stringify({
            id: `b${index}`,
            object: "chat.completion",
            created: 0,
            model: "bench",
            choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
            usage,
          }),
        );
      }, latencyMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  provider.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  provider.close = () => new Promise((resolve) => (server.closeAllConnections(), server.close(() => resolve())));
  return provider;
}

/**
 * R requests per second, a bucket of `burst`; beyond it a 429 saying when the next token comes.
 * `announce` sends OpenAI's headers on every answer, as OpenAI does: x-ratelimit-limit-requests
 * (per minute), x-ratelimit-remaining-requests, x-ratelimit-reset-requests.
 */
function tokenBucket(rate: number, burst: number, announce: boolean): Weather {
  let tokens = burst;
  let last = Date.now();
  const refill = (now: number) => {
    tokens = Math.min(burst, tokens + ((now - last) / 1000) * rate);
    last = now;
  };
  const limits = () => ({
    "x-ratelimit-limit-requests": String(rate * 60),
    "x-ratelimit-remaining-requests": String(Math.floor(tokens)),
    "x-ratelimit-reset-requests": `${Math.ceil(((burst - tokens) / rate) * 1000)}ms`,
  });
  const weather: Weather = (now) => {
    refill(now);
    if (tokens >= 1) {
      tokens -= 1;
      return undefined;
    }
    const waitMs = Math.ceil(((1 - tokens) / rate) * 1000);
    return {
      status: 429,
      headers: {
        "retry-after-ms": String(waitMs),
        "retry-after": String(Math.ceil(waitMs / 1000)),
        ...(announce ? limits() : {}),
      },
    };
  };
  if (announce) weather.headers = limits;
  return weather;
}

/** Runs `lists` lists of `items` items through one App, the owner approving at once; ms to the last list.finished. */
async function runLists(
  providerUrl: string,
  lists: number,
  items: number,
  env: Record<string, string> = {},
): Promise<{ ms: number; answered: number; skipped: number; errors: string[] }> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "crows-weather-bench-"));
  const config = loadConfig({
    CROWS_DATA_DIR: dataDir,
    CROWS_MODEL: "openai-compatible:bench",
    CROWS_MODEL_BASE_URL: providerUrl,
    CROWS_TOKEN_BUDGET: "1000000",
    CROWS_BANTER_WAIT_MS: "20000",
    ...env,
  });
  const app: App = await createApp(config, { logLine: () => {} });
  try {
    const started = Date.now();
    const ids: string[] = [];
    for (let l = 0; l < lists; l++) {
      const text = Array.from({ length: items }, (_, i) => `Bench errand ${l + 1}.${i + 1}`).join("\n");
      ids.push((await app.flock.submitList({ text, requester: `bench-${l}` })).listId);
    }
    const outcomes = await Promise.all(ids.map((id) => ownerApproves(app, id)));
    return {
      ms: Date.now() - started,
      answered: outcomes.reduce((n, o) => n + o.answered, 0),
      skipped: outcomes.reduce((n, o) => n + o.skipped, 0),
      errors: [...new Set(outcomes.flatMap((o) => o.errors))],
    };
  } finally {
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function ownerApproves(
  app: App,
  listId: string,
): Promise<{ answered: number; skipped: number; errors: string[] }> {
  const stop = new AbortController();
  let answered = 0;
  let skipped = 0;
  const errors: string[] = [];
  for await (const page of app.log.followPages(listStream(listId), 0, stop.signal)) {
    for (const event of page) {
      const p = JSON.parse(event.payload);
      if ((event.name === "item.triaged" || event.name === "item.answered") && p.needs_approval) {
        await app.flock.postVerdict({
          itemId: p.item_id,
          target: event.name === "item.triaged" ? "triage" : "output",
          approve: true,
        });
      }
      if (event.name === "item.answered") answered++;
      if (event.name === "item.skipped") skipped++;
      if (event.name === "crow.landed" && !p.ok) errors.push(p.error);
      if (event.name === "list.finished") {
        stop.abort();
        return { answered, skipped, errors };
      }
    }
  }
  return { answered, skipped, errors };
}

const pct = (part: number, whole: number) => `${((100 * part) / Math.max(1, whole)).toFixed(1)}%`;
const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

async function main(): Promise<void> {
  const items = Number(process.env.BENCH_ITEMS ?? 50);
  const rates = (process.env.BENCH_RATE ?? "5,10").split(",").map(Number);
  const outageMs = Number(process.env.BENCH_OUTAGE_MS ?? 8_000);
  const only = new RegExp(process.env.BENCH_ONLY ?? ".");
  console.log(`provider-weather bench: ${items}-item list, fake provider latency 40 ms, node ${process.version}`);

  // The list's own pace with no limit at all: the floor under any rate, measured in this run.
  const free = await startProvider(() => undefined, 40);
  const unlimited = await runLists(free.url, 1, items);
  await free.close();
  console.log(
    `no limit: wall ${s(unlimited.ms)} for ${free.answered} calls (${(free.answered / (unlimited.ms / 1000)).toFixed(1)} calls/s): the floor under every line below`,
  );

  for (const announce of [true, false]) {
    if (!only.test(announce ? "headers" : "retry-after")) continue;
    for (const rate of rates) {
      const provider = await startProvider(tokenBucket(rate, 2, announce), 40);
      const run = await runLists(provider.url, 1, items);
      await provider.close();
      const ideal = (provider.answered / rate) * 1000;
      const floor = Math.max(ideal, unlimited.ms);
      console.log(
        `token bucket ${rate} req/s, ${announce ? "rate-limit headers on every answer" : "Retry-After only"}: wall ${s(run.ms)} vs ideal ${s(ideal)} (${provider.answered} answered calls / ${rate}) = ${(run.ms / ideal).toFixed(2)}x ` +
          `(${(run.ms / floor).toFixed(2)}x of max(ideal, no limit)); ` +
          `429s ${provider.limited} of ${provider.calls} calls (${pct(provider.limited, provider.calls)}); items answered ${run.answered}, skipped ${run.skipped}`,
      );
    }
  }

  if (only.test("half")) {
    const provider = await startProvider(
      (_now, i) => (i % 2 === 0 ? { status: 429, headers: { "retry-after": "1" } } : undefined),
      20,
    );
    const run = await runLists(provider.url, 1, 8);
    await provider.close();
    console.log(
      `half the calls 429 (Retry-After: 1), 8 items: wall ${s(run.ms)}; answered ${run.answered}, skipped ${run.skipped}; calls ${provider.calls}${run.errors.length ? `; errors: ${run.errors.join(" | ")}` : ""}`,
    );
  }

  if (only.test("outage")) {
    let downUntil = 0;
    const provider = await startProvider((now) => (now < downUntil ? { status: 503 } : undefined), 20);
    downUntil = Date.now() + outageMs;
    const run = await runLists(provider.url, 1, 6);
    await provider.close();
    console.log(
      `503 for ${s(outageMs)} as a 6-item list starts: wall ${s(run.ms)}; answered ${run.answered}, skipped ${run.skipped}; ` +
        `calls during the outage ${provider.errors}, in all ${provider.calls}${run.errors.length ? `; errors: ${[...new Set(run.errors)].join(" | ")}` : ""}`,
    );
  }

  if (only.test("slow")) {
    const provider = await startProvider(() => undefined, 300);
    const run = await runLists(provider.url, 5, 10);
    await provider.close();
    console.log(
      `five 10-item lists on a slow provider (300 ms): wall ${s(run.ms)}; answered ${run.answered}, skipped ${run.skipped}; most calls at once at the provider: ${provider.maxInFlight}`,
    );
  }
}

await main();

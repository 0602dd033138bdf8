// What a failed provider call means, decided in one place. Four kinds of trouble, each with its own
// consequence (docs/models.md, "Provider trouble"):
//   weather  - 429, 408, 409, any 5xx (Anthropic's 529 too), a refused or reset connection, DNS:
//              the provider is busy or down; the same flight waits and tries again.
//   timeout  - the call ran past its timeout: the provider is slow; the flight waits and tries
//              again with a longer timeout (never the same doomed call at once).
//   config   - 400, 401, 403, 404, 422 and the other 4xx: configuration trouble that waiting will
//              not heal; the item fails at once, naming the cause.
//   answer   - the provider answered, but badly (empty, malformed): the crow's failure.
// Messages are short and safe to show and store: the SDK's error is never attached (it holds the
// request body, the prompt, and headers).
import { APICallError } from "ai";

export type TroubleKind = "weather" | "timeout" | "config" | "answer" | "aborted" | "unavailable";

/** A failed call, with a message safe to show and store. */
export class ModelCallError extends Error {
  constructor(
    message: string,
    readonly kind: TroubleKind,
    /** How long the provider asked us to wait before the next call (Retry-After and kin). */
    readonly retryAfterMs?: number,
    /** The provider's HTTP status, when it answered with one. */
    readonly status?: number,
    /** The request limit the provider announced with the failure. */
    readonly limits?: RateLimits,
  ) {
    super(message);
    this.name = "ModelCallError";
  }

  /** Whether waiting and asking again may help (the provider's weather, or slowness). */
  get retryable(): boolean {
    return this.kind === "weather" || this.kind === "timeout";
  }
}

/** The patience ran out while the provider stayed unavailable: the item fails with this reason. */
export class ProviderUnavailableError extends ModelCallError {
  constructor(waitedMs: number, last: string) {
    super(`model provider unavailable for ${Math.round(waitedMs / 1000)} s (${last})`, "unavailable");
  }
}

export function isProviderTrouble(error: unknown): error is ModelCallError {
  return error instanceof ModelCallError && (error.kind === "config" || error.kind === "unavailable");
}

const CONFIG_HINTS: Record<number, string> = {
  400: "the provider refused the request (HTTP 400): check CROWS_MODEL",
  401: "the provider refused the key (HTTP 401): check CROWS_MODEL_API_KEY",
  403: "the provider forbids this key or model (HTTP 403): check CROWS_MODEL_API_KEY and CROWS_MODEL",
  404: "the provider knows no such model or path (HTTP 404): check CROWS_MODEL and CROWS_MODEL_BASE_URL",
  422: "the provider could not process the request (HTTP 422): check CROWS_MODEL",
};

/** HTTP statuses that mean "busy or down, ask again later". */
export function isWeatherStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

export function classifyProviderError(
  error: unknown,
  state: { timedOut: boolean; aborted: boolean; timeoutMs: number; now?: number },
): ModelCallError {
  if (state.aborted) return new ModelCallError("model call aborted", "aborted");
  if (state.timedOut) return new ModelCallError(`model call timed out after ${state.timeoutMs} ms`, "timeout");
  if (APICallError.isInstance(error)) {
    const status = error.statusCode;
    if (status === undefined) return new ModelCallError("model provider unreachable", "weather");
    if (status >= 200 && status < 300) return new ModelCallError("model provider sent a malformed reply", "answer");
    if (isWeatherStatus(status)) {
      const headers = error.responseHeaders ?? {};
      const wait = retryAfterMs(headers, status, state.now ?? Date.now());
      return new ModelCallError(
        `model provider answered HTTP ${status}`,
        "weather",
        wait,
        status,
        rateLimitsFrom(headers),
      );
    }
    return new ModelCallError(
      CONFIG_HINTS[status] ?? `the provider refused the request (HTTP ${status})`,
      "config",
      undefined,
      status,
    );
  }
  const name = error instanceof Error ? error.name : "";
  if (
    /TypeValidation|JSONParse|InvalidResponseData|EmptyResponseBody|NoContentGenerated|NoOutputGenerated/.test(name)
  ) {
    return new ModelCallError("model provider sent a malformed reply", "answer");
  }
  if (error instanceof TypeError) return new ModelCallError("model provider unreachable", "weather");
  return new ModelCallError("model call failed", "answer");
}

/**
 * How long the provider asks us to wait, from its headers, in ms; undefined when it does not say.
 * Retry-After (seconds or an HTTP date) and OpenAI's retry-after-ms first; on a 429, the
 * providers' rate-limit reset headers too (OpenAI's x-ratelimit-reset-* durations such as "6m0s",
 * Anthropic's anthropic-ratelimit-*-reset RFC 3339 times, a bare x-ratelimit-reset).
 */
export function retryAfterMs(
  headers: Record<string, string | undefined>,
  status: number,
  now: number,
): number | undefined {
  const h = (name: string) => {
    for (const [key, value] of Object.entries(headers))
      if (key.toLowerCase() === name && value !== undefined) return value.trim();
    return undefined;
  };
  const ms = h("retry-after-ms");
  if (ms !== undefined && /^\d+(\.\d+)?$/.test(ms)) return Math.round(Number(ms));
  const after = h("retry-after");
  if (after !== undefined) {
    if (/^\d+(\.\d+)?$/.test(after)) return Math.round(Number(after) * 1000);
    const at = Date.parse(after);
    if (Number.isFinite(at)) return Math.max(0, at - now);
  }
  if (status !== 429) return undefined;
  // Which limit was hit: the one with nothing remaining, when the provider says; otherwise the
  // soonest reset it names.
  const resets: Array<{ ms: number; exhausted: boolean }> = [];
  for (const [reset, remaining] of [
    ["x-ratelimit-reset-requests", "x-ratelimit-remaining-requests"],
    ["x-ratelimit-reset-tokens", "x-ratelimit-remaining-tokens"],
    ["anthropic-ratelimit-requests-reset", "anthropic-ratelimit-requests-remaining"],
    ["anthropic-ratelimit-tokens-reset", "anthropic-ratelimit-tokens-remaining"],
    ["anthropic-ratelimit-input-tokens-reset", "anthropic-ratelimit-input-tokens-remaining"],
    ["anthropic-ratelimit-output-tokens-reset", "anthropic-ratelimit-output-tokens-remaining"],
    ["x-ratelimit-reset", "x-ratelimit-remaining"],
  ] as const) {
    const value = h(reset);
    if (value === undefined) continue;
    const parsed = resetValueMs(value, now);
    if (parsed !== undefined) resets.push({ ms: parsed, exhausted: h(remaining) === "0" });
  }
  const exhausted = resets.filter((r) => r.exhausted);
  if (exhausted.length > 0) return Math.max(...exhausted.map((r) => r.ms));
  return resets.length > 0 ? Math.min(...resets.map((r) => r.ms)) : undefined;
}

/** A provider's request limit as its headers announce it on every answer. */
export interface RateLimits {
  /** Requests allowed per minute. */
  limit: number;
  /** Requests left in the window now. */
  remaining: number;
}

/**
 * The request limit from OpenAI's x-ratelimit-limit-requests / x-ratelimit-remaining-requests or
 * Anthropic's anthropic-ratelimit-requests-limit / -remaining (both per minute); undefined when absent.
 */
export function rateLimitsFrom(headers: Record<string, string | undefined> | undefined): RateLimits | undefined {
  if (!headers) return undefined;
  const lower = new Map(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v?.trim()]));
  for (const prefix of ["x-ratelimit-", "anthropic-ratelimit-"]) {
    const [limitName, remainingName] =
      prefix === "x-ratelimit-"
        ? ["x-ratelimit-limit-requests", "x-ratelimit-remaining-requests"]
        : ["anthropic-ratelimit-requests-limit", "anthropic-ratelimit-requests-remaining"];
    const limit = Number(lower.get(limitName));
    const remaining = Number(lower.get(remainingName));
    if (
      lower.has(limitName) &&
      lower.has(remainingName) &&
      Number.isFinite(limit) &&
      limit > 0 &&
      Number.isFinite(remaining) &&
      remaining >= 0
    )
      return { limit, remaining };
  }
  return undefined;
}

/** "1s", "6m0s", "20ms", "1h2m3.5s", a bare number of seconds, a unix time, or an RFC 3339 time. */
function resetValueMs(value: string, now: number): number | undefined {
  if (/^\d+(\.\d+)?$/.test(value)) {
    const n = Number(value);
    // A bare number this large is a unix time (seconds), not a wait.
    return n > 1e9 ? Math.max(0, n * 1000 - now) : Math.round(n * 1000);
  }
  const duration = /^(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m(?!s))?(?:(\d+(?:\.\d+)?)s)?(?:(\d+(?:\.\d+)?)ms)?$/.exec(
    value,
  );
  if (duration && value !== "") {
    const [, hours, minutes, seconds, millis] = duration;
    return Math.round(
      Number(hours ?? 0) * 3_600_000 +
        Number(minutes ?? 0) * 60_000 +
        Number(seconds ?? 0) * 1000 +
        Number(millis ?? 0),
    );
  }
  const at = Date.parse(value);
  return Number.isFinite(at) ? Math.max(0, at - now) : undefined;
}

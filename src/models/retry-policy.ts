// The one retry policy of every model call, declared (in the manner of Temporal's RetryPolicy)
// rather than spread through loops: how long the first wait is, how it grows, its cap, how long a
// flight keeps trying (its patience), and which kinds of trouble are worth waiting out. The SDK's
// own retries are off (maxRetries: 0): this is the only place a call is repeated.
import type { Config } from "../base/config.ts";
import { ModelCallError, ProviderUnavailableError, type TroubleKind } from "./provider-errors.ts";

export interface RetryPolicy {
  /** The first backoff when the provider names no wait. */
  readonly initialIntervalMs: number;
  readonly backoffCoefficient: number;
  /** No single computed wait is longer (a provider's own Retry-After may be, within the patience). */
  readonly maximumIntervalMs: number;
  /** How long a flight keeps trying from its first wait before the item fails (stored, so a restart keeps it). */
  readonly patienceMs: number;
  /** Trouble worth waiting out; anything else fails the call at once. */
  readonly retryable: ReadonlySet<TroubleKind>;
  /** A timed-out call is asked again with this much more time (a slow provider gets the time it needs). */
  readonly timeoutGrowth: number;
}

export function retryPolicyFrom(config: Config): RetryPolicy {
  return {
    initialIntervalMs: config.modelBackoffMs,
    backoffCoefficient: 2,
    maximumIntervalMs: config.modelBackoffMaxMs,
    patienceMs: config.modelPatienceMs,
    retryable: new Set<TroubleKind>(["weather", "timeout"]),
    timeoutGrowth: 2,
  };
}

/** Exponential backoff with full jitter: a uniform wait in [0, min(cap, initial * coefficient^n)]. */
export function backoffMs(policy: RetryPolicy, failures: number, random: () => number = Math.random): number {
  const ceiling = Math.min(
    policy.maximumIntervalMs,
    policy.initialIntervalMs * policy.backoffCoefficient ** Math.max(0, failures - 1),
  );
  return Math.round(random() * ceiling);
}

/** The wait before the next try: the provider's own word when it gave one, else backoff. */
export function nextWaitMs(
  policy: RetryPolicy,
  error: ModelCallError,
  failures: number,
  random: () => number = Math.random,
): number {
  if (error.retryAfterMs !== undefined) return error.retryAfterMs;
  return backoffMs(policy, failures, random);
}

export interface WaitNotice {
  /** Why the flight waits (the last trouble, safe to show). */
  reason: string;
  /** When the next try goes out (ms since the epoch). */
  retryAt: number;
  /** When the patience ends (ms since the epoch). */
  deadline: number;
  failures: number;
}

export interface RetryHooks {
  /** The flight's patience deadline: the stored one when an earlier wait set it, else one begun now. */
  deadline(now: number): Promise<number>;
  waiting?(notice: WaitNotice): void;
  signal?: AbortSignal;
  now?: () => number;
  random?: () => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/**
 * Runs `attempt` until it succeeds, fails with trouble the policy does not wait out, or the
 * patience ends (ProviderUnavailableError). `attempt` gets the try's number (0 first), its
 * timeout factor (grown after each timeout) and the patience deadline once a wait began it.
 */
export async function withRetries<T>(
  policy: RetryPolicy,
  hooks: RetryHooks,
  attempt: (n: number, timeoutFactor: number, deadline: number | undefined) => Promise<T>,
): Promise<T> {
  const now = hooks.now ?? Date.now;
  const sleep = hooks.sleep ?? abortableSleep;
  let deadline: number | undefined;
  let started: number | undefined;
  let timeoutFactor = 1;
  for (let n = 0; ; n++) {
    try {
      return await attempt(n, timeoutFactor, deadline);
    } catch (error) {
      if (!(error instanceof ModelCallError) || !policy.retryable.has(error.kind) || hooks.signal?.aborted) throw error;
      if (error.kind === "timeout") timeoutFactor *= policy.timeoutGrowth;
      const at = now();
      deadline ??= await hooks.deadline(at);
      started ??= Math.min(at, deadline - policy.patienceMs);
      if (at >= deadline) throw new ProviderUnavailableError(at - started, error.message);
      const wait = Math.min(nextWaitMs(policy, error, n + 1, hooks.random), deadline - at);
      hooks.waiting?.({ reason: error.message, retryAt: at + wait, deadline, failures: n + 1 });
      await sleep(wait, hooks.signal);
    }
  }
}

export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new ModelCallError("model call aborted", "aborted"));
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    };
    const onAbort = () => {
      done();
      reject(new ModelCallError("model call aborted", "aborted"));
    };
    const timer = setTimeout(() => {
      done();
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

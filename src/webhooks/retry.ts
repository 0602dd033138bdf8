// When a failed delivery is tried again (docs/webhooks.md "Retries"): the schedule's next entry
// (CROWS_WEBHOOK_RETRY_SCHEDULE_MS, read into seconds before each attempt), with up to 10% jitter so receivers
// coming back are not hit in lockstep; a Retry-After the receiver sent replaces it (capped at a day).

const MAX_RETRY_AFTER_S = 24 * 3600;

/** Seconds a Retry-After header asks for (delta-seconds or an HTTP date), or undefined. */
export function retryAfterSeconds(header: string | undefined, nowMs: number): number | undefined {
  if (!header) return undefined;
  const trimmed = header.trim();
  if (/^\d+$/.test(trimmed)) return Math.min(Number(trimmed), MAX_RETRY_AFTER_S);
  if (!/^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(trimmed)) return undefined; // HTTP's IMF-fixdate only
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.min(Math.max(0, (at - nowMs) / 1000), MAX_RETRY_AFTER_S);
}

/**
 * The moment of the next attempt after `attempts` have failed, or null when the schedule is spent.
 * `random` is in [0, 1): the jitter.
 */
export function nextAttemptAt(
  schedule: readonly number[],
  attempts: number,
  nowMs: number,
  retryAfterS: number | undefined,
  random = Math.random(),
): Date | null {
  if (attempts >= schedule.length) return null;
  const planned = schedule[attempts]!;
  const seconds = retryAfterS ?? planned * (1 + 0.1 * random);
  return new Date(nowMs + seconds * 1000);
}

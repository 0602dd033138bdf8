// The owner's settings for issue 33 (docs/configuration.md "The owner's word"), read with the rest
// of the configuration: how many reworks an item may get. Config errors are made by config.ts
// (handed in), which imports this file, as webhook-config.ts does.

export interface OwnerConfig {
  /** How many times one item may be sent back for another try (triage and output together). */
  reworkTries: number;
  /** Approval windows of their own, per nest and per task type (docs/rules.md "Windows"). */
  windows: ApprovalWindows;
}

type Env = Record<string, string | undefined>;
type Fail = (message: string) => Error;

export const DEFAULT_REWORK_TRIES = 2;

function whole(env: Env, name: string, fallback: number, min: number, max: number, fail: Fail): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value < min || value > max)
    throw fail(`${name} must be a whole number from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  return value;
}

export function loadOwnerConfig(env: Env, baseWindowMs: number, fail: Fail): OwnerConfig {
  return {
    reworkTries: whole(env, "CROWS_REWORK_TRIES", DEFAULT_REWORK_TRIES, 0, 10, fail),
    windows: loadApprovalWindows(env, baseWindowMs, fail),
  };
}

/** The window of an approval: its task type's, else its nest's, else the base window. */
export function windowFor(config: OwnerConfig, baseWindowMs: number, nestId: string, taskType: string): number {
  return config.windows.byTaskType[taskType] ?? config.windows.byNest[nestId] ?? baseWindowMs;
}

/** A window the owner set for one nest or one task type (CROWS_APPROVAL_WINDOWS). */
export interface ApprovalWindows {
  byNest: Record<string, number>;
  byTaskType: Record<string, number>;
}

export const MIN_WINDOW_MS = 60_000;
export const MAX_WINDOW_MS = 24 * 3_600_000;
const UNIT_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000 };

/**
 * CROWS_APPROVAL_WINDOWS: `nest:<nest_id>=<time>` and `task:<task_type>=<time>`, comma-separated, a
 * time being a whole number of s, m or h ("90s", "30m", "2h"). Each is at least a minute (or the
 * base window, when a test set that under a minute) and at most a day.
 */
export function loadApprovalWindows(env: Env, baseWindowMs: number, fail: Fail): ApprovalWindows {
  const windows: ApprovalWindows = { byNest: {}, byTaskType: {} };
  const raw = env.CROWS_APPROVAL_WINDOWS?.trim();
  if (!raw) return windows;
  const floor = Math.min(MIN_WINDOW_MS, baseWindowMs);
  for (const part of raw
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean)) {
    const found = /^(nest|task):([a-z0-9/_-]+)=(\d+)(s|m|h)$/.exec(part);
    if (!found)
      throw fail(
        `CROWS_APPROVAL_WINDOWS takes nest:<id>=<time> or task:<type>=<time> (time: 90s, 30m, 2h), got "${part}"`,
      );
    const [, kind, key, amount, unit] = found;
    const ms = Number(amount) * UNIT_MS[unit!]!;
    if (ms < floor || ms > MAX_WINDOW_MS)
      throw fail(`CROWS_APPROVAL_WINDOWS: "${part}" must be from a minute to a day`);
    (kind === "nest" ? windows.byNest : windows.byTaskType)[key!] = ms;
  }
  return windows;
}

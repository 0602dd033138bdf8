// The owner's settings for issue 33 (docs/configuration.md "The owner's word"), read with the rest
// of the configuration: how many reworks an item may get. Config errors are made by config.ts
// (handed in), which imports this file, as webhook-config.ts does.

export interface OwnerConfig {
  /** How many times one item may be sent back for another try (triage and output together). */
  reworkTries: number;
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

export function loadOwnerConfig(env: Env, fail: Fail): OwnerConfig {
  return {
    reworkTries: whole(env, "CROWS_REWORK_TRIES", DEFAULT_REWORK_TRIES, 0, 10, fail),
  };
}

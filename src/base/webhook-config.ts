// The webhook settings (docs/webhooks.md, docs/configuration.md), read with the rest of the
// configuration: the retry schedule, how long an endpoint may fail before it is disabled, the
// rotation grace, the per-send timeout, whether private targets are allowed, the public URL decide
// links point at. Config errors are made by config.ts (handed in), which imports this file.

export interface WebhookConfig {
  /** Seconds before each attempt, the first one included (Standard Webhooks' schedule by default). */
  retryScheduleS: number[];
  /** An endpoint failing without a success for this long is disabled with a reason. */
  disableAfterMs: number;
  /** How long the previous secret still signs after a rotation. */
  rotationGraceMs: number;
  /** One send's whole budget: connect, headers and body. */
  timeoutMs: number;
  /** Loopback and private targets allowed (crows beside its receiver). */
  allowPrivate: boolean;
  /** The base decide links point at; undefined: the listen URL. */
  publicUrl: string | undefined;
  /** How often the sender looks for due deliveries besides being woken by an append. */
  pollMs: number;
  /** Sends from a thread of their own (the default), or from the server's thread (a one-core machine gains nothing from a thread). */
  senderThread: boolean;
  /** Sends wait while the flock works, unless it has worked this long without a rest (0: they never wait). */
  yieldMs: number;
}

type Env = Record<string, string | undefined>;
type Fail = (message: string) => Error;

export const DEFAULT_RETRY_SCHEDULE_S = [0, 5, 300, 1800, 7200, 18000, 36000];

function seconds(env: Env, name: string, fallback: number, fail: Fail): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0)
    throw fail(`${name} must be a number of seconds, 0 or more, got ${JSON.stringify(raw)}`);
  return value;
}

function schedule(env: Env, fail: Fail): number[] {
  const raw = env.CROWS_WEBHOOK_RETRY_SCHEDULE?.trim();
  if (!raw) return DEFAULT_RETRY_SCHEDULE_S;
  const texts = raw.split(",").map((part) => part.trim());
  const parts = texts.map(Number);
  if (texts.some((t) => t === "") || parts.some((s) => !Number.isFinite(s) || s < 0)) {
    throw fail(
      `CROWS_WEBHOOK_RETRY_SCHEDULE is comma-separated seconds before each attempt, like 0,5,300, got ${JSON.stringify(raw)}`,
    );
  }
  return parts;
}

function publicUrl(env: Env, fail: Fail): string | undefined {
  const raw = env.CROWS_PUBLIC_URL?.trim();
  if (!raw) return undefined;
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:") || url.search || url.hash) {
    throw fail(
      `CROWS_PUBLIC_URL is the http(s) address the owner reaches this server at, like https://crows.example.com, got ${JSON.stringify(raw)}`,
    );
  }
  return url.href.replace(/\/$/, "");
}

export function loadWebhookConfig(env: Env, fail: Fail): WebhookConfig {
  const allow = env.CROWS_WEBHOOK_ALLOW_PRIVATE?.trim() ?? "";
  if (!["", "0", "1"].includes(allow))
    throw fail(`CROWS_WEBHOOK_ALLOW_PRIVATE must be 0 or 1, got ${JSON.stringify(allow)}`);
  const sender = env.CROWS_WEBHOOK_SENDER?.trim() || "thread";
  if (sender !== "thread" && sender !== "server")
    throw fail(`CROWS_WEBHOOK_SENDER must be thread or server, got ${JSON.stringify(sender)}`);
  return {
    retryScheduleS: schedule(env, fail),
    disableAfterMs: seconds(env, "CROWS_WEBHOOK_DISABLE_AFTER_S", 5 * 24 * 3600, fail) * 1000,
    rotationGraceMs: seconds(env, "CROWS_WEBHOOK_ROTATION_GRACE_S", 24 * 3600, fail) * 1000,
    timeoutMs: Math.max(1, seconds(env, "CROWS_WEBHOOK_TIMEOUT_S", 15, fail) * 1000),
    allowPrivate: allow === "1",
    publicUrl: publicUrl(env, fail),
    pollMs: Math.max(10, seconds(env, "CROWS_WEBHOOK_POLL_S", 1, fail) * 1000),
    senderThread: sender === "thread",
    yieldMs: seconds(env, "CROWS_WEBHOOK_YIELD_S", 1, fail) * 1000,
  };
}

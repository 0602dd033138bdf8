// The webhook settings (docs/webhooks.md): the retry schedule, how long an endpoint may fail
// before it is disabled, the rotation grace, the per-send timeout, whether private targets are
// allowed, the public URL decide links point at, and how the sender shares the machine. Their
// durations were seconds (`_S`) until 0.3; the old names are still read for one release.
import { setting } from "./declare.ts";
import { flag, type Kind, ms, msList, oneOf, publicUrl, seconds, secondsList } from "./kinds.ts";

/** Standard Webhooks' schedule, in seconds before each attempt (the first included). */
export const DEFAULT_RETRY_SCHEDULE_S = [0, 5, 300, 1800, 7200, 18000, 36000];

/** Milliseconds in the variable, seconds in the value (what src/webhooks/retry.ts counts in). */
const scheduleMs: Kind<number[]> = {
  ...msList,
  zod: msList.zod.transform((list) => list.map((m) => m / 1000)),
  show: (s) => s.map((x) => Math.round(x * 1000)).join(","),
};

const senderWords = oneOf(["thread", "server"]);
const sender: Kind<boolean> = {
  ...senderWords,
  zod: senderWords.zod.transform((word) => word === "thread"),
  show: (thread) => (thread ? "thread" : "server"),
};

/** Seconds from an old `_S` name, in whole milliseconds no lower than `min`. */
const fromSeconds = (min: number) => (s: number) => Math.max(min, Math.round(s * 1000));

export const WEBHOOKS = {
  publicUrl: setting<string | undefined>({
    env: "CROWS_PUBLIC_URL",
    group: "webhooks",
    kind: publicUrl,
    audience: "owner",
    default: undefined,
    defaultText: "the listen URL",
    describe:
      "the http(s) address the owner reaches this server at (`https://crows.example.com`, no query): decide links in webhook deliveries point here (docs/webhooks.md)",
  }),
  allowPrivate: setting<boolean>({
    env: "CROWS_WEBHOOK_ALLOW_PRIVATE",
    group: "webhooks",
    kind: flag,
    audience: "tuning",
    default: false,
    describe:
      '`1` lets webhooks go to loopback and private addresses (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7), for a receiver beside crows; link-local and unspecified addresses are refused regardless (docs/security.md "Webhooks")',
  }),
  retryScheduleS: setting<number[]>({
    env: "CROWS_WEBHOOK_RETRY_SCHEDULE_MS",
    group: "webhooks",
    kind: scheduleMs,
    audience: "tuning",
    default: DEFAULT_RETRY_SCHEDULE_S,
    describe:
      "comma-separated milliseconds before each delivery attempt (the first included), each with up to 10% jitter; a Retry-After from the receiver replaces the wait; after the last the delivery is `failed`",
    deprecated: {
      env: "CROWS_WEBHOOK_RETRY_SCHEDULE",
      kind: secondsList,
      convert: (list: number[]) => list.map((s) => Math.round(s * 1000) / 1000),
    },
  }),
  timeoutMs: setting<number>({
    env: "CROWS_WEBHOOK_TIMEOUT_MS",
    group: "webhooks",
    kind: ms(1),
    audience: "tuning",
    default: 15_000,
    describe: "one send's whole budget (connect, answer, body); a hanging receiver holds only that send",
    deprecated: { env: "CROWS_WEBHOOK_TIMEOUT_S", kind: seconds, convert: fromSeconds(1) },
  }),
  disableAfterMs: setting<number>({
    env: "CROWS_WEBHOOK_DISABLE_AFTER_MS",
    group: "webhooks",
    kind: ms(0),
    audience: "tuning",
    default: 5 * 24 * 3_600_000,
    defaultText: "432000000 (5 days)",
    describe: "an endpoint failing with no success for this long is disabled with a reason the owner can see",
    deprecated: { env: "CROWS_WEBHOOK_DISABLE_AFTER_S", kind: seconds, convert: fromSeconds(0) },
  }),
  rotationGraceMs: setting<number>({
    env: "CROWS_WEBHOOK_ROTATION_GRACE_MS",
    group: "webhooks",
    kind: ms(0),
    audience: "tuning",
    default: 24 * 3_600_000,
    defaultText: "86400000 (a day)",
    describe: "after a secret rotation, how long the previous secret still signs beside the new one",
    deprecated: { env: "CROWS_WEBHOOK_ROTATION_GRACE_S", kind: seconds, convert: fromSeconds(0) },
  }),
  senderThread: setting<boolean>({
    env: "CROWS_WEBHOOK_SENDER",
    group: "webhooks",
    kind: sender,
    audience: "tuning",
    default: true,
    describe:
      "`thread`: deliveries are sent, signed and recorded in a thread of their own, on connections of their own, so they never take the flock's event loop (docs/webhooks.md \"Sending\"); `server`: from the server's own thread, for a machine with one core",
  }),
  pollMs: setting<number>({
    env: "CROWS_WEBHOOK_POLL_MS",
    group: "webhooks",
    kind: ms(10),
    audience: "tuning",
    default: 1_000,
    describe:
      "how often the sender looks for due deliveries besides being woken by an append (other instances' appends, retries)",
    deprecated: { env: "CROWS_WEBHOOK_POLL_S", kind: seconds, convert: fromSeconds(10) },
  }),
  yieldMs: setting<number>({
    env: "CROWS_WEBHOOK_YIELD_MS",
    group: "webhooks",
    kind: ms(0),
    audience: "tuning",
    default: 1_000,
    describe:
      'while the flock works (it appended within the last 20 ms), sends wait for it to rest, unless it has worked this long without a rest; `0`: sends never wait (docs/webhooks.md "Sending")',
    deprecated: { env: "CROWS_WEBHOOK_YIELD_S", kind: seconds, convert: fromSeconds(0) },
  }),
};

// A pace learnt from 429s, for a provider that announces no rate limit (no x-ratelimit-* or
// anthropic-ratelimit-* headers) and says only Retry-After. It is the AWS SDKs' adaptive retry
// mode's client-side rate limiter: a token bucket whose fill rate is cut multiplicatively on a
// 429 and grows back along a cubic curve (CUBIC) on success, so the steady state sits just under
// the provider's rate instead of over it.
//   - Off until the first 429: a provider that never refuses is never paced.
//   - The first cut starts from the rate calls were sent at (over the last `measureMs`); a later
//     one from what the provider answered over it, which is the provider's rate once the flock
//     sends faster, so the curve's plateau sits on it; but from no less than `keep` of the pace,
//     so a provider that refuses at random (it answers a share of any pace) cannot drive the pace
//     to its floor, `minPerSecond`.
//   - One cut per spell: a 429 for a call sent before the last cut was sent at the old rate and
//     says nothing new, so it does not cut again (TCP's one decrease per window).
//   - The growth is timed (from the end of the 429's hold: a long Retry-After is no time spent
//     sending), not counted in successes, so the time between a random refuser's 429s lets the
//     curve climb back.
//   - The curve never runs past `ceilingFactor` times what the provider answered lately (or the
//     rate of the last 429, if more), so an idle spell does not grow it without bound; the pace
//     lifts (unpaced) after `liftAfterMs` without a 429.
// The bucket holds at most one call, so calls start evenly spaced and a held gate does not
// release a burst.

/** The adaptive pace's policy, declared (the AWS SDK's constants). */
export interface AdaptivePacePolicy {
  /** The multiplicative cut on a 429. */
  readonly beta: number;
  /**
   * A later 429's rate (the curve's plateau) is what the provider answered lately, but at least
   * this share of the pace: a provider that refuses at random answers a share of any pace, and
   * must not drive it to the floor.
   */
  readonly keep: number;
  /** The cubic curve's scale (calls/s per s^3). */
  readonly cubicScale: number;
  /** The floor under the pace, calls per second. */
  readonly minPerSecond: number;
  /** The window the provider's answered rate is measured over, for a cut. */
  readonly measureMs: number;
  /** The pace grows to at most this many times the answered rate (or the rate of the last 429). */
  readonly ceilingFactor: number;
  /** The pace lifts after this long without a 429. */
  readonly liftAfterMs: number;
}

// The AWS SDKs' beta and floor; a gentler curve than their 0.4, so the plateau near the
// provider's rate lasts seconds (a long stretch of answered calls between 429s).
export const ADAPTIVE_PACE: AdaptivePacePolicy = {
  beta: 0.7,
  keep: 0.92,
  cubicScale: 0.1,
  minPerSecond: 0.5,
  measureMs: 2_000,
  ceilingFactor: 2,
  liftAfterMs: 60_000,
};

export class AdaptivePace {
  private enabled = false;
  private rate = Number.POSITIVE_INFINITY;
  /** The rate of the last 429 (CUBIC's W_max), and when it was cut. */
  private lastMax = 0;
  private cutAt = Number.NEGATIVE_INFINITY;
  /** The curve is timed from the end of the hold: a long Retry-After is no time spent sending. */
  private curveFrom = 0;
  private tokens = 1;
  private tokensAt = 0;
  /** When calls were sent and answered, within the measuring window, and when the first call went out. */
  private readonly sent: number[] = [];
  private readonly answers: number[] = [];
  private firstAt: number | undefined;

  constructor(private readonly policy: AdaptivePacePolicy = ADAPTIVE_PACE) {}

  /** Calls per second it paces to; Infinity while off. */
  perSecond(): number {
    return this.enabled ? this.rate : Number.POSITIVE_INFINITY;
  }

  /** Ms until a call may start (0: now). */
  waitMs(now: number): number {
    if (!this.enabled) return 0;
    this.refill(now);
    return this.tokens >= 1 ? 0 : Math.max(1, Math.ceil(((1 - this.tokens) / this.rate) * 1000));
  }

  /** A call starts now: it takes the bucket's token. */
  started(now: number): void {
    this.firstAt ??= now;
    this.sent.push(now);
    this.forget(now);
    if (!this.enabled) return;
    this.refill(now);
    this.tokens -= 1;
  }

  /** The provider refused a call sent at `sentAt` with a 429; calls resume at `resumesAt` (the hold's end). */
  throttled(now: number, sentAt: number, resumesAt = now): void {
    if (sentAt < this.cutAt) return; // sent at the old rate: this spell was cut already
    const { beta, minPerSecond } = this.policy;
    this.lastMax = Math.max(
      minPerSecond,
      this.enabled
        ? Math.min(this.rate, Math.max(this.answeredPerSecond(now), this.rate * this.policy.keep))
        : this.sentPerSecond(now),
    );
    this.rate = Math.max(minPerSecond, this.lastMax * beta);
    this.cutAt = now;
    this.curveFrom = Math.max(now, resumesAt);
    this.enabled = true;
    this.tokens = Math.min(this.tokens, 0);
    this.tokensAt = now;
  }

  /** A call was answered: the pace grows along the cubic curve from the last cut. */
  answered(now: number): void {
    this.answers.push(now);
    this.forget(now);
    if (!this.enabled) return;
    const { beta, cubicScale, minPerSecond, ceilingFactor, liftAfterMs } = this.policy;
    this.refill(now);
    if (now - this.cutAt >= liftAfterMs) {
      this.enabled = false;
      this.rate = Number.POSITIVE_INFINITY;
      this.tokens = 1;
      return;
    }
    const k = Math.cbrt((this.lastMax * (1 - beta)) / cubicScale);
    const t = Math.max(0, now - this.curveFrom) / 1000;
    const grown = Math.min(
      Math.max(this.lastMax, this.answeredPerSecond(now)) * ceilingFactor,
      cubicScale * (t - k) ** 3 + this.lastMax,
    );
    this.rate = Math.max(minPerSecond, this.rate, grown);
  }

  /** Calls answered per second over the measuring window (or since the first call, if sooner). */
  private answeredPerSecond(now: number): number {
    this.forget(now);
    return (this.answers.length / this.window(now)) * 1000;
  }

  /** Calls sent per second over the measuring window (or since the first call, if sooner). */
  private sentPerSecond(now: number): number {
    this.forget(now);
    return (this.sent.length / Math.max(this.policy.measureMs / 8, this.window(now))) * 1000;
  }

  private window(now: number): number {
    return Math.max(1, Math.min(this.policy.measureMs, now - (this.firstAt ?? now)));
  }

  private forget(now: number): void {
    for (const times of [this.sent, this.answers])
      while (times.length > 0 && times[0]! < now - this.policy.measureMs) times.shift();
  }

  private refill(now: number): void {
    this.tokens = Math.min(1, this.tokens + ((now - this.tokensAt) / 1000) * this.rate);
    this.tokensAt = now;
  }
}

// A pace from the provider's own rate-limit headers (OpenAI's x-ratelimit-*-requests, Anthropic's
// anthropic-ratelimit-requests-*): while few requests remain in its window, the gate keeps a
// mirror of the provider's bucket (what remained at the last answer, less the calls in the air,
// refilled at the limit per minute) and starts a call only with a request left in it. With room
// in the window it is unpaced.
import type { RateLimits } from "./provider-errors.ts";

/** Pace once no more than this many calls' worth (times the cap) remain in the provider's window. */
const LOW_REMAINING_PER_SLOT = 2;

export class HeaderPace {
  private rate = Number.POSITIVE_INFINITY;
  // The mirror of the provider's bucket while paced: requests left at `leftAt`, and the most it
  // was seen to hold (its burst).
  private left = 0;
  private leftAt = 0;
  private burst = 1;
  /** Whether the provider ever announced its limits (then 429s teach nothing the headers do not). */
  announced = false;

  constructor(private readonly concurrency: number) {}

  /** Calls per second it paces to; Infinity while the provider's window has room. */
  perSecond(): number {
    return this.rate;
  }

  /** Ms until a call may start; 0 takes a request from the mirror now. */
  take(now: number): number {
    if (!Number.isFinite(this.rate)) return 0;
    const left = Math.min(this.burst, this.left + ((now - this.leftAt) / 1000) * this.rate);
    if (left < 1) return Math.max(1, Math.ceil(((1 - left) / this.rate) * 1000));
    this.left = left - 1;
    this.leftAt = now;
    return 0;
  }

  /** Paces to the provider's limit per minute while its window runs low; unpaced while it has room. */
  announce(limits: RateLimits, inFlight: number, now: number): void {
    this.announced = true;
    const low = limits.remaining <= this.concurrency * LOW_REMAINING_PER_SLOT;
    if (!low) {
      this.rate = Number.POSITIVE_INFINITY;
      return;
    }
    this.rate = limits.limit / 60;
    this.burst = Math.max(
      1,
      Math.min(this.concurrency * LOW_REMAINING_PER_SLOT, Math.max(this.burst, limits.remaining)),
    );
    // What the provider had left when it answered, less what is in the air since (each will take one).
    this.left = Math.max(0, limits.remaining - inFlight);
    this.leftAt = now;
  }
}

// One pacer per provider for the whole process (it was called the gate): every model call passes
// through it.
//   - a concurrency cap (CROWS_MODEL_CONCURRENCY): at most that many calls in the air;
//   - a queue fair across lanes (a lane is a list, or a nest): the next free slot goes to the
//     lane after the one served last, so a 2-item list posted behind a 50-item one is not held
//     to the end;
//   - a pace from the provider's own rate-limit headers (header-pace.ts: a mirror of its bucket
//     while few requests remain in its window), so the flock uses what the provider allows
//     without hammering it;
//   - a hold on every 429: the whole gate (every queued call, not only the flight that got it)
//     waits out its Retry-After (or, with none, the first backoff), so the other calls do not each
//     hit the limit too;
//   - for a provider that announces no limit, a pace learnt from its 429s (adaptive-pace.ts: the
//     AWS SDKs' adaptive token bucket, cut on a 429 and grown back cubically on success), under
//     the cap, so the steady state sits just under the provider's rate;
//   - a circuit: after `circuitFailures` weather failures in a row it opens; calls wait instead
//     of hammering the provider; after a cooldown one trial call goes out, and its success closes
//     the circuit (its failure reopens it for longer). An outage of any length costs a handful
//     of calls.
// The cap is per process: with several instances the provider sees up to instances x cap.
import type { RetryPolicy, WaitNotice } from "./retry-policy.ts";
import { ModelCallError, ProviderUnavailableError, type RateLimits, type TroubleKind } from "./provider-errors.ts";
import { AdaptivePace } from "./adaptive-pace.ts";
import { HeaderPace } from "./header-pace.ts";

export interface ProviderPacerOptions {
  concurrency: number;
  /** Weather failures in a row that open the circuit. */
  circuitFailures: number;
  /** The backoff that spaces trial calls while the circuit stays open. */
  policy: Pick<RetryPolicy, "initialIntervalMs" | "backoffCoefficient" | "maximumIntervalMs">;
  now?: () => number;
}

export type CircuitState = "closed" | "open" | "half-open";

export interface ProviderPacerStats {
  inFlight: number;
  queued: number;
  /** Queued calls that wait on the circuit rather than on a free slot. */
  heldByCircuit: number;
  circuit: CircuitState;
  /** Calls per second the gate paces to; Infinity while the provider's window has room. */
  rate: number;
}

export type CallOutcome = "ok" | TroubleKind;

export interface TicketRelease {
  outcome: CallOutcome;
  status?: number;
  retryAfterMs?: number;
  /** The provider's announced request limit, read from this answer's headers. */
  limits?: RateLimits;
}

export interface Ticket {
  release(result: TicketRelease): void;
}

export interface AcquireOptions {
  signal?: AbortSignal;
  /** The flight's patience deadline, begun (and stored) the first time the circuit holds it. */
  patience?: (now: number) => Promise<number>;
  /** Told when the circuit holds this call, with when the next trial goes out. */
  waiting?: (notice: WaitNotice) => void;
  /** Refuse at once instead of waiting on an open circuit (the classifier fails closed to "unsure"). */
  failFast?: boolean;
}

interface Waiter {
  lane: string;
  resolve: (ticket: Ticket) => void;
  reject: (error: Error) => void;
  options: AcquireOptions;
  queuedAt: number;
  deadline?: number;
  asking?: boolean;
}

export interface GateListener {
  /** A call finished, with how it went. */
  called?(outcome: CallOutcome): void;
  circuit?(state: CircuitState): void;
}

export class ProviderPacer {
  private inFlight = 0;
  // Lane -> its waiters, in arrival order. A Map iterates in insertion order: the lane served is
  // deleted and re-inserted at the end, which is the round robin.
  private readonly lanes = new Map<string, Waiter[]>();
  private circuit: CircuitState = "closed";
  private openUntil = 0;
  private opens = 0;
  private consecutive = 0;
  private lastTrouble = "";
  private trialOut = false;
  // Until when a 429 holds every call; the header pace, and the pace learnt from 429s (off once
  // the provider announces its limits).
  private heldUntil = 0;
  private readonly headers: HeaderPace;
  private readonly adaptive = new AdaptivePace();
  private timer: NodeJS.Timeout | undefined;
  private readonly listeners: GateListener[] = [];
  private readonly now: () => number;

  constructor(
    readonly name: string,
    private readonly options: ProviderPacerOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.headers = new HeaderPace(options.concurrency);
  }

  listen(listener: GateListener): void {
    this.listeners.push(listener);
  }

  stats(): ProviderPacerStats {
    let queued = 0;
    for (const waiters of this.lanes.values()) queued += waiters.length;
    return {
      inFlight: this.inFlight,
      queued,
      heldByCircuit: this.circuit === "closed" ? 0 : queued,
      circuit: this.circuit,
      rate: Math.min(this.headers.perSecond(), this.adaptive.perSecond()),
    };
  }

  /** Waits for a slot in `lane`'s turn; rejects on abort, or when the patience ends behind an open circuit. */
  acquire(lane: string, options: AcquireOptions = {}): Promise<Ticket> {
    if (options.signal?.aborted) return Promise.reject(new ModelCallError("model call aborted", "aborted"));
    return new Promise<Ticket>((resolve, reject) => {
      const onAbort = () => {
        if (this.remove(waiter)) reject(new ModelCallError("model call aborted", "aborted"));
      };
      const settle = () => options.signal?.removeEventListener("abort", onAbort);
      const waiter: Waiter = {
        lane,
        resolve: (ticket) => {
          settle();
          resolve(ticket);
        },
        reject: (error) => {
          settle();
          reject(error);
        },
        options,
        queuedAt: this.now(),
      };
      const queue = this.lanes.get(lane);
      if (queue) queue.push(waiter);
      else this.lanes.set(lane, [waiter]);
      options.signal?.addEventListener("abort", onAbort, { once: true });
      this.pump();
    });
  }

  private remove(waiter: Waiter): boolean {
    const queue = this.lanes.get(waiter.lane);
    const at = queue?.indexOf(waiter) ?? -1;
    if (!queue || at < 0) return false;
    queue.splice(at, 1);
    if (queue.length === 0) this.lanes.delete(waiter.lane);
    // Nobody left to wake: a pending wake-up must not keep a stopping process alive.
    if (this.lanes.size === 0) clearTimeout(this.timer);
    return true;
  }

  private next(): Waiter | undefined {
    for (const [lane, queue] of this.lanes) {
      const waiter = queue.shift()!;
      this.lanes.delete(lane);
      if (queue.length > 0) this.lanes.set(lane, queue); // to the back of the round
      return waiter;
    }
    return undefined;
  }

  private pump(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    while (this.lanes.size > 0) {
      const now = this.now();
      if (this.circuit === "open") {
        if (now < this.openUntil) {
          this.holdAll(now, this.openUntil);
          return;
        }
        this.setCircuit("half-open");
        this.trialOut = false;
      }
      if (now < this.heldUntil) {
        this.hold(now);
        return;
      }
      if (this.circuit === "half-open") {
        if (this.trialOut || this.inFlight > 0) {
          this.holdAll(now, undefined);
          return;
        }
        this.trialOut = true;
        this.admit(this.next()!, now, true);
        continue;
      }
      if (this.inFlight >= this.options.concurrency) return;
      const paced = this.adaptive.waitMs(now);
      if (paced > 0) {
        this.wake(paced);
        return;
      }
      const announced = this.headers.take(now);
      if (announced > 0) {
        this.wake(announced);
        return;
      }
      this.admit(this.next()!, now, false);
    }
  }

  /** Every queued call waits out a 429's hold; a fail-fast one is refused instead (the classifier answers "unsure"). */
  private hold(now: number): void {
    for (const queue of this.lanes.values()) {
      for (const waiter of queue.filter((w) => w.options.failFast)) {
        this.remove(waiter);
        waiter.reject(new ModelCallError("rate limited: HTTP 429", "weather"));
      }
    }
    if (this.lanes.size > 0) this.wake(this.heldUntil - now);
  }

  /** Every queued call waits on the circuit: each begins its patience, and expires at its end. */
  private holdAll(now: number, retryAt: number | undefined): void {
    let soonest = retryAt ?? Number.POSITIVE_INFINITY;
    for (const queue of this.lanes.values()) {
      for (const waiter of [...queue]) {
        if (waiter.options.failFast) {
          this.remove(waiter);
          waiter.reject(new ModelCallError(`circuit open: ${this.lastTrouble}`, "weather"));
          continue;
        }
        if (waiter.deadline !== undefined && now >= waiter.deadline) {
          this.remove(waiter);
          waiter.reject(new ProviderUnavailableError(now - waiter.queuedAt, this.lastTrouble || "the circuit is open"));
          continue;
        }
        if (waiter.deadline === undefined && !waiter.asking && waiter.options.patience) {
          waiter.asking = true;
          void waiter.options.patience(now).then(
            (deadline) => {
              waiter.deadline = deadline;
              this.pump();
            },
            () => (waiter.asking = false),
          );
        }
        if (waiter.deadline !== undefined) {
          soonest = Math.min(soonest, waiter.deadline);
          waiter.options.waiting?.({
            reason: `circuit open: ${this.lastTrouble}`,
            retryAt: retryAt ?? now,
            deadline: waiter.deadline,
            failures: this.consecutive,
          });
        }
      }
    }
    if (Number.isFinite(soonest)) this.wake(Math.max(1, soonest - now));
  }

  private wake(ms: number): void {
    clearTimeout(this.timer);
    // Not unref'd: a call held by the circuit is work in progress, and keeps the process up.
    this.timer = setTimeout(() => this.pump(), ms);
  }

  private admit(waiter: Waiter, now: number, trial: boolean): void {
    this.inFlight++;
    this.adaptive.started(now);
    let released = false;
    waiter.resolve({
      release: (result) => {
        if (released) return;
        released = true;
        this.inFlight--;
        this.record(result, trial, now);
        for (const listener of this.listeners) listener.called?.(result.outcome);
        this.pump();
      },
    });
  }

  private record(result: TicketRelease, trial: boolean, sentAt: number): void {
    const now = this.now();
    if (result.limits) this.headers.announce(result.limits, this.inFlight, now);
    if (result.status === 429) {
      this.heldUntil = Math.max(this.heldUntil, now + (result.retryAfterMs ?? this.options.policy.initialIntervalMs));
      if (!this.headers.announced) this.adaptive.throttled(now, sentAt, this.heldUntil);
    }
    if (result.outcome === "ok") this.adaptive.answered(now);
    if (result.outcome === "ok" || result.outcome === "answer") {
      this.consecutive = 0;
      if (trial || this.circuit !== "closed") {
        this.opens = 0;
        this.setCircuit("closed");
      }
      return;
    }
    if (result.outcome === "aborted" || result.outcome === "config" || result.outcome === "unavailable") {
      if (trial) this.trialOut = false;
      return;
    }
    // Weather or a timeout.
    this.consecutive++;
    this.lastTrouble = result.status
      ? `HTTP ${result.status}`
      : result.outcome === "timeout"
        ? "timed out"
        : "unreachable";
    if (trial || this.consecutive >= this.options.circuitFailures) {
      const { initialIntervalMs, backoffCoefficient, maximumIntervalMs } = this.options.policy;
      const cooldown = Math.min(maximumIntervalMs, initialIntervalMs * backoffCoefficient ** this.opens);
      this.opens++;
      this.openUntil = now + Math.max(cooldown, result.retryAfterMs ?? 0);
      this.setCircuit("open");
    }
  }

  private setCircuit(state: CircuitState): void {
    if (this.circuit === state) return;
    this.circuit = state;
    for (const listener of this.listeners) listener.circuit?.(state);
  }
}

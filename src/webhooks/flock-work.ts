// Whether the flock is working now, and for how long without a rest: the server notes every append
// (the flock's work, fanning out or not), and the sender looks before each send (sender.ts
// "yieldToFlock"). In shared memory, so the sender's thread reads it without a message and the
// server pays two stores per append. Plain stores, read as a hint: a torn read only moves one send.

/** The flock counts as working while it appended within this long; a pause this long is a rest. */
export const FLOCK_QUIET_MS = 20;

export class FlockWork {
  /** [epoch ms of the last append, epoch ms the current stretch of work began] */
  private readonly times: Float64Array;

  constructor(readonly buffer: SharedArrayBuffer = new SharedArrayBuffer(16)) {
    this.times = new Float64Array(buffer, 0, 2);
  }

  /** The server's side: the flock appended an event at `now`. */
  worked(now: number): void {
    if (now - this.times[0]! >= FLOCK_QUIET_MS) this.times[1] = now; // after a rest, a new stretch
    this.times[0] = now;
  }

  /** How long the flock has rested (Infinity: it never worked here), and how long it has worked without a rest. */
  seen(now: number): { restingMs: number; workingMs: number } {
    const last = this.times[0]!;
    if (last === 0) return { restingMs: Number.POSITIVE_INFINITY, workingMs: 0 };
    return { restingMs: now - last, workingMs: now - this.times[1]! };
  }
}

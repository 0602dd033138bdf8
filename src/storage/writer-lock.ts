// SQLite has one write lock per database file, and two threads of one server write the file: the
// server's own (through its write-connection lock, write-connection-lock.ts) and the webhook sender's (src/webhooks/sender-thread.ts,
// on its own connection); the WAL checkpoint thread (checkpointer.ts) takes the word too, for a
// copy no write may run beside. Left to SQLite, a writer that finds the lock taken sleeps in its busy
// handler, a millisecond at least, and on the server's thread that sleep stops the whole event
// loop. This word in shared memory is taken before either thread begins a write transaction, so
// neither meets SQLite's lock held by the other, and neither waiting blocks its thread: the server
// waits with Atomics.waitAsync, the sender tries again each millisecond. The sender holds it only inside one synchronous transaction (microseconds,
// no fsync: its connection commits with synchronous=NORMAL).
// Prisma's own autocommit writes outside a transaction do not take it; they are management writes
// (an endpoint added, a token made), rare, and at worst wait out one short sender transaction.

const FREE = 0;
/** The longest one wait lasts before the lock is looked at again. */
const WAIT_MS = 50;
export type LockHolder = 1 | 2 | 3;
export const SERVER_THREAD: LockHolder = 1;
export const SENDER_THREAD: LockHolder = 2;
/** The WAL checkpoint thread (checkpoint-thread.mjs, plain JavaScript: it asks for the next turn in word 2, takes the word, and frees it as release does). */
export const CHECKPOINT_THREAD: LockHolder = 3;

type WaitAsync = (
  array: Int32Array,
  index: number,
  value: number,
  timeoutMs?: number,
) => { async: false; value: string } | { async: true; value: Promise<string> };
const waitAsync = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync;

export class WriterLock {
  private readonly word: Int32Array;
  /** What the server's thread waited for the lock in all, in ms: written by that thread only. */
  private readonly waited: Float64Array;

  /** A new lock, or (in the sender's thread) the one the server made, from its buffer. */
  /**
   * Word 0: the holder (0 free); word 1: how many wait, so a release with none waiting makes no
   * system call; word 2: a thread that asked for the next turn (0 none): the server's next take
   * lets it go first, for at most WAIT_MS (the checkpoint thread asks, for a short step the
   * server's back-to-back writes would otherwise never leave a gap for); bytes 16-23: the server's
   * total wait (how much the other threads' writes cost the flock).
   */
  constructor(readonly buffer: SharedArrayBuffer = new SharedArrayBuffer(24)) {
    this.word = new Int32Array(buffer, 0, 3);
    this.waited = new Float64Array(buffer, 16, 1);
  }

  /** How long the server's thread has waited for the lock since it was made, in ms. */
  get serverWaitMs(): number {
    return this.waited[0]!;
  }

  /** Takes the lock for `holder`; waits without blocking the thread while the other holds it. */
  async take(holder: LockHolder): Promise<void> {
    let since: number | undefined;
    const asked = Atomics.load(this.word, 2);
    if (asked !== 0 && asked !== holder) {
      since = performance.now();
      await this.waitFor(2, asked);
    }
    for (;;) {
      const seen = Atomics.compareExchange(this.word, 0, FREE, holder);
      if (seen === FREE) {
        if (since !== undefined) this.waited[0]! += performance.now() - since;
        return;
      }
      since ??= performance.now();
      Atomics.add(this.word, 1, 1);
      try {
        await this.waitFor(0, seen);
      } finally {
        Atomics.sub(this.word, 1, 1);
      }
    }
  }

  /** Waits, without blocking the thread, for word `index` to change from `value` (at most WAIT_MS). */
  private async waitFor(index: number, value: number): Promise<void> {
    // A pending waitAsync does not keep Node's event loop alive: a timer does, while it waits
    // (else a process with nothing else to do could exit mid-wait). The wait is bounded too.
    const keepAlive = setTimeout(() => {}, WAIT_MS);
    try {
      const wait = waitAsync(this.word, index, value, WAIT_MS);
      if (wait.async) await wait.value;
    } finally {
      clearTimeout(keepAlive);
    }
  }

  /** Frees the lock if `holder` still has it: its thread ended (a terminated thread cannot release it). */
  releaseIfHeldBy(holder: LockHolder): void {
    if (Atomics.compareExchange(this.word, 0, holder, FREE) === holder) Atomics.notify(this.word, 0);
    if (Atomics.compareExchange(this.word, 2, holder, 0) === holder) Atomics.notify(this.word, 2);
  }

  /**
   * Takes the lock for the sender's thread, trying again each millisecond while the server holds
   * it: the server's releases then never need to wake another thread, and the sender, which is never
   * in a hurry by a millisecond, yields to the flock in a busy spell.
   */
  async takeWhenFree(holder: LockHolder): Promise<void> {
    while (Atomics.compareExchange(this.word, 0, FREE, holder) !== FREE)
      await new Promise((resolve) => setTimeout(resolve, 1));
  }

  release(): void {
    Atomics.store(this.word, 0, FREE);
    // A waiter counts itself before it waits, and its wait returns at once if the holder changed meanwhile.
    if (Atomics.load(this.word, 1) > 0) Atomics.notify(this.word, 0);
  }
}

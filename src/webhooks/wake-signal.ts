// When the server tells the sender thread that something may be due. A message per appended event
// would cost a thread wake-up per event (under load the scheduler runs the woken thread at once, on
// the flock's core); instead the server counts appends in shared memory and sends a wake only while
// the thread listens, that is, once its last sweep ended with nothing queued. The thread, when it
// starts listening, looks at the count once more: an append that came in meanwhile is swept at once.
const APPENDED = 0;
const LISTENING = 1;

export class WakeSignal {
  private readonly words: Int32Array;
  private seen = 0;

  constructor(readonly buffer: SharedArrayBuffer = new SharedArrayBuffer(8)) {
    this.words = new Int32Array(buffer);
  }

  /** Server side: counts an append; true when the thread listens and must be sent a wake. */
  appended(): boolean {
    Atomics.add(this.words, APPENDED, 1);
    return Atomics.compareExchange(this.words, LISTENING, 1, 0) === 1;
  }

  /** Thread side: a sweep starts now; what it will see includes every append counted so far. */
  sweeping(): void {
    Atomics.store(this.words, LISTENING, 0);
    this.seen = Atomics.load(this.words, APPENDED);
  }

  /** Thread side: the sweeps are done. True when an append came in since the last one began: sweep again. */
  listen(): boolean {
    Atomics.store(this.words, LISTENING, 1);
    if (Atomics.load(this.words, APPENDED) === this.seen) return false;
    return Atomics.compareExchange(this.words, LISTENING, 1, 0) === 1;
  }
}

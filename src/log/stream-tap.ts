// One follower per stream, shared by every live reader of it: a single bus listener that hands each
// committed event, in seq order with no gap and no duplicate, to every listener (docs/architecture.md
// "One follower per stream for compat SSE"). Listeners are called synchronously, so a reader that
// compares its own cursor with `cursor` and joins in the same turn misses nothing.
import type { AppendedEvent, Bus, BusEvent } from "./bus.ts";
import { topicOf } from "./bus.ts";

/** How many announced events the tap holds ahead of its cursor before it reads the log instead. */
const MAX_AHEAD = 1000;
const PAGE = 1000;

export type TapListener = (event: AppendedEvent) => void;

export class StreamTap {
  /** The seq of the last event handed to listeners; undefined until the tap knows the stream's end. */
  cursor: number | undefined;
  private readonly listeners = new Set<TapListener>();
  private readonly ahead = new Map<number, AppendedEvent>();
  private filling = false;
  private mustFill = false;
  private stopped = false;
  /** Resolves once `cursor` is known. */
  readonly ready: Promise<void>;

  constructor(
    private readonly bus: Bus,
    readonly stream: string,
    private readonly read: (afterSeq: number, limit: number) => Promise<AppendedEvent[]>,
    lastSeq: () => Promise<number>,
    private readonly onError: (error: unknown) => void,
  ) {
    // Listen first, then learn the end: whatever is appended in between is in `ahead` or the log.
    bus.addEventListener(topicOf(stream), this.onBus);
    this.ready = lastSeq().then((last) => {
      this.cursor = last;
      this.deliverAhead();
      if (this.ahead.size > 0 || this.mustFill) void this.fill();
    });
    this.ready.catch(onError);
  }

  get size(): number {
    return this.listeners.size;
  }

  add(listener: TapListener): void {
    this.listeners.add(listener);
  }

  delete(listener: TapListener): void {
    this.listeners.delete(listener);
  }

  stop(): void {
    this.stopped = true;
    this.bus.removeEventListener(topicOf(this.stream), this.onBus);
    this.ahead.clear();
  }

  private readonly onBus = (message: BusEvent) => {
    const event = message.detail;
    if (event.seq === 0) {
      // A nudge: something may have been missed; the log knows.
      this.mustFill = true;
      if (this.cursor !== undefined) void this.fill();
      return;
    }
    if (this.cursor === undefined) {
      if (this.ahead.size < MAX_AHEAD) this.ahead.set(event.seq, event);
      else this.mustFill = true;
      return;
    }
    if (event.seq <= this.cursor) return;
    if (event.seq === this.cursor + 1 && !this.filling) {
      this.deliver(event);
      this.deliverAhead();
      return;
    }
    if (this.ahead.size < MAX_AHEAD) this.ahead.set(event.seq, event);
    else this.mustFill = true;
    void this.fill(); // announced past a gap: the log has what is in between
  };

  private deliver(event: AppendedEvent): void {
    this.cursor = event.seq;
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (error) {
        this.onError(error);
      }
    }
  }

  private deliverAhead(): void {
    if (this.cursor === undefined) return;
    for (const seq of this.ahead.keys()) if (seq <= this.cursor) this.ahead.delete(seq);
    let next: AppendedEvent | undefined;
    while ((next = this.ahead.get(this.cursor + 1)) !== undefined) {
      this.ahead.delete(next.seq);
      this.deliver(next);
    }
  }

  private async fill(): Promise<void> {
    if (this.filling || this.stopped || this.cursor === undefined) return;
    this.filling = true;
    try {
      for (;;) {
        this.mustFill = false;
        const batch = await this.read(this.cursor, PAGE);
        if (this.stopped) return;
        for (const event of batch) if (event.seq === this.cursor + 1) this.deliver(event);
        this.deliverAhead();
        const gap = [...this.ahead.keys()].some((seq) => seq > this.cursor! + 1);
        if (batch.length < PAGE && !this.mustFill && !gap) return;
        if (batch.length === 0 && !this.mustFill) return; // announced but not yet visible: the next signal retries
      }
    } catch (error) {
      this.onError(error);
    } finally {
      this.filling = false;
    }
  }
}

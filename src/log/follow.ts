// Following the log: every event of a stream (or of some names) after a cursor, first what the log
// holds, then live ones from the bus, with no gap and no duplicate (docs/architecture.md "One
// durable log"). The listener is attached before the log is read, so nothing appended in between is
// lost; a live event that skips ahead makes the reader fill from the log.
import type { AppendedEvent, Bus, BusEvent } from "./bus.ts";

/** How many announced events a follower holds ahead of its reader before it reads the log instead. */
const MAX_AHEAD = 1000;

/** A page generator read one event at a time; returning it returns the pages. */
export async function* flatten<T>(pages: AsyncGenerator<T[]>): AsyncGenerator<T> {
  for await (const page of pages) for (const item of page) yield item;
}

export interface Tail {
  bus: Bus;
  /** The bus topics whose events this follower takes. */
  topics: readonly string[];
  /** The cursor to start after (a seq, or a global id). */
  start: number;
  /** Up to 1,000 events after `cursor` from the log. */
  readAfter: (cursor: number) => Promise<AppendedEvent[]>;
  cursorOf: (event: AppendedEvent) => number;
  /** Where the follower registers its `end`, so the log's close() ends it. */
  closers: Set<() => void>;
  closed: () => boolean;
  signal?: AbortSignal;
}

/** The log's events after `start`, a page at a time: each page one read, or the live events in hand. */
export async function* tail({
  bus,
  topics,
  start,
  readAfter,
  cursorOf,
  closers,
  closed,
  signal,
}: Tail): AsyncGenerator<AppendedEvent[]> {
  if (closed() || signal?.aborted) return;
  let wake: (() => void) | undefined;
  let latestSeen = 0;
  let ended = false;
  // Announced events ahead of the reader. The bus carries the committed event itself, so the next
  // one in order is handed on without a read; a gap, a nudge or an overflow falls back to the log.
  const ahead = new Map<number, AppendedEvent>();
  let mustRead = true;
  const onEvent = (event: BusEvent) => {
    const cursor = cursorOf(event.detail);
    if (cursor === 0)
      mustRead = true; // a nudge: something may have been missed
    else if (ahead.size < MAX_AHEAD) ahead.set(cursor, event.detail);
    else mustRead = true;
    latestSeen = Math.max(latestSeen, cursor);
    wake?.();
  };
  const end = () => {
    ended = true;
    wake?.();
  };
  for (const topic of topics) bus.addEventListener(topic, onEvent);
  closers.add(end);
  signal?.addEventListener("abort", end, { once: true });
  let delivered = start;
  try {
    while (!ended) {
      if (mustRead) {
        mustRead = false;
        const batch = await readAfter(delivered);
        if (ended) return;
        if (batch.length > 0) {
          delivered = cursorOf(batch[batch.length - 1]!);
          yield batch;
        }
        if (batch.length === 1000) mustRead = true; // more waiting in the log
      }
      for (const cursor of ahead.keys()) if (cursor <= delivered) ahead.delete(cursor);
      const live: AppendedEvent[] = [];
      let next: AppendedEvent | undefined;
      while (!ended && (next = ahead.get(delivered + 1)) !== undefined) {
        ahead.delete(delivered + 1);
        delivered += 1;
        live.push(next);
      }
      if (live.length > 0) yield live;
      if (mustRead) continue;
      if (latestSeen > delivered) {
        mustRead = true; // announced but not in hand (a gap): the log has it
        continue;
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
        if (ended || mustRead || latestSeen > delivered) resolve();
      });
      wake = undefined;
    }
  } finally {
    for (const topic of topics) bus.removeEventListener(topic, onEvent);
    closers.delete(end);
    signal?.removeEventListener("abort", end);
  }
}

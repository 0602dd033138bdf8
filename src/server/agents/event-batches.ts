// A list's events as the agent doors send them (docs/integrations.md "Updates"): in batches, at most
// one per interval, so a caller gets a progress notification or status update per batch instead of
// one per event (each costs the SDK's whole message pipeline, on both sides). An event the caller
// must act on (an approval asked, the list's end) goes out at once with what came before it.
import type { EventLog, StoredEvent } from "../../log/event-log.ts";

export interface BatchOptions {
  /** The least time between two batches; 0 hands on each page of events as the log gives it. */
  everyMs: number;
  /** An event that ends the wait: its batch goes out as soon as it is in hand. */
  urgent: (event: StoredEvent) => boolean;
  signal?: AbortSignal;
}

const HELD = Symbol("held");

/** Every event of `stream` after `after`, in order and once each, in batches (never an empty one). */
export async function* eventBatches(
  log: EventLog,
  stream: string,
  after: number,
  { everyMs, urgent, signal }: BatchOptions,
): AsyncGenerator<StoredEvent[]> {
  // Its own signal: the pages are stopped when the batches are, even while a read of them waits.
  const stop = new AbortController();
  const abort = () => stop.abort();
  signal?.addEventListener("abort", abort, { once: true });
  if (signal?.aborted) stop.abort();
  const pages = log.followPages(stream, after, stop.signal);
  let next: Promise<IteratorResult<StoredEvent[]>> | undefined;
  let held: StoredEvent[] = [];
  let sentAt = Number.NEGATIVE_INFINITY;
  try {
    for (;;) {
      next ??= pages.next();
      // Nothing held: wait for the log. Something held: wait for the log until the interval is up.
      const got = held.length === 0 ? await next : await within(next, sentAt + everyMs - performance.now());
      if (got !== HELD) {
        next = undefined;
        if (got.done) break;
        held.push(...got.value);
        if (!got.value.some(urgent) && performance.now() - sentAt < everyMs) continue;
      }
      const batch = held;
      held = [];
      sentAt = performance.now();
      yield batch;
    }
    // The log's end (a shutdown) sends what is held; the caller's leaving does not.
    if (held.length > 0 && !signal?.aborted) yield held;
  } finally {
    signal?.removeEventListener("abort", abort);
    stop.abort();
    await next?.catch(() => undefined);
    await pages.return(undefined);
  }
}

/** `next` if it settles within `ms`, else HELD. */
function within<T>(next: Promise<T>, ms: number): Promise<T | typeof HELD> {
  if (ms <= 0) return Promise.resolve(HELD);
  let timer: NodeJS.Timeout | undefined;
  const up = new Promise<typeof HELD>((resolve) => (timer = setTimeout(() => resolve(HELD), ms)));
  return Promise.race([next, up]).finally(() => clearTimeout(timer));
}

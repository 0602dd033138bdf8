// Subscriptions read the durable log through a follower whose end is tied to the subscription's:
// graphql-js calls return() when the client goes away, and aborting wakes a follower parked waiting
// for the next live event (a plain async-generator wrapper would queue that return() until another
// event arrived, leaking the follower while the stream is idle).
import type { StoredEvent } from "../src/log/event-log.ts";

// `map` (optional) reshapes or filters the events; aborting ends the follower, which ends the map.
export function abortableFollow<T = StoredEvent>(
  start: (signal: AbortSignal) => AsyncGenerator<StoredEvent>,
  map?: (events: AsyncGenerator<StoredEvent>) => AsyncGenerator<T>,
): AsyncIterableIterator<T> {
  const abort = new AbortController();
  const followed = breathing(start(abort.signal));
  const inner = (map ? map(followed) : followed) as AsyncGenerator<T>;
  const iterator: AsyncIterableIterator<T> = {
    next: () => inner.next(),
    return: (value?: unknown) => {
      abort.abort();
      return inner.return(value as undefined);
    },
    throw: (error?: unknown) => {
      abort.abort();
      return inner.throw(error);
    },
    [Symbol.asyncIterator]: () => iterator,
  };
  return iterator;
}

/** A refusal delivered in-band: one errored result, then the stream completes. */
export async function* refusal(error: unknown): AsyncGenerator<Error> {
  yield error as Error;
}

/** Events handed on before a follower lets the event loop turn. */
const EVENTS_PER_TURN = 100;

/**
 * A replay is read from the log a page at a time and every event of a page is already in hand, so
 * without a pause graphql-js executes the whole replay in one run of microtasks: the client sees
 * nothing until all of it is done (~300 ms for 10,000 events, bench/replay.ts) and every other connection waits as
 * long. Turning the event loop every EVENTS_PER_TURN events lets the first frames go out at once.
 */
async function* breathing(events: AsyncGenerator<StoredEvent>): AsyncGenerator<StoredEvent> {
  let sinceTurn = 0;
  try {
    for (;;) {
      const next = await events.next();
      if (next.done) return;
      yield next.value;
      if (++sinceTurn >= EVENTS_PER_TURN) {
        sinceTurn = 0;
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    }
  } finally {
    await events.return(undefined);
  }
}

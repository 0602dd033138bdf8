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
  const followed = start(abort.signal);
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

// Subscriptions read the durable log through a follower whose end is tied to the subscription's:
// graphql-js calls return() when the client goes away, and aborting wakes a follower parked waiting
// for the next live event (a plain async-generator wrapper would queue that return() until another
// event arrived, leaking the follower while the stream is idle).
import type { StoredEvent } from "../src/log/event-log.ts";

export function abortableFollow(start: (signal: AbortSignal) => AsyncGenerator<StoredEvent>): AsyncIterableIterator<StoredEvent> {
  const abort = new AbortController();
  const inner = start(abort.signal);
  const iterator: AsyncIterableIterator<StoredEvent> = {
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

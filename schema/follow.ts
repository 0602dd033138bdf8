// Subscriptions read the durable log through a follower whose end is tied to the subscription's:
// graphql-js calls return() when the client goes away, and aborting wakes a follower parked waiting
// for the next live event (a plain async-generator wrapper would queue that return() until another
// event arrived, leaking the follower while the stream is idle).
import type { StoredEvent } from "../src/log/event-log.ts";
import { resumePoint, type CursorStream } from "../src/log/cursor.ts";
import { BadInputError } from "../src/errors.ts";
import type { App } from "../src/app.ts";

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

/**
 * Where a subscription resumes, by the one rule every stream follows (src/log/cursor.ts): a cursor
 * the stream never sent (negative, malformed, past its end) is bad input naming its last id. Thrown
 * from `subscribe`, it refuses the subscription before any stream opens: a coded 4xx on both SSE
 * transports.
 */
export async function resumeAfter(after: number | string | null | undefined, stream: CursorStream): Promise<number> {
  const cursor = await resumePoint(after === null || after === undefined ? after : String(after), stream, "after");
  if (typeof cursor !== "number") throw new BadInputError(cursor.refused);
  return cursor;
}

/** The end of a stream read by name across the log (followNamed): the last global id among `names`. */
export function lastIdNamed(app: App, names: string | readonly string[]): Promise<number> {
  // Through the log: committed rows only (never a write connection holding an open transaction).
  return app.log.lastNamedId(typeof names === "string" ? [names] : names);
}

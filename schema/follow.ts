// Subscriptions read the durable log through a follower whose end is tied to the subscription's:
// graphql-js calls return() when the client goes away, and aborting wakes a follower parked waiting
// for the next live event (a plain async-generator wrapper would queue that return() until another
// event arrived, leaking the follower while the stream is idle).
import type { StoredEvent } from "../src/log/event-log.ts";
import { resumePoint, type CursorStream } from "../src/log/cursor.ts";
import { BadInputError } from "../src/base/errors.ts";
import type { App } from "../src/app.ts";

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

/** An event follower that can also hand on everything it has in hand at once. */
export interface PagedFollower extends AsyncIterableIterator<StoredEvent> {
  /** The events read but not yet handed on, or the next page (src/server/graphql/projection/ writes a page at once). */
  nextPage(): Promise<IteratorResult<StoredEvent[], undefined>>;
}

/**
 * abortableFollow over a page follower (EventLog.followPages): graphql-js reads it one event at a
 * time with `next()`, a page writer with `nextPage()`. Both turn the event loop between pages as
 * `breathing` does, so a long replay does not hold up every other connection.
 */
export function pagedFollow(start: (signal: AbortSignal) => AsyncGenerator<StoredEvent[]>): PagedFollower {
  const abort = new AbortController();
  const pages = start(abort.signal);
  let page: StoredEvent[] = [];
  let at = 0;
  let sinceTurn = 0;
  let done = false;
  const finished = { done: true, value: undefined } as const;
  const fill = async (): Promise<boolean> => {
    if (done) return false;
    const step = await pages.next();
    if (step.done) {
      done = true;
      return false;
    }
    page = step.value;
    at = 0;
    return true;
  };
  const follower: PagedFollower = {
    async next() {
      if (sinceTurn >= EVENTS_PER_TURN) {
        sinceTurn = 0;
        await turn();
      }
      if (at >= page.length && !(await fill())) return finished;
      sinceTurn += 1;
      return { done: false, value: page[at++]! };
    },
    async nextPage() {
      if (at >= page.length) {
        if (sinceTurn > 0) {
          sinceTurn = 0;
          await turn();
        }
        if (!(await fill())) return finished;
      }
      const rest = at === 0 ? page : page.slice(at);
      at = page.length;
      sinceTurn += rest.length;
      return { done: false, value: rest };
    },
    async return() {
      done = true;
      abort.abort();
      await pages.return(undefined);
      return finished;
    },
    async throw(error?: unknown) {
      done = true;
      abort.abort();
      await pages.return(undefined);
      throw error;
    },
    [Symbol.asyncIterator]: () => follower,
  };
  return follower;
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

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

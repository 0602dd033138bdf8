// The durable event log: the engine appends, SSE streams and GraphQL subscriptions read and follow
// (follow.ts). An event commits, with any state change that goes with it, before the bus tells
// anyone, so whatever a client sees can be replayed. Three ways to append, and which transaction
// each commits in: docs/architecture.md "One durable log" and "Storage and migrations".
import type { AppendedEvent, Bus, BusEvent } from "./bus.ts";
import { nameTopicOf, topicOf } from "./bus.ts";
import { KeyedLock } from "../base/util/keyed-lock.ts";
import type { DatabaseHandle } from "../storage/db.ts";
import type { EventStore, NewEvent, RenderedPage, RowTemplate, Tx } from "../storage/events/types.ts";
import type { StateReads, StateTx } from "../storage/state-shapes.ts";
import { StreamTap } from "./stream-tap.ts";
import { fencedPrisma, type Fence } from "../storage/fence.ts";
import { flatten, tail } from "./follow.ts";

export type { RenderedPage, RowTemplate, StateReads, StateTx, Tx };
export type StoredEvent = AppendedEvent;

/** An event to append: its name and the payload clients receive. */
export interface EventDraft {
  name: string;
  payload: object;
}

/**
 * The moment an event happened: its payload's own `ts` when it has one (docs/contract.md payloads do), so
 * the log's column and the wire's field are one moment; otherwise now.
 */
function momentOf(payload: object): Date {
  const ts = (payload as { ts?: unknown }).ts;
  if (typeof ts === "string") {
    const date = new Date(ts);
    if (!Number.isNaN(date.getTime())) return date;
  }
  return new Date();
}

function toNew(name: string, payload: object): NewEvent {
  return { name, payload: JSON.stringify(payload), ts: momentOf(payload) };
}

/**
 * Events read across streams by name in global-id order (followNamed: trust changes, the approvals
 * feed, the tool-call feed): their ids must be commit order, which on PostgreSQL takes the
 * commit-order lock.
 */
export const ORDERED_NAMES: ReadonlySet<string> = new Set([
  "trust.changed",
  "item.triaged",
  "item.answered",
  "verdict",
  "tool.asked",
  "tool.decided",
  // The console's reminder feed (schema/reminders.ts) follows it by name.
  "approval.reminder",
]);

export interface EventLogOptions {
  /**
   * Taken in a transaction just before it inserts an ORDERED_NAMES event, held to its commit, so
   * those events' ids are commit order with several writers (storage/db.ts commitOrderLock).
   */
  commitOrderLock?: (tx: Tx) => Promise<void>;
  /** Told of every event this process committed, after the bus (metrics, the server log). */
  onAppended?: (event: StoredEvent) => void;
}

export class EventLog {
  // Appends to one stream are chained so a process never races itself for the next seq.
  private readonly appends = new KeyedLock();
  private readonly closers = new Set<() => void>();
  private readonly prisma: DatabaseHandle["prisma"];
  private readonly store: EventStore;
  private readonly taps = new Map<string, StreamTap>();
  /** Per stream, the commit of its last queued append that carries no state. */
  private readonly queued = new Map<string, Promise<StoredEvent>>();
  private closed = false;

  constructor(
    database: Pick<DatabaseHandle, "prisma" | "events">,
    private readonly bus: Bus,
    private readonly options: EventLogOptions = {},
  ) {
    this.prisma = database.prisma;
    // The log's SQL goes around Prisma for speed (docs/architecture.md says why).
    this.store = database.events;
  }

  /**
   * Appends one event to `stream`, with no state change beside it: it commits in a transaction
   * shared with the other appends of the same moment. The payload is stored as the exact JSON text
   * clients receive.
   */
  append(stream: string, name: string, payload: object): Promise<StoredEvent> {
    // An event that must take the commit-order lock goes through a transaction that can hold it.
    if (this.options.commitOrderLock && ORDERED_NAMES.has(name)) {
      return this.appendWith(stream, async () => [{ name, payload }]).then((stored) => stored[0]!);
    }
    const event = toNew(name, payload);
    // The stream's lock is held only until the event is queued, not until it commits: appends to
    // one stream that arrive together then share a commit too, and the queue keeps their order.
    return new Promise<StoredEvent>((resolve, reject) => {
      this.appends
        .run(stream, async () => {
          const committed = this.store.append(stream, [event]).then((rows) => this.announce(stream, rows)[0]!);
          this.queued.set(stream, committed);
          committed.then(resolve, reject).finally(() => {
            if (this.queued.get(stream) === committed) this.queued.delete(stream);
          });
        })
        .catch(reject);
    });
  }

  /**
   * Runs `build` in a Prisma transaction and appends every event it returns, in order, in that same
   * transaction (none: the state change commits alone): a message and its event, a verdict and the
   * trust changes it causes, commit together or not at all.
   */
  appendWith(stream: string, build: (tx: Tx) => Promise<EventDraft[]>): Promise<StoredEvent[]> {
    return this.appends.run(stream, async () => {
      await this.settleQueued(stream);
      const lock = this.options.commitOrderLock;
      const stored = await this.store.appendWith(this.prisma, stream, async (tx) => {
        const events = await build(tx);
        if (lock && events.some((e) => ORDERED_NAMES.has(e.name))) await lock(tx);
        return events.map((e) => toNew(e.name, e.payload));
      });
      return this.announce(stream, stored);
    });
  }

  /**
   * Like appendWith, for the flock's hot state (src/storage/flock-state.ts): `build` writes
   * through the log's own statements instead of a Prisma transaction, several times cheaper, and
   * the state and the events it returns still commit together or not at all. `build` may run again
   * after a clash with another instance on the stream's seq.
   */
  appendState(stream: string, build: (tx: StateTx) => Promise<EventDraft[]>, fence?: Fence): Promise<StoredEvent[]> {
    return this.appends.run(stream, async () => {
      await this.settleQueued(stream);
      const ordered = this.options.commitOrderLock !== undefined;
      const stored = await this.store.appendState(
        stream,
        async (tx) => {
          const events = await build(tx);
          if (ordered && events.some((e) => ORDERED_NAMES.has(e.name))) await tx.lockCommitOrder();
          return events.map((e) => toNew(e.name, e.payload));
        },
        fence,
      );
      return this.announce(stream, stored);
    });
  }

  /**
   * appendState for a lease holder (a list's owner, an obligation's): the fence (storage/fence.ts)
   * is the transaction's first statement, so the state and events `build` returns commit only
   * while `fence.epoch` is still the leased row's epoch. Refused, it rejects with StaleEpochError
   * and nothing is written. Every write a holder makes on behalf of its lease goes through here or
   * fencedAppendWith (docs/rules.md "One owner's story").
   */
  fencedAppend(stream: string, fence: Fence, build: (tx: StateTx) => Promise<EventDraft[]>): Promise<StoredEvent[]> {
    return this.appendState(stream, build, fence);
  }

  /** appendWith for a lease holder, fenced like fencedAppend (the fence through Prisma). */
  fencedAppendWith(stream: string, fence: Fence, build: (tx: Tx) => Promise<EventDraft[]>): Promise<StoredEvent[]> {
    return this.appendWith(stream, async (tx) => {
      await fencedPrisma(tx, fence);
      return build(tx);
    });
  }

  /**
   * Waits for the stream's queued plain appends to commit, so they keep their place before this
   * one. Their failure is not this append's: it was already handed to their own callers.
   */
  private async settleQueued(stream: string): Promise<void> {
    await this.queued.get(stream)?.catch(() => {});
  }

  /** The flock's hot rows as committed, read around Prisma (src/storage/flock-state.ts). */
  get state(): StateReads {
    return this.store.state;
  }

  /** Resolves once every append already started has settled (used by shutdown). */
  async drain(): Promise<void> {
    while (this.queued.size > 0 || (await this.appends.idle(), this.queued.size > 0)) {
      await Promise.allSettled([...this.queued.values()]);
    }
  }

  /** Tells the bus, after the commit: whatever a client sees can be replayed. */
  private announce(stream: string, stored: StoredEvent[]): StoredEvent[] {
    for (const event of stored) {
      this.bus.dispatchEvent(new CustomEvent(topicOf(stream), { detail: event }) as BusEvent);
      this.bus.dispatchEvent(new CustomEvent(nameTopicOf(event.name), { detail: event }) as BusEvent);
      this.options.onAppended?.(event);
    }
    return stored;
  }

  read(stream: string, afterSeq = 0, limit = 1000): Promise<StoredEvent[]> {
    return this.store.read(stream, afterSeq, limit);
  }

  /** The events `read` would return, laid out by `template` as one block of bytes (a replay page). */
  readRendered(stream: string, afterSeq: number, limit: number, template: RowTemplate): Promise<RenderedPage> {
    return this.store.readRendered(stream, afterSeq, limit, template);
  }

  /**
   * Events named `name` (or any of several names) across every stream, after the log's global id
   * `afterId`, in commit order: SQLite's single writer, and for ORDERED_NAMES on PostgreSQL the
   * commit-order lock.
   */
  readNamed(name: string | readonly string[], afterId = 0, limit = 1000): Promise<StoredEvent[]> {
    return this.store.readNamed(typeof name === "string" ? [name] : name, afterId, limit);
  }

  /** Inside appendWith's `build`: the seq the append's first event will take (a message's n). */
  nextSeqIn(tx: Tx, stream: string): Promise<number> {
    return this.store.nextSeqIn(tx, stream);
  }

  lastSeq(stream: string): Promise<number> {
    return this.store.lastSeq(stream);
  }

  /** The newest committed global id among events named any of `names`: a followNamed cursor. */
  lastNamedId(names: readonly string[]): Promise<number> {
    return this.store.lastNamedId(names);
  }

  /** Every event of `stream` after `afterSeq`, in order, with no gap and no duplicate (follow.ts). */
  follow(stream: string, afterSeq = 0, signal?: AbortSignal): AsyncGenerator<StoredEvent> {
    return flatten(this.followPages(stream, afterSeq, signal));
  }

  /**
   * `follow` a page at a time: each page is what the log returned for one read (up to 1,000
   * events) or the live events in hand, for a reader that writes a page at once (a GraphQL replay).
   */
  followPages(stream: string, afterSeq = 0, signal?: AbortSignal): AsyncGenerator<StoredEvent[]> {
    return this.tail(
      [topicOf(stream)],
      afterSeq,
      (after) => this.read(stream, after),
      (e) => e.seq,
      signal,
    );
  }

  /**
   * Every event named `name`, across streams, after global id `afterId`, then live ones (e.g. all
   * trust.changed), or named any of several names in one ordered stream (the approvals feed).
   * Ordered by the log's id, which is commit order for ORDERED_NAMES (see readNamed).
   */
  followNamed(name: string | readonly string[], afterId = 0, signal?: AbortSignal): AsyncGenerator<StoredEvent> {
    const topics = (typeof name === "string" ? [name] : name).map(nameTopicOf);
    return flatten(
      this.tail(
        topics,
        afterId,
        (after) => this.readNamed(name, after),
        (e) => e.id,
        signal,
      ),
    );
  }

  private tail(
    topics: readonly string[],
    start: number,
    readAfter: (cursor: number) => Promise<StoredEvent[]>,
    cursorOf: (event: StoredEvent) => number,
    signal?: AbortSignal,
  ) {
    return tail({
      bus: this.bus,
      topics,
      start,
      readAfter,
      cursorOf,
      closers: this.closers,
      closed: () => this.closed,
      ...(signal ? { signal } : {}),
    });
  }

  /**
   * The one shared follower of `stream` (src/log/stream-tap.ts); whoever opens it calls
   * `releaseTap` when its last listener is gone.
   */
  openTap(stream: string, onError: (error: unknown) => void = () => {}): StreamTap {
    let tap = this.taps.get(stream);
    if (!tap) {
      tap = new StreamTap(
        this.bus,
        stream,
        (after, limit) => this.read(stream, after, limit),
        () => this.lastSeq(stream),
        onError,
      );
      this.taps.set(stream, tap);
    }
    return tap;
  }

  releaseTap(tap: StreamTap): void {
    if (tap.size > 0 || this.taps.get(tap.stream) !== tap) return;
    tap.stop();
    this.taps.delete(tap.stream);
  }

  /** Calls `end` at shutdown (close()); returns the function that cancels that. */
  onClose(end: () => void): () => void {
    if (this.closed) {
      end();
      return () => {};
    }
    this.closers.add(end);
    return () => this.closers.delete(end);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Ends every follower (shutdown). */
  close(): void {
    this.closed = true;
    for (const end of [...this.closers]) end();
  }
}

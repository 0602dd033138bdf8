// The durable event log: the spine of crows. The engine appends; SSE streams and GraphQL
// subscriptions read. An event is committed (with any state change that goes with it, in one
// transaction) before the bus tells anyone, so whatever a client sees can be replayed.
import type { PrismaClient } from "../generated/prisma/client.ts";
import type { AppendedEvent, Bus, BusEvent } from "./bus.ts";
import { nameTopicOf, topicOf } from "./bus.ts";
import { KeyedLock } from "../util/keyed-lock.ts";

export type Tx = Parameters<Parameters<PrismaClient["$transaction"]>[0]>[0];
export type StoredEvent = AppendedEvent;

/** How many announced events a follower holds ahead of its reader before it reads the log instead. */
const MAX_AHEAD = 1000;

function toStored(row: { id: number; stream: string; seq: number; name: string; payload: string; ts: Date }): StoredEvent {
  return { id: row.id, stream: row.stream, seq: row.seq, name: row.name, payload: row.payload, ts: row.ts.toISOString() };
}

/** Events read across streams by name in global-id order (followNamed): their ids must be commit order. */
export const ORDERED_NAMES: ReadonlySet<string> = new Set(["trust.changed"]);

export interface EventLogOptions {
  /** How many times an append retries when another instance took the same seq. */
  maxConflictRetries?: number;
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
  private closed = false;

  constructor(
    private readonly prisma: PrismaClient,
    private readonly bus: Bus,
    private readonly options: EventLogOptions = {},
  ) {}

  /**
   * Appends one event to `stream`. `writes` run in the same transaction, so state and log never
   * disagree. The payload is stored as the exact JSON text clients receive.
   */
  append(stream: string, name: string, payload: object, writes?: (tx: Tx) => Promise<unknown>): Promise<StoredEvent> {
    return this.appendIn(stream, name, async (tx) => {
      if (writes) await writes(tx);
      return payload;
    }) as Promise<StoredEvent>;
  }

  /**
   * Runs `build` in a transaction; the payload it returns is appended in that same transaction
   * (null: the state change commits and no event is written).
   */
  async appendIn(stream: string, name: string, build: (tx: Tx) => Promise<object | null>): Promise<StoredEvent | null> {
    const events = await this.appendBatch(stream, async (tx) => {
      const payload = await build(tx);
      return payload === null ? [] : [{ name, payload }];
    });
    return events[0] ?? null;
  }

  /**
   * Runs `build` in a transaction and appends every event it returns, in order, in that same
   * transaction: a verdict and the trust changes it causes commit together or not at all.
   */
  appendBatch(stream: string, build: (tx: Tx) => Promise<Array<{ name: string; payload: object }>>): Promise<StoredEvent[]> {
    return this.appends.run(stream, () => this.appendNow(stream, build));
  }

  /** Resolves once every append already started has settled (used by shutdown). */
  async drain(): Promise<void> {
    await this.appends.idle();
  }

  private async appendNow(stream: string, build: (tx: Tx) => Promise<Array<{ name: string; payload: object }>>): Promise<StoredEvent[]> {
    const retries = this.options.maxConflictRetries ?? 25;
    for (let attempt = 0; ; attempt++) {
      try {
        const rows = await this.prisma.$transaction(async (tx) => {
          const events = await build(tx);
          if (events.length === 0) return [];
          if (this.options.commitOrderLock && events.some((e) => ORDERED_NAMES.has(e.name))) await this.options.commitOrderLock(tx);
          const last = await tx.event.findFirst({ where: { stream }, orderBy: { seq: "desc" }, select: { seq: true } });
          let seq = last?.seq ?? 0;
          const created = [];
          for (const { name, payload } of events) {
            created.push(await tx.event.create({ data: { stream, seq: ++seq, name, payload: JSON.stringify(payload) } }));
          }
          return created;
        });
        const stored = rows.map(toStored);
        for (const event of stored) {
          this.bus.dispatchEvent(new CustomEvent(topicOf(stream), { detail: event }) as BusEvent);
          this.bus.dispatchEvent(new CustomEvent(nameTopicOf(event.name), { detail: event }) as BusEvent);
          this.options.onAppended?.(event);
        }
        return stored;
      } catch (error) {
        // Another instance appended the same seq first (PostgreSQL deployments): try again.
        // A short random pause breaks the lockstep of two instances appending one after another.
        if (attempt < retries && (error as { code?: string }).code === "P2002") {
          await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(50, 2 * (attempt + 1))));
          continue;
        }
        throw error;
      }
    }
  }

  async read(stream: string, afterSeq = 0, limit = 1000): Promise<StoredEvent[]> {
    const rows = await this.prisma.event.findMany({
      where: { stream, seq: { gt: afterSeq } },
      orderBy: { seq: "asc" },
      take: limit,
    });
    return rows.map(toStored);
  }

  /**
   * Events named `name` (or any of several names) across every stream, after the log's global id
   * `afterId`, in commit order: SQLite's single writer, and for ORDERED_NAMES on PostgreSQL the
   * commit-order lock.
   */
  async readNamed(name: string | readonly string[], afterId = 0, limit = 1000): Promise<StoredEvent[]> {
    const names = typeof name === "string" ? name : { in: [...name] };
    const rows = await this.prisma.event.findMany({ where: { name: names, id: { gt: afterId } }, orderBy: { id: "asc" }, take: limit });
    return rows.map(toStored);
  }

  async lastSeq(stream: string): Promise<number> {
    const last = await this.prisma.event.findFirst({ where: { stream }, orderBy: { seq: "desc" }, select: { seq: true } });
    return last?.seq ?? 0;
  }

  /**
   * Every event of `stream` after `afterSeq`, in order, with no gap and no duplicate: first what the
   * log holds, then live appends. The listener is attached before the log is read, so nothing
   * appended in between is lost; a live event that skips ahead makes the reader fill from the log.
   */
  follow(stream: string, afterSeq = 0, signal?: AbortSignal): AsyncGenerator<StoredEvent> {
    return this.tail(topicOf(stream), afterSeq, (after) => this.read(stream, after), (e) => e.seq, signal);
  }

  /**
   * Every event named `name`, across streams, after global id `afterId`, then live ones (e.g. all
   * trust.changed), or named any of several names in one ordered stream (the approvals feed).
   * Ordered by the log's id, which is commit order for ORDERED_NAMES (see readNamed).
   */
  followNamed(name: string | readonly string[], afterId = 0, signal?: AbortSignal): AsyncGenerator<StoredEvent> {
    const topics = (typeof name === "string" ? [name] : name).map(nameTopicOf);
    return this.tail(topics, afterId, (after) => this.readNamed(name, after), (e) => e.id, signal);
  }

  private async *tail(
    topicOrTopics: string | readonly string[],
    start: number,
    readAfter: (cursor: number) => Promise<StoredEvent[]>,
    cursorOf: (event: AppendedEvent) => number,
    signal?: AbortSignal,
  ): AsyncGenerator<StoredEvent> {
    if (this.closed || signal?.aborted) return;
    let wake: (() => void) | undefined;
    let latestSeen = 0;
    let ended = false;
    // Announced events ahead of the reader. The bus carries the committed event itself, so the next
    // one in order is handed on without a read; a gap, a nudge or an overflow falls back to the log.
    const ahead = new Map<number, StoredEvent>();
    let mustRead = true;
    const onEvent = (event: BusEvent) => {
      const cursor = cursorOf(event.detail);
      if (cursor === 0) mustRead = true; // a nudge: something may have been missed
      else if (ahead.size < MAX_AHEAD) ahead.set(cursor, event.detail);
      else mustRead = true;
      latestSeen = Math.max(latestSeen, cursor);
      wake?.();
    };
    const end = () => {
      ended = true;
      wake?.();
    };
    const topics = typeof topicOrTopics === "string" ? [topicOrTopics] : topicOrTopics;
    for (const topic of topics) this.bus.addEventListener(topic, onEvent);
    this.closers.add(end);
    signal?.addEventListener("abort", end, { once: true });
    let delivered = start;
    try {
      while (!ended) {
        if (mustRead) {
          mustRead = false;
          const batch = await readAfter(delivered);
          for (const event of batch) {
            if (ended) return;
            delivered = cursorOf(event);
            yield event;
          }
          if (batch.length === 1000) mustRead = true; // more waiting in the log
        }
        for (const cursor of ahead.keys()) if (cursor <= delivered) ahead.delete(cursor);
        let next: StoredEvent | undefined;
        while (!ended && (next = ahead.get(delivered + 1)) !== undefined) {
          ahead.delete(delivered + 1);
          delivered += 1;
          yield next;
        }
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
      for (const topic of topics) this.bus.removeEventListener(topic, onEvent);
      this.closers.delete(end);
      signal?.removeEventListener("abort", end);
    }
  }

  /** Ends every follower (shutdown). */
  close(): void {
    this.closed = true;
    for (const end of [...this.closers]) end();
  }
}

// What the event log's store stores and reads, and the interface both databases implement
// (events/sqlite.ts, events/postgres.ts). Why the log's SQL goes around Prisma, and what each
// append path commits with: docs/architecture.md "Storage and migrations".
import type { PrismaClient } from "../../generated/prisma/client.ts";
import type { StateReads, StateTx } from "../state-shapes.ts";
import type { OutboxRule } from "../webhook-outbox.ts";
import type { Fence } from "../fence.ts";

export type Tx = Parameters<Parameters<PrismaClient["$transaction"]>[0]>[0];

export interface EventRow {
  /** The log's global id: commit order across every stream. */
  id: number;
  stream: string;
  seq: number;
  name: string;
  payload: string;
  ts: string;
}

/**
 * How readRendered lays out each event: `beforeSeq` seq `beforeName` name `beforePayload` payload
 * `after`. The caller owns the format (compat/sse.ts: an SSE frame); the store only joins text.
 */
export interface RowTemplate {
  beforeSeq: string;
  beforeName: string;
  beforePayload: string;
  after: string;
}

/** A page of events laid out by a RowTemplate, as the UTF-8 bytes a client receives. */
export interface RenderedPage {
  /** How many events the page holds (0: none after the cursor). */
  count: number;
  /** The seq of the page's last event (the cursor to read on from). */
  lastSeq: number;
  bytes: Buffer;
}

/** An event to store: its payload already the JSON text clients receive. */
export interface NewEvent {
  name: string;
  payload: string;
  ts: Date;
}

export interface EventStore {
  /**
   * Stores events with no state change beside them, in order with contiguous seqs, committed in
   * a transaction shared with whatever else arrived in the same turn of the event loop. The
   * caller keeps appends to one stream one at a time.
   */
  append(stream: string, events: NewEvent[]): Promise<EventRow[]>;
  /** Runs `build` in a Prisma transaction and stores the events it returns in that same transaction. */
  appendWith(prisma: PrismaClient, stream: string, build: (tx: Tx) => Promise<NewEvent[]>): Promise<EventRow[]>;
  /**
   * Inside appendWith's `build`: the seq the stream's first event from this append will take, so a
   * row written in the same transaction can carry that number (a message's n is its event's seq).
   */
  nextSeqIn(tx: Tx, stream: string): Promise<number>;
  /**
   * Runs `build` in a transaction on the log's own connection, with the flock's state statements
   * (flock-state.ts), and stores the events it returns in that same transaction: both commit or
   * neither does. `build` may run again after a clash with another instance on the stream's seq.
   */
  /**
   * `fence`: the transaction is a lease holder's, fenced (../fence.ts) before `build` runs; refused,
   * it rejects with StaleEpochError and nothing is written. (PostgreSQL sends it with the BEGIN.)
   */
  appendState(stream: string, build: (tx: StateTx) => Promise<NewEvent[]>, fence?: Fence): Promise<EventRow[]>;
  /** The flock's hot rows as committed (on SQLite, the read connection). */
  readonly state: StateReads;
  /** A state change with no event beside it, in a transaction of its own (a crew rotation's move). */
  writeState<T>(write: (tx: StateTx) => Promise<T>): Promise<T>;
  read(stream: string, afterSeq: number, limit: number): Promise<EventRow[]>;
  /**
   * The events `read` would return, laid out by `template` and joined in the database into one
   * block of bytes: a replay writes a page with no per-row objects or strings in JavaScript.
   */
  readRendered(stream: string, afterSeq: number, limit: number, template: RowTemplate): Promise<RenderedPage>;
  /** Events with any of `names`, after global id `afterId`, in id order. */
  readNamed(names: readonly string[], afterId: number, limit: number): Promise<EventRow[]>;
  lastSeq(stream: string): Promise<number>;
  /** The newest committed id among events with any of `names` (0: none). */
  lastNamedId(names: readonly string[]): Promise<number>;
  /**
   * From now on, every append also inserts the webhook deliveries `rule` asks for, in the same
   * transaction as the events (../webhook-outbox.ts). Set once, before the first append.
   */
  setOutbox(rule: OutboxRule): void;
  close(): Promise<void>;
}

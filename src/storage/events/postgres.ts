// The event store on PostgreSQL: the pool Prisma's adapter uses too. A group commit is one
// multi-row INSERT (one statement, its own transaction); a clash on (stream, seq) with another
// instance re-reads the counters and tries again (seq-retry.ts). docs/architecture.md says why.
import type pg from "pg";
import { inPgTransaction } from "../pg-pool.ts";
import { pgFencedBegin as fencedBegin, type Fence } from "../fence.ts";
import type { PrismaClient } from "../../generated/prisma/client.ts";
import { pgState } from "../flock-state.ts";
import type { StateReads, StateTx } from "../state-shapes.ts";
import { GroupQueue, type Pending } from "./group-queue.ts";
import { retryOnSeqClash } from "./seq-retry.ts";
import { anyFansOut, clientRun, pgFanOut, type OutboxRule } from "../webhook-outbox.ts";
import type { EventRow, EventStore, NewEvent, RenderedPage, RowTemplate, Tx } from "./types.ts";

const EMPTY = Buffer.alloc(0);

const PG_COLUMNS = `"id", "stream", "seq", "name", "payload", to_char("ts", 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "ts"`;

export class PgEventStore implements EventStore {
  private readonly nextSeq = new Map<string, number>();
  private readonly queue = new GroupQueue((batch) => this.flush(batch));
  readonly state: StateReads;
  private outboxRule: OutboxRule | undefined;

  constructor(private readonly pool: pg.Pool) {
    this.state = pgState(pool);
  }

  setOutbox(rule: OutboxRule): void {
    this.outboxRule = rule;
  }

  /**
   * The group commit's INSERT: one statement alone (its own transaction), or, when some event fans
   * out to webhooks, in a transaction on a pool connection with its outbox rows.
   */
  private async groupInsert(
    values: unknown[],
    fansOut: boolean,
  ): Promise<Array<{ id: number; stream: string; seq: number; name: string; payload: string }>> {
    const query = {
      name: "crows-event-insert",
      text:
        `INSERT INTO "Event" ("stream", "seq", "name", "payload", "ts") ` +
        `SELECT * FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::timestamp(3)[]) RETURNING "id", "stream", "seq", "name", "payload"`,
      values,
    };
    if (!fansOut)
      return (await this.pool.query<{ id: number; stream: string; seq: number; name: string; payload: string }>(query))
        .rows;
    return this.writeState(async (_tx, client) => {
      const { rows } = await client.query<{ id: number; stream: string; seq: number; name: string; payload: string }>(
        query,
      );
      await pgFanOut(clientRun(client), this.outboxRule, rows);
      return rows;
    });
  }

  append(stream: string, events: NewEvent[]): Promise<EventRow[]> {
    return this.queue.add(stream, events);
  }

  private flush(batch: Pending[]): Promise<void> {
    return retryOnSeqClash(async () => {
      try {
        const missing = [...new Set(batch.map((p) => p.stream).filter((s) => !this.nextSeq.has(s)))];
        if (missing.length > 0) {
          const { rows } = await this.pool.query<{ stream: string; last: number }>({
            name: "crows-event-last-seqs",
            text: `SELECT s AS "stream", COALESCE((SELECT MAX("seq") FROM "Event" WHERE "stream" = s), 0)::int AS "last" FROM unnest($1::text[]) AS s`,
            values: [missing],
          });
          for (const row of rows) this.nextSeq.set(row.stream, row.last);
        }
        const streams: string[] = [];
        const seqs: number[] = [];
        const names: string[] = [];
        const payloads: string[] = [];
        const stamps: string[] = [];
        const planned = new Map<string, number>();
        for (const p of batch) {
          let seq = planned.get(p.stream) ?? this.nextSeq.get(p.stream)!;
          for (const event of p.events) {
            streams.push(p.stream);
            seqs.push(++seq);
            names.push(event.name);
            payloads.push(event.payload);
            stamps.push(event.ts.toISOString());
          }
          planned.set(p.stream, seq);
        }
        const fansOut = anyFansOut(
          this.outboxRule,
          batch.flatMap((p) => p.events),
        );
        const rows = await this.groupInsert([streams, seqs, names, payloads, stamps], fansOut);
        for (const [stream, seq] of planned) this.nextSeq.set(stream, seq);
        const idOf = new Map(rows.map((r) => [`${r.seq}\u0000${r.stream}`, r.id]));
        let at = 0;
        for (const p of batch) {
          const stored: EventRow[] = [];
          for (const event of p.events) {
            const seq = seqs[at++]!;
            stored.push({
              id: idOf.get(`${seq}\u0000${p.stream}`)!,
              stream: p.stream,
              seq,
              name: event.name,
              payload: event.payload,
              ts: event.ts.toISOString(),
            });
          }
          p.resolve(stored);
        }
      } catch (error) {
        for (const p of batch) this.nextSeq.delete(p.stream);
        throw error;
      }
    });
  }

  appendWith(prisma: PrismaClient, stream: string, build: (tx: Tx) => Promise<NewEvent[]>): Promise<EventRow[]> {
    return retryOnSeqClash(async () => {
      try {
        const rows = await prisma.$transaction(async (tx) => {
          const events = await build(tx);
          if (events.length === 0) return [];
          const first = (await this.nextSeqIn(tx, stream)) - 1;
          const created = await tx.event.createManyAndReturn({
            data: events.map((e, i) => ({ stream, seq: first + i + 1, name: e.name, payload: e.payload, ts: e.ts })),
          });
          created.sort((a, b) => a.seq - b.seq);
          await pgFanOut((text, values) => tx.$executeRawUnsafe(text, ...values), this.outboxRule, created);
          return created;
        });
        if (rows.length > 0) this.nextSeq.set(stream, rows[rows.length - 1]!.seq);
        return rows.map((r) => ({
          id: r.id,
          stream: r.stream,
          seq: r.seq,
          name: r.name,
          payload: r.payload,
          ts: r.ts.toISOString(),
        }));
      } catch (error) {
        this.nextSeq.delete(stream); // rolled back: the counter may be ahead of the table
        throw error;
      }
    });
  }

  /** The cached counter, else the table's last seq read in `tx` (a clash with another instance retries the append). */
  async nextSeqIn(tx: Tx, stream: string): Promise<number> {
    const cached = this.nextSeq.get(stream);
    if (cached !== undefined) return cached + 1;
    const last = await tx.event.findFirst({ where: { stream }, orderBy: { seq: "desc" }, select: { seq: true } });
    return (last?.seq ?? 0) + 1;
  }

  appendState(stream: string, build: (tx: StateTx) => Promise<NewEvent[]>, fence?: Fence): Promise<EventRow[]> {
    return retryOnSeqClash(async () => {
      try {
        return await this.stateTransaction(stream, build, fence);
      } catch (error) {
        this.nextSeq.delete(stream); // rolled back: the counter may be ahead of the table
        throw error;
      }
    });
  }

  /** One transaction on a connection of its own from the pool: state statements, then the events. */
  private async stateTransaction(
    stream: string,
    build: (tx: StateTx) => Promise<NewEvent[]>,
    fence?: Fence,
  ): Promise<EventRow[]> {
    const work = async (tx: StateTx, client: pg.PoolClient) => {
      const events = await build(tx);
      if (events.length === 0) return [];
      const rows = await this.insertIn(client, stream, events);
      await pgFanOut(clientRun(client), this.outboxRule, rows);
      return rows;
    };
    const rows = fence
      ? await inPgTransaction(this.pool, (client) => work(pgState(client), client), fencedBegin(fence))
      : await this.writeState(work);
    if (rows.length > 0) this.nextSeq.set(stream, rows[rows.length - 1]!.seq);
    return rows;
  }

  writeState<T>(write: (tx: StateTx, client: pg.PoolClient) => Promise<T>): Promise<T> {
    return inPgTransaction(this.pool, (client) => write(pgState(client), client));
  }

  /** Inserts `events` after the stream's last seq, inside `client`'s open transaction. */
  private async insertIn(client: pg.PoolClient, stream: string, events: NewEvent[]): Promise<EventRow[]> {
    let seq = this.nextSeq.get(stream);
    if (seq === undefined) {
      const { rows } = await client.query<{ last: number }>({
        name: "crows-event-last-seq",
        text: `SELECT COALESCE(MAX("seq"), 0)::int AS "last" FROM "Event" WHERE "stream" = $1`,
        values: [stream],
      });
      seq = rows[0]!.last;
    }
    const first = seq;
    const { rows } = await client.query<{ id: number; seq: number }>({
      name: "crows-event-insert-one-stream",
      text:
        `INSERT INTO "Event" ("stream", "seq", "name", "payload", "ts") ` +
        `SELECT $1, * FROM unnest($2::int[], $3::text[], $4::text[], $5::timestamp(3)[]) RETURNING "id", "seq"`,
      values: [
        stream,
        events.map((_, i) => first + i + 1),
        events.map((e) => e.name),
        events.map((e) => e.payload),
        events.map((e) => e.ts.toISOString()),
      ],
    });
    const idOf = new Map(rows.map((r) => [r.seq, r.id]));
    return events.map((e, i) => ({
      id: idOf.get(first + i + 1)!,
      stream,
      seq: first + i + 1,
      name: e.name,
      payload: e.payload,
      ts: e.ts.toISOString(),
    }));
  }

  async read(stream: string, afterSeq: number, limit: number): Promise<EventRow[]> {
    const { rows } = await this.pool.query<EventRow>({
      name: "crows-event-read",
      text: `SELECT ${PG_COLUMNS} FROM "Event" WHERE "stream" = $1 AND "seq" > $2 ORDER BY "seq" LIMIT $3`,
      values: [stream, afterSeq, limit],
    });
    return rows;
  }

  async readRendered(stream: string, afterSeq: number, limit: number, template: RowTemplate): Promise<RenderedPage> {
    const { rows } = await this.pool.query<{ count: number; lastSeq: number; text: string | null }>({
      name: "crows-event-read-rendered",
      text:
        `SELECT count(*)::int AS "count", COALESCE(MAX("seq"), 0)::int AS "lastSeq", ` +
        `string_agg($1::text || "seq" || $2::text || "name" || $3::text || "payload" || $4::text, '' ORDER BY "seq") AS "text" ` +
        `FROM (SELECT "seq", "name", "payload" FROM "Event" WHERE "stream" = $5 AND "seq" > $6 ORDER BY "seq" LIMIT $7) AS page`,
      values: [
        template.beforeSeq,
        template.beforeName,
        template.beforePayload,
        template.after,
        stream,
        afterSeq,
        limit,
      ],
    });
    const page = rows[0]!;
    return { count: page.count, lastSeq: page.lastSeq, bytes: page.text === null ? EMPTY : Buffer.from(page.text) };
  }

  async readNamed(names: readonly string[], afterId: number, limit: number): Promise<EventRow[]> {
    const { rows } = await this.pool.query<EventRow>({
      name: "crows-event-read-named",
      text: `SELECT ${PG_COLUMNS} FROM "Event" WHERE "name" = ANY($1::text[]) AND "id" > $2 ORDER BY "id" LIMIT $3`,
      values: [[...names], afterId, limit],
    });
    return rows;
  }

  async lastSeq(stream: string): Promise<number> {
    const { rows } = await this.pool.query<{ last: number }>({
      name: "crows-event-last-seq",
      text: `SELECT COALESCE(MAX("seq"), 0)::int AS "last" FROM "Event" WHERE "stream" = $1`,
      values: [stream],
    });
    return rows[0]!.last;
  }

  async lastNamedId(names: readonly string[]): Promise<number> {
    const { rows } = await this.pool.query<{ last: number }>({
      name: "crows-event-last-named-id",
      text: `SELECT COALESCE(MAX("id"), 0)::int AS "last" FROM "Event" WHERE "name" = ANY($1::text[])`,
      values: [[...names]],
    });
    return rows[0]!.last;
  }

  async close(): Promise<void> {} // the pool is Prisma's: it ends with $disconnect
}

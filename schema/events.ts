// A list's events (docs/contract.md), from the durable log: a query for what is stored and a subscription
// that resumes — everything after `after` from the log, then live appends, with no gap.
import { builder } from "./builder.ts";
import { TodoList } from "./lists.ts";
import { BadInputError } from "../src/base/errors.ts";
import type { StoredEvent } from "../src/log/event-log.ts";
import { pagedFollow, resumeAfter } from "./follow.ts";
import { listStream } from "../src/base/streams.ts";
import { parsedPayload } from "../src/log/parsed-payload.ts";
import { isoTimestampJson, type ProjectableSubscription, type WireFields } from "./wire.ts";
import { pageLimit } from "../src/base/util/clamp.ts";
import { totalCountOf, keyWhere, keyedConnection, type ConnectionArgs, type KeyRange } from "./connection.ts";
import type { Context } from "./builder.ts";

export const Event = builder.objectRef<StoredEvent>("Event").implement({
  description: "One event of a list's stream, exactly as the REST SSE stream carries it.",
  fields: (t) => ({
    seq: t.exposeInt("seq", { description: "Position in the stream from 1; the SSE id and the resume point." }),
    name: t.exposeString("name", { description: "list.started, item.triaged, crow.flying, ... (docs/contract.md)." }),
    ts: t.field({ type: "DateTime", resolve: (e) => e.ts }),
    stream: t.exposeString("stream", { description: "list:<list_id>." }),
    payload: t.field({ type: "JSON", description: "The payload, parsed.", resolve: (e) => parsedPayload(e) }),
    raw: t.exposeString("payload", { description: "The payload's exact JSON text, as on the wire." }),
  }),
});

/**
 * Event's fields as a subscription writes them without running graphql-js per event
 * (src/server/graphql/projection/): each is what its resolver above returns, and `payload`
 * is the stored JSON text itself (the log stores JSON.stringify's text, so it is what parsing and
 * re-serializing would write). test/graphql-projection.test.ts checks them against graphql's output.
 */
const eventWireFields: WireFields<StoredEvent> = {
  seq: { value: (e) => e.seq },
  name: { value: (e) => e.name },
  ts: { json: (e) => isoTimestampJson(e.ts) },
  stream: { value: (e) => e.stream },
  payload: { json: (e) => e.payload },
  raw: { value: (e) => e.payload },
};

/** Subscriptions whose per-event value is the stored event itself (`resolve: (event) => event`). */
export const projectableSubscriptions: Readonly<Record<string, ProjectableSubscription>> = {
  listEvents: { fields: eventWireFields as WireFields<never> },
};

function afterSeq(after: number | null | undefined): number {
  const value = after ?? 0;
  if (value < 0) throw new BadInputError("after must be 0 or a seq the stream has sent.");
  return value;
}

/** A page of a list's events by seq (the (stream, seq) unique index), read from the committed log table. */
function eventPage(ctx: Context, listId: string, args: ConnectionArgs) {
  const stream = listStream(listId);
  return keyedConnection<StoredEvent>(args, {
    name: "event",
    order: "asc",
    keyOf: (e) => e.seq,
    read: async (range: KeyRange) => {
      const rows = await ctx.app.prisma.event.findMany({
        where: { stream, seq: keyWhere(range) },
        orderBy: { seq: range.descending ? "desc" : "asc" },
        take: range.limit,
      });
      return rows.map((row) => ({
        id: row.id,
        stream: row.stream,
        seq: row.seq,
        name: row.name,
        payload: row.payload,
        ts: row.ts.toISOString(),
      }));
    },
    // Seqs count 1, 2, 3... with no gap: the last one is the count.
    totalCount: () => ctx.app.log.lastSeq(stream),
  });
}

const COUNT = "Every event of the list (its last seq).";

builder.queryFields((t) => ({
  eventsConnection: t.connection(
    {
      authScopes: { read: true },
      type: Event,
      description:
        "A list's stored events in seq order, as a cursor connection (first/after forwards, last/before back; at most 100 a page).",
      args: { listId: t.arg.id({ required: true }) },
      resolve: (_root, args, ctx) => eventPage(ctx, String(args.listId), args),
    },
    {
      name: "EventConnection",
      fields: (tc) => ({ totalCount: tc.int({ nullable: true, description: COUNT, resolve: totalCountOf }) }),
    },
  ),
  events: t.field({
    authScopes: { read: true },
    type: [Event],
    deprecationReason: "Use eventsConnection (cursor pages, pageInfo, totalCount).",
    description: "A list's stored events after seq `after`, in order.",
    args: {
      listId: t.arg.id({ required: true }),
      after: t.arg.int({ defaultValue: 0 }),
      limit: t.arg.int({ defaultValue: 1000, description: "1 to 1000." }),
    },
    resolve: (_root, args, ctx) =>
      ctx.app.log.read(listStream(String(args.listId)), afterSeq(args.after), pageLimit(args.limit, 1000, 1000)),
  }),
}));

builder.objectField(TodoList, "eventsConnection", (t) =>
  t.connection(
    {
      type: Event,
      description: "This list's stored events in seq order, as a cursor connection.",
      resolve: (list, args, ctx) => eventPage(ctx, list.id, args),
    },
    {
      name: "ListEventConnection",
      fields: (tc) => ({ totalCount: tc.int({ nullable: true, description: COUNT, resolve: totalCountOf }) }),
    },
  ),
);

builder.objectField(TodoList, "events", (t) =>
  t.field({
    type: [Event],
    deprecationReason: "Use eventsConnection: this one answers every event of the list at once.",
    description: "This list's stored events, in order.",
    args: { after: t.arg.int({ defaultValue: 0 }) },
    resolve: (list, args, ctx) => ctx.app.log.read(listStream(list.id), afterSeq(args.after)),
  }),
);

builder.subscriptionFields((t) => ({
  listEvents: t.field({
    authScopes: { read: true },
    type: Event,
    description:
      "A list's events: those after seq `after` (default 0: all of them) replayed from the log, then live ones. " +
      "To resume after a dropped connection, pass the last seq you received. A seq the stream never sent " +
      "(negative, past its end) refuses the subscription: a 400 with extensions.code bad_input.",
    args: { listId: t.arg.id({ required: true }), after: t.arg.int() },
    subscribe: async (_root, args, ctx) => {
      const stream = listStream(String(args.listId));
      const after = await resumeAfter(args.after, { lastSeq: () => ctx.app.log.lastSeq(stream) });
      return pagedFollow((signal) => ctx.app.log.followPages(stream, after, signal));
    },
    resolve: (event) => event,
  }),
}));

// A list's events (EVENTS.md), from the durable log: a query for what is stored and a subscription
// that resumes — everything after `after` from the log, then live appends, with no gap.
import { builder } from "./builder.ts";
import { TodoList } from "./lists.ts";
import { BadInputError } from "../src/errors.ts";
import type { StoredEvent } from "../src/log/event-log.ts";
import { abortableFollow, refusal } from "./follow.ts";
import { listStream } from "../src/flock/events.ts";
import { parsedPayload } from "../src/log/parsed-payload.ts";
import { resumePoint } from "../src/log/cursor.ts";
import type { EventLog } from "../src/log/event-log.ts";

export const Event = builder.objectRef<StoredEvent>("Event").implement({
  description: "One event of a list's stream, exactly as the REST SSE stream carries it.",
  fields: (t) => ({
    seq: t.exposeInt("seq", { description: "Position in the stream from 1; the SSE id and the resume point." }),
    name: t.exposeString("name", { description: "list.started, item.triaged, crow.flying, ... (EVENTS.md)." }),
    ts: t.field({ type: "DateTime", resolve: (e) => e.ts }),
    stream: t.exposeString("stream", { description: "list:<list_id>." }),
    payload: t.field({ type: "JSON", description: "The payload, parsed.", resolve: (e) => parsedPayload(e) }),
    raw: t.exposeString("payload", { description: "The payload's exact JSON text, as on the wire." }),
  }),
});

function afterSeq(after: number | null | undefined): number {
  const value = after ?? 0;
  if (value < 0) throw new BadInputError("after must be 0 or a seq the stream has sent.");
  return value;
}

builder.queryFields((t) => ({
  events: t.field({
    type: [Event],
    description: "A list's stored events after seq `after`, in order.",
    args: {
      listId: t.arg.id({ required: true }),
      after: t.arg.int({ defaultValue: 0 }),
      limit: t.arg.int({ defaultValue: 1000, description: "1 to 1000." }),
    },
    resolve: (_root, args, ctx) =>
      ctx.app.log.read(listStream(String(args.listId)), afterSeq(args.after), Math.min(1000, Math.max(1, args.limit ?? 1000))),
  }),
}));

builder.objectField(TodoList, "events", (t) =>
  t.field({
    type: [Event],
    description: "This list's stored events, in order.",
    args: { after: t.arg.int({ defaultValue: 0 }) },
    resolve: (list, args, ctx) => ctx.app.log.read(listStream(list.id), afterSeq(args.after)),
  }),
);

/**
 * Where listEvents resumes: the REST streams' rule (src/log/cursor.ts), so a seq the stream never
 * sent (negative, or past its end) is refused with a bad_input naming the last seq, not waited on.
 */
async function resumeSeq(log: EventLog, stream: string, after: number | null | undefined): Promise<number> {
  const cursor = await resumePoint(after == null ? null : String(after), { lastSeq: () => log.lastSeq(stream) }, "after");
  if (typeof cursor !== "number") throw new BadInputError(cursor.refused);
  return cursor;
}

builder.subscriptionFields((t) => ({
  listEvents: t.field({
    type: Event,
    description:
      "A list's events: those after seq `after` (default 0: all of them) replayed from the log, then live ones. " +
      "To resume after a dropped connection, pass the last seq you received. A bad argument (a negative `after`, " +
      "or one past the stream's last seq) arrives as one errored result (extensions.code bad_input, the message " +
      "names the last seq), then the stream completes.",
    args: { listId: t.arg.id({ required: true }), after: t.arg.int() },
    subscribe: async (_root, args, ctx): Promise<AsyncIterable<StoredEvent | Error>> => {
      try {
        const stream = listStream(String(args.listId));
        const after = await resumeSeq(ctx.app.log, stream, args.after);
        return abortableFollow((signal) => ctx.app.log.follow(stream, after, signal));
      } catch (error) {
        // Refuse in-band: a throw here becomes a result without `data`, which graphql-sse's
        // handler mistakes for execution arguments ("Unable to detect operation AST").
        return refusal(error);
      }
    },
    resolve: (event) => {
      if (event instanceof Error) throw event;
      return event;
    },
  }),
}));

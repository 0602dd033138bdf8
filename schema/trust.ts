// The trust ledger (docs/flock.md §3), in full with counts and history: the same snapshot
// GET /api/trust serves, so the two surfaces cannot disagree.
import { builder } from "./builder.ts";
import { BadInputError } from "../src/base/errors.ts";
import { historyKey, historyTotalOf, recordView, type LedgerFilter } from "../src/flock/trust.ts";
import type { TrustHistoryRow } from "../src/storage/trust-history.ts";
import type { Context } from "./builder.ts";
import type { StoredEvent } from "../src/log/event-log.ts";
import { abortableFollow, lastIdNamed, resumeAfter } from "./follow.ts";
import { parsedPayload } from "../src/log/parsed-payload.ts";
import { LevelName, Verdict } from "./enums.ts";
import { ActorRef } from "./actor.ts";
import type { Actor } from "../src/base/actor.ts";
import { keyedConnection, totalCountOf, type ConnectionArgs } from "./connection.ts";

/** A page of the history by entry id (oldest first), one record's or every matching record's. */
function historyPage(ctx: Context, filter: LedgerFilter, args: ConnectionArgs) {
  return keyedConnection<Entry>(args, {
    name: "trust",
    order: "asc",
    keyOf: (e) => e.id,
    read: (range) => ctx.app.flock.trust.entries({ ...filter, ...range }),
    totalCount: () => ctx.app.flock.trust.historyTotal(filter),
  });
}

const HISTORY_COUNT = "Every verdict in the history (from the records' counts).";

/** A record as the query read it, with the filter it was read under (its history is read lazily). */
interface TrustRow {
  holder: string;
  task_type: string;
  level: number;
  level_name: string;
  streak: number;
  approvals: number;
  rejections: number;
  autos: number;
  filter: LedgerFilter;
}
type Entry = TrustHistoryRow;

/**
 * History is read only when a query asks for it, and then once per request for every record the
 * query returned (one grouped query, not one per record): the ledger's cost grows with verdicts.
 */
const historiesByRequest = new WeakMap<Context, Map<string, Promise<Map<string, TrustHistoryRow[]>>>>();
function historiesFor(
  ctx: Context,
  filter: LedgerFilter,
  page: { last: number | null; before: number | null },
): Promise<Map<string, TrustHistoryRow[]>> {
  let perRequest = historiesByRequest.get(ctx);
  if (!perRequest) historiesByRequest.set(ctx, (perRequest = new Map()));
  const key = JSON.stringify([filter.holder ?? null, filter.taskType ?? null, page.last, page.before]);
  let histories = perRequest.get(key);
  if (!histories) perRequest.set(key, (histories = ctx.app.flock.trust.histories(filter, page)));
  return histories;
}

const MAX_HISTORY = 1000;

const TrustHistoryEntry = builder.objectRef<Entry>("TrustHistoryEntry").implement({
  description: "One verdict that touched the record, with the level before and after.",
  fields: (t) => ({
    id: t.exposeInt("id", {
      description: "The entry's place in the ledger: pass it as history's `before` for the page before.",
    }),
    holder: t.exposeString("holder"),
    taskType: t.exposeString("taskType"),
    verdict: t.field({ type: Verdict, resolve: (e) => e.verdict as typeof Verdict.$inferType }),
    subject: t.exposeString("subject", { description: "The item_id (or ask msg_id) judged." }),
    from: t.exposeInt("from"),
    to: t.exposeInt("to"),
    at: t.field({ type: "DateTime", resolve: (e) => e.at }),
    actor: t.field({
      type: ActorRef,
      nullable: true,
      description:
        "Who decided the verdict (for the Sentry's record: who replied to its ask); null on entries older than deciders on the ledger.",
      resolve: (e) => e.actor,
    }),
    reason: t.string({
      nullable: true,
      description: "The reason the decider gave with the verdict; null when none was given.",
      resolve: (e) => e.reason,
    }),
  }),
});

export const TrustRecord = builder.objectRef<TrustRow>("TrustRecord").implement({
  description: "A holder's standing on one task type. Levels: 0 stranger, 1 regular, 2 trusted.",
  fields: (t) => ({
    holder: t.exposeString("holder", { description: "A crow, a spun crow, flock or Sentry." }),
    taskType: t.exposeString("task_type"),
    level: t.exposeInt("level"),
    levelName: t.field({ type: LevelName, resolve: (r) => r.level_name as typeof LevelName.$inferType }),
    streak: t.exposeInt("streak", { description: "Approvals in a row since the last level change." }),
    approvals: t.exposeInt("approvals"),
    rejections: t.exposeInt("rejections", { description: "Rejections and timeouts." }),
    autos: t.exposeInt("autos"),
    historyTotal: t.int({
      description: "How many verdicts touched the record: the length of its whole history.",
      resolve: (r) => historyTotalOf(r),
    }),
    historyConnection: t.connection(
      {
        type: TrustHistoryEntry,
        description:
          "This record's verdicts by id, oldest first, as a cursor connection: last: 20 is the newest 20, before pages back.",
        resolve: (r, args, ctx) => historyPage(ctx, { holder: r.holder, taskType: r.task_type }, args),
      },
      {
        name: "TrustRecordHistoryConnection",
        fields: (tc) => ({ totalCount: tc.int({ nullable: true, description: HISTORY_COUNT, resolve: totalCountOf }) }),
      },
    ),
    history: t.field({
      type: [TrustHistoryEntry],
      deprecationReason: "Use historyConnection (cursor pages, pageInfo, totalCount).",
      description:
        "The verdicts that touched the record, oldest first: all of them, or a page of the newest `last` (1 to 1000) " +
        "before entry id `before` (default: the newest). Page back by passing the first id of a page as `before`.",
      args: { last: t.arg.int(), before: t.arg.int() },
      resolve: async (r, args, ctx) => {
        if (args.last != null && (args.last < 1 || args.last > MAX_HISTORY))
          throw new BadInputError(`last must be 1 to ${MAX_HISTORY}.`);
        // Every record of the answer shares one read of its page (the same arguments, one query).
        const histories = await historiesFor(ctx, r.filter, { last: args.last ?? null, before: args.before ?? null });
        return histories.get(historyKey(r.holder, r.task_type)) ?? [];
      },
    }),
  }),
});

builder.queryFields((t) => ({
  trustHistory: t.connection(
    {
      authScopes: { read: true },
      type: TrustHistoryEntry,
      description:
        "The whole ledger history by entry id, oldest first (filter by holder and/or taskType), as a cursor connection (at most 100 a page).",
      args: { holder: t.arg.string(), taskType: t.arg.string() },
      resolve: (_root, args, ctx) => historyPage(ctx, { holder: args.holder, taskType: args.taskType }, args),
    },
    {
      name: "TrustHistoryConnection",
      fields: (tc) => ({ totalCount: tc.int({ nullable: true, description: HISTORY_COUNT, resolve: totalCountOf }) }),
    },
  ),
  trust: t.field({
    authScopes: { read: true },
    type: [TrustRecord],
    description: "The ledger, by holder then task type; filter by holder and/or taskType.",
    args: { holder: t.arg.string(), taskType: t.arg.string() },
    resolve: async (_root, args, ctx): Promise<TrustRow[]> => {
      const filter: LedgerFilter = { holder: args.holder, taskType: args.taskType };
      return (await ctx.app.flock.trust.records(filter)).map((r) => ({ ...recordView(r), filter }));
    },
  }),
}));

interface TrustChangedPayload {
  list_id?: string;
  holder: string;
  task_type: string;
  from: number;
  to: number;
  ts: string;
  actor?: Actor;
}

const TrustChange = builder.objectRef<StoredEvent>("TrustChange").implement({
  description: "A trust.changed event: a holder moved a level on a task type.",
  fields: (t) => ({
    id: t.exposeInt("id", { description: "The log's global id: pass it as `after` to resume." }),
    holder: t.string({ resolve: (e) => payloadOf(e).holder }),
    taskType: t.string({ resolve: (e) => payloadOf(e).task_type }),
    from: t.int({ resolve: (e) => payloadOf(e).from }),
    to: t.int({ resolve: (e) => payloadOf(e).to }),
    listId: t.string({ nullable: true, resolve: (e) => payloadOf(e).list_id ?? null }),
    ts: t.field({ type: "DateTime", resolve: (e) => e.ts }),
    actor: t.field({
      type: ActorRef,
      nullable: true,
      description:
        "Who decided the verdict that moved the level (for the Sentry: who replied to its ask); null on changes older than that.",
      resolve: (e) => payloadOf(e).actor ?? null,
    }),
  }),
});

function payloadOf(event: StoredEvent): TrustChangedPayload {
  return parsedPayload<TrustChangedPayload>(event);
}

builder.subscriptionFields((t) => ({
  trustChanges: t.field({
    authScopes: { read: true },
    type: TrustChange,
    description:
      "Every trust.changed across lists and nests: those after global id `after` (default 0: all) from the log, " +
      "then live ones. Resume with the last id received; an id the stream never sent (negative, past its end) is a 400 bad_input.",
    args: { after: t.arg.int() },
    subscribe: async (_root, args, ctx) => {
      const after = await resumeAfter(args.after, { lastSeq: () => lastIdNamed(ctx.app, "trust.changed") });
      return abortableFollow((signal) => ctx.app.log.followNamed("trust.changed", after, signal));
    },
    resolve: (event: StoredEvent) => event,
  }),
}));

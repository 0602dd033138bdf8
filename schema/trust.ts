// The trust ledger (FLOCK.md section 3), in full with counts and history: the same snapshot
// GET /api/trust serves, so the two surfaces cannot disagree.
import { builder } from "./builder.ts";
import type { TrustLedger } from "../src/flock/trust.ts";
import type { StoredEvent } from "../src/log/event-log.ts";
import { abortableFollow, lastIdNamed, resumeAfter } from "./follow.ts";
import { parsedPayload } from "../src/log/parsed-payload.ts";

type TrustRow = Awaited<ReturnType<TrustLedger["snapshot"]>>[number];
type Entry = TrustRow["history"][number];

const TrustHistoryEntry = builder.objectRef<Entry>("TrustHistoryEntry").implement({
  description: "One verdict that touched the record, with the level before and after.",
  fields: (t) => ({
    verdict: t.exposeString("verdict", { description: "approved, rejected, timeout or auto." }),
    subject: t.exposeString("subject", { description: "The item_id (or ask msg_id) judged." }),
    from: t.exposeInt("from"),
    to: t.exposeInt("to"),
    at: t.field({ type: "DateTime", resolve: (e) => e.at }),
  }),
});

export const TrustRecord = builder.objectRef<TrustRow>("TrustRecord").implement({
  description: "A holder's standing on one task type. Levels: 0 stranger, 1 regular, 2 trusted.",
  fields: (t) => ({
    holder: t.exposeString("holder", { description: "A crow, a spun crow, flock or Sentry." }),
    taskType: t.exposeString("task_type"),
    level: t.exposeInt("level"),
    levelName: t.exposeString("level_name"),
    streak: t.exposeInt("streak", { description: "Approvals in a row since the last level change." }),
    approvals: t.exposeInt("approvals"),
    rejections: t.exposeInt("rejections", { description: "Rejections and timeouts." }),
    autos: t.exposeInt("autos"),
    history: t.field({ type: [TrustHistoryEntry], resolve: (r) => r.history }),
  }),
});

builder.queryFields((t) => ({
  trust: t.field({
    type: [TrustRecord],
    description: "The ledger, by holder then task type; filter by holder and/or taskType.",
    args: { holder: t.arg.string(), taskType: t.arg.string() },
    resolve: async (_root, args, ctx) =>
      (await ctx.app.flock.trust.snapshot()).filter(
        (r: TrustRow) => (args.holder == null || r.holder === args.holder) && (args.taskType == null || r.task_type === args.taskType),
      ),
  }),
}));

interface TrustChangedPayload {
  list_id?: string;
  holder: string;
  task_type: string;
  from: number;
  to: number;
  ts: string;
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
  }),
});

function payloadOf(event: StoredEvent): TrustChangedPayload {
  return parsedPayload<TrustChangedPayload>(event);
}

builder.subscriptionFields((t) => ({
  trustChanges: t.field({
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

// The trust ledger (FLOCK.md section 3), in full with counts and history: the same snapshot
// GET /api/trust serves, so the two surfaces cannot disagree.
import { builder } from "./builder.ts";
import type { TrustLedger } from "../src/flock/trust.ts";

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

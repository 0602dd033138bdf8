// The reminders feed (docs/rules.md "Reminders"): every approval.reminder across all lists, in commit
// order, resumable by the log's global id like approvalChanges. The console's notice follows it on
// the tab's one stream (console/app/reminders.tsx) and shows the reminders whose approval still waits.
import { builder } from "./builder.ts";
import { VerdictTarget } from "./verdicts.ts";
import type { StoredEvent } from "../src/log/event-log.ts";
import type { Target } from "../src/flock/events.ts";
import { REMINDER_EVENT } from "../src/flock/reminders.ts";
import { abortableFollow, lastIdNamed, resumeAfter } from "./follow.ts";

const NAMES = [REMINDER_EVENT] as const;

interface ReminderShape {
  event: StoredEvent;
  payload: { list_id: string; item_id: string; target: Target; round: number; deadline: string };
}

async function* reminders(events: AsyncGenerator<StoredEvent>): AsyncGenerator<ReminderShape> {
  for await (const event of events) yield { event, payload: JSON.parse(event.payload) as ReminderShape["payload"] };
}

const ApprovalReminder = builder.objectRef<ReminderShape>("ApprovalReminder").implement({
  description: "A reminder that a pending approval's window nears its end: at most one per approval round.",
  fields: (t) => ({
    id: t.int({ description: "The log's global id: pass it as `after` to resume.", resolve: (r) => r.event.id }),
    listId: t.id({ resolve: (r) => r.payload.list_id }),
    itemId: t.id({ resolve: (r) => r.payload.item_id }),
    target: t.field({ type: VerdictTarget, resolve: (r) => r.payload.target }),
    round: t.int({
      description: "The approval round it reminds of (0 first; a rework's is higher).",
      resolve: (r) => r.payload.round,
    }),
    deadline: t.field({ type: "DateTime", resolve: (r) => new Date(r.payload.deadline) }),
    ts: t.field({ type: "DateTime", resolve: (r) => r.event.ts }),
    approval: t.prismaField({
      type: "Approval",
      nullable: true,
      description: "The approval row as it is now: a reminder whose approval was decided since reminds of nothing.",
      resolve: (query, r, _args, ctx) =>
        ctx.app.prisma.approval.findUnique({
          ...query,
          where: { itemId_target: { itemId: r.payload.item_id, target: r.payload.target } },
        }),
    }),
  }),
});

builder.queryFields((t) => ({
  approvalRemindersCursor: t.int({
    authScopes: { read: true },
    description: "The newest reminder's global id: subscribe to approvalReminders(after: it) for the ones to come.",
    resolve: (_root, _args, ctx) => ctx.app.log.lastNamedId(NAMES),
  }),
}));

builder.subscriptionFields((t) => ({
  approvalReminders: t.field({
    authScopes: { read: true },
    type: ApprovalReminder,
    description:
      "Reminders before approval windows close, across every list: those after global id `after` (default 0: all) from the log, " +
      "then live ones. Resume with the last id received; an id the stream never sent (negative, past its end) is a 400 bad_input.",
    args: { after: t.arg.int() },
    subscribe: async (_root, args, ctx) => {
      const after = await resumeAfter(args.after, { lastSeq: () => lastIdNamed(ctx.app, NAMES) });
      return abortableFollow((signal) => ctx.app.log.followNamed(NAMES, after, signal), reminders);
    },
    resolve: (reminder: ReminderShape) => reminder,
  }),
}));

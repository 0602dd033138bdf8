// The approvals feed: every approval that opens (item.triaged / item.answered asking for a verdict)
// and every one that closes (a verdict: approved, rejected, timeout), across all lists, in commit
// order, resumable by the log's global id like trustChanges. A client that keeps the pending set
// from it (opened adds, closed removes) always sees exactly what waits on the owner. The console's
// Approvals region starts from the pending rows instead of the whole history: approvalChangesCursor
// first, then approvals(status: pending), then this feed after that cursor.
import { builder } from "./builder.ts";
import { VerdictTarget } from "./verdicts.ts";
import { Verdict } from "./enums.ts";
import type { StoredEvent } from "../src/log/event-log.ts";
import type { Target, VerdictValue } from "../src/flock/events.ts";
import { abortableFollow, lastIdNamed, resumeAfter } from "./follow.ts";

/** The log events that open or close an approval. */
const APPROVAL_EVENT_NAMES = ["item.triaged", "item.answered", "verdict"] as const;

/** What a change to the pending set is: this feed's own reading of those events (changeOf). */
export const APPROVAL_CHANGE_KINDS = ["opened", "closed"] as const;

interface ApprovalEventPayload {
  list_id: string;
  item_id: string;
  target?: Target;
  verdict?: VerdictValue;
  needs_approval?: boolean;
}

interface ApprovalChangeShape {
  event: StoredEvent;
  payload: ApprovalEventPayload;
  change: (typeof APPROVAL_CHANGE_KINDS)[number];
  target: Target;
}

/** opened / closed, or null for an event that touches no owner approval (trust skipped it: auto). */
function changeOf(event: StoredEvent): ApprovalChangeShape | null {
  const payload = JSON.parse(event.payload) as ApprovalEventPayload;
  if (event.name === "verdict") {
    if (payload.verdict === "auto" || !payload.target) return null;
    return { event, payload, change: "closed", target: payload.target };
  }
  if (payload.needs_approval !== true) return null;
  return { event, payload, change: "opened", target: event.name === "item.triaged" ? "triage" : "output" };
}

async function* approvalChanges(events: AsyncGenerator<StoredEvent>): AsyncGenerator<ApprovalChangeShape> {
  for await (const event of events) {
    const change = changeOf(event);
    if (change) yield change;
  }
}

const ApprovalChangeKind = builder.enumType("ApprovalChangeKind", {
  description: "opened: a pending approval now waits on the owner; closed: it was decided (or timed out).",
  values: APPROVAL_CHANGE_KINDS,
});

const ApprovalChange = builder.objectRef<ApprovalChangeShape>("ApprovalChange").implement({
  description:
    "An approval that opened or closed. Keep the pending set: opened adds (itemId, target), closed removes it.",
  fields: (t) => ({
    id: t.int({ description: "The log's global id: pass it as `after` to resume.", resolve: (c) => c.event.id }),
    change: t.field({ type: ApprovalChangeKind, resolve: (c) => c.change }),
    listId: t.id({ resolve: (c) => c.payload.list_id }),
    itemId: t.id({ resolve: (c) => c.payload.item_id }),
    target: t.field({ type: VerdictTarget, resolve: (c) => c.target }),
    verdict: t.field({
      type: Verdict,
      nullable: true,
      description: "closed only: approved, rejected or timeout.",
      resolve: (c) => (c.change === "closed" ? (c.payload.verdict ?? null) : null),
    }),
    ts: t.field({ type: "DateTime", resolve: (c) => c.event.ts }),
    approval: t.prismaField({
      type: "Approval",
      nullable: true,
      description: "The approval row as it is now (deadline, status, and the item with its triage or answer).",
      resolve: (query, c, _args, ctx) =>
        ctx.app.prisma.approval.findUnique({
          ...query,
          where: { itemId_target: { itemId: c.payload.item_id, target: c.target } },
        }),
    }),
  }),
});

builder.queryFields((t) => ({
  approvalChangesCursor: t.int({
    authScopes: { read: true },
    description:
      "The newest approval event's global id. To show what waits without replaying history: read this first, then " +
      "approvals(status: pending), then subscribe to approvalChanges(after: this cursor); a change the read already " +
      "reflects may arrive again (key the pending set by itemId and target), and none can fall in between.",
    // The newest approval event's id, not the whole log's: approval events get their ids in commit
    // order (ORDERED_NAMES, the commit-order lock on PostgreSQL), so one still in flight always gets
    // a larger id than this. The log's newest id could belong to an unrelated event that committed
    // first, and a cursor taken from it would skip that approval change.
    // Read through the log (committed rows only), never a write connection that may hold an open transaction.
    resolve: (_root, _args, ctx) => ctx.app.log.lastNamedId(APPROVAL_EVENT_NAMES),
  }),
}));

builder.subscriptionFields((t) => ({
  approvalChanges: t.field({
    authScopes: { read: true },
    type: ApprovalChange,
    description:
      "Pending approvals as they open and close, across every list: those after global id `after` (default 0: all) from the log, " +
      "then live ones. Resume with the last id received; an id the stream never sent (negative, past its end) is a 400 bad_input.",
    args: { after: t.arg.int() },
    subscribe: async (_root, args, ctx) => {
      const after = await resumeAfter(args.after, { lastSeq: () => lastIdNamed(ctx.app, APPROVAL_EVENT_NAMES) });
      return abortableFollow((signal) => ctx.app.log.followNamed(APPROVAL_EVENT_NAMES, after, signal), approvalChanges);
    },
    resolve: (change: ApprovalChangeShape) => change,
  }),
}));

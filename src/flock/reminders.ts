// The reminder before an approval's window closes (docs/rules.md "Reminders"): CROWS_APPROVAL_REMINDER_MS
// before the deadline of a window longer than that, one `approval.reminder` event on the
// list's stream, which fans out as the webhook type of the same name and feeds the console's notice.
// A new event name beside docs/contract.md's, as the tool.* events are: a client that listens by
// the contract's names never hears it. At most one per approval round (the row's remindedAt, set in
// the event's own transaction), and none once the approval is decided or its deadline has passed.
import type { Target } from "./events.ts";

export const REMINDER_EVENT = "approval.reminder";

/**
 * When a reminder is due, in Unix ms: `leadMs` before the deadline. null: no reminder (a lead of 0,
 * or a window from `openedAt` no longer than the lead, whose reminder would come with the request).
 */
export function reminderDueMs(openedAt: Date, deadline: Date, leadMs: number): number | null {
  const windowMs = deadline.getTime() - openedAt.getTime();
  if (!(leadMs > 0) || windowMs <= leadMs) return null;
  return deadline.getTime() - leadMs;
}

/** The event's payload: list_id first, what waits and until when, then ts. */
export function reminderPayload(
  listId: string,
  facts: { itemId: string; target: Target; round: number; deadline: Date },
  at: Date,
): Record<string, unknown> {
  return {
    list_id: listId,
    item_id: facts.itemId,
    target: facts.target,
    round: facts.round,
    deadline: facts.deadline.toISOString(),
    ts: at.toISOString(),
  };
}

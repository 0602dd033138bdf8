// The webhook event types (docs/webhooks.md "Event types"), mapped from the log's own events. This
// file is the rule: which log event fans out as which type (`webhookTypeOf`, run by the outbox in
// the event's own transaction), and what each type's `data` adds to the event's payload (`dataOf`,
// run when a delivery is sent). `data` is always the stored payload first, so a field the log event
// carries (the actor of a verdict, once requests record one) reaches the receiver with no work here.

export const WEBHOOK_TYPES = [
  "approval.requested",
  "approval.decided",
  "approval.reminder",
  "list.finished",
  "item.skipped",
  "ask.opened",
  "ask.resolved",
  "crow.flagged",
  "trust.changed",
  "tool_call.requested",
  "tool_call.decided",
] as const;
export type WebhookType = (typeof WEBHOOK_TYPES)[number];

export const isWebhookType = (value: unknown): value is WebhookType =>
  typeof value === "string" && (WEBHOOK_TYPES as readonly string[]).includes(value);

/** Log events whose type never depends on their payload. */
const PLAIN: Record<string, WebhookType> = {
  "list.finished": "list.finished",
  "item.skipped": "item.skipped",
  "trust.changed": "trust.changed",
  // An ask nobody answered in its window: silence is no (src/nests/obligations/ask-expiry.ts).
  "ask.expired": "ask.resolved",
  // A tool call waiting on the owner, and its one decision (docs/tools.md "The approval of a call").
  "tool.asked": "tool_call.requested",
  "tool.decided": "tool_call.decided",
  // An approval's window nears its end (docs/rules.md "Reminders"): at most one per round.
  "approval.reminder": "approval.reminder",
};

/** Every log event name that may fan out (recover reads only these back from the log). */
export const SOURCE_EVENT_NAMES: readonly string[] = [
  ...Object.keys(PLAIN),
  "item.triaged",
  "item.answered",
  "verdict",
  "nest.message",
];

// A cheap look at the payload text before parsing it: most events of these names do not fan out.
const NEEDS_APPROVAL = /"needs_approval":true/;

/**
 * The type a log event fans out as, or null. Pure and cheap: it runs inside the append's transaction.
 * - item.triaged / item.answered that need approval: approval.requested (target triage / output);
 * - verdict, except `auto` (nothing was asked): approval.decided (`timeout` included);
 * - nest.message: an ask_owner is ask.opened, a flag is crow.flagged, an owner reply that refers to
 *   a message may resolve an ask (ask.resolved; the sender drops it unless it did);
 * - ask.expired (an ask's window ended unanswered): ask.resolved with verdict `timeout`;
 * - list.finished, item.skipped, trust.changed, approval.reminder: the same name;
 * - tool.asked / tool.decided (a tool call's approval): tool_call.requested / tool_call.decided.
 */
export function webhookTypeOf(name: string, payload: string): WebhookType | null {
  const plain = PLAIN[name];
  if (plain) return plain;
  switch (name) {
    case "item.triaged":
    case "item.answered":
      return NEEDS_APPROVAL.test(payload) ? "approval.requested" : null;
    case "verdict":
      return payload.includes('"verdict":"auto"') ? null : "approval.decided";
    case "nest.message": {
      const record = parse(payload);
      if (record.kind === "ask_owner") return "ask.opened";
      if (record.kind === "flag") return "crow.flagged";
      if (record.author === "owner" && typeof record.refers_to === "string" && record.refers_to !== "")
        return "ask.resolved";
      return null;
    }
    default:
      return null;
  }
}

function parse(payload: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(payload);
    return value !== null && typeof value === "object" ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** What the sender looks up to fill a type's data (context.ts reads it through the sender's store). */
export interface DataContext {
  /**
   * The item's text and, when it still waits, its approval's deadline; `announcedAt` (the
   * announcement's ts) tells a rework's round from the first (docs/rules.md "Rework").
   */
  approval(
    itemId: string,
    target: string,
    announcedAt?: string,
  ): Promise<{ text: string; deadline: Date | null; pending: boolean } | null>;
  /** The ask a reply refers to: whether this reply approved it, and its phrase. */
  askResolvedBy(askId: string, replyId: string): Promise<{ phrase: string } | null>;
  /** When an ask opened at `ts` stops taking replies. */
  askDeadline(ts: string): Date;
  /** The decide links of one approval or ask, signed for the endpoint they go out on. */
  links(subject: LinkSubject, deadline: Date): { approve_url: string; reject_url?: string };
}

export type LinkSubject =
  | { kind: "approval"; itemId: string; target: string }
  | { kind: "ask"; nestId: string; msgId: string }
  | { kind: "tool"; callId: string };

/**
 * The `data` of a delivery: the log event's payload plus what the type adds, or null when the
 * delivery should not be sent after all (an owner reply that resolved no ask).
 */
export async function dataOf(
  type: string,
  payloadText: string,
  context: DataContext,
): Promise<Record<string, unknown> | null> {
  const payload = parse(payloadText);
  switch (type) {
    case "approval.requested": {
      const itemId = String(payload.item_id ?? "");
      const target = "answer" in payload ? "output" : "triage";
      const found = await context.approval(itemId, target, String(payload.ts ?? ""));
      const proposal =
        target === "triage"
          ? { mode: payload.mode, task_type: payload.task_type, subtasks: payload.subtasks, reason: payload.reason }
          : { answer: payload.answer, crows: payload.crows };
      const data: Record<string, unknown> = { ...payload, item: itemId, text: found?.text ?? "", target, proposal };
      data.list = payload.list_id;
      if (found?.deadline) {
        data.deadline = found.deadline.toISOString();
        Object.assign(data, context.links({ kind: "approval", itemId, target }, found.deadline));
      }
      return data;
    }
    case "approval.reminder": {
      // Sent only while the round it reminds of still waits: decided since (or reopened for another
      // round, with another deadline), there is nothing left to remind of, and the delivery is dropped.
      const itemId = String(payload.item_id ?? "");
      const target = payload.target === "output" ? "output" : "triage";
      const found = await context.approval(itemId, target, `reminder ${String(payload.ts ?? "")}`);
      if (!found?.pending || !found.deadline || found.deadline.toISOString() !== payload.deadline) return null;
      return {
        ...payload,
        item: itemId,
        text: found.text,
        list: payload.list_id,
        ...context.links({ kind: "approval", itemId, target }, found.deadline),
      };
    }
    case "ask.opened": {
      const deadline = context.askDeadline(String(payload.ts ?? ""));
      const links = context.links(
        { kind: "ask", nestId: String(payload.nest_id ?? ""), msgId: String(payload.msg_id ?? "") },
        deadline,
      );
      return { ...payload, deadline: deadline.toISOString(), approve_url: links.approve_url };
    }
    case "ask.resolved": {
      // From ask.expired: the event already is the data (ask_id, approval_phrase, deadline,
      // verdict "timeout", resolved "rejected"), as a timeout verdict is approval.decided's.
      if (payload.verdict === "timeout") return payload;
      // From the owner's reply: its message record, and what it resolved.
      const resolved = await context.askResolvedBy(String(payload.refers_to ?? ""), String(payload.msg_id ?? ""));
      if (!resolved) return null;
      return {
        ...payload,
        ask_id: payload.refers_to,
        approval_phrase: resolved.phrase,
        resolved: "approved",
        verdict: "approved",
      };
    }
    case "tool_call.requested": {
      // The event carries its deadline; the links decide this one call (docs/tools.md).
      const deadline = new Date(String(payload.deadline ?? ""));
      if (Number.isNaN(deadline.getTime())) return payload;
      return { ...payload, ...context.links({ kind: "tool", callId: String(payload.call_id ?? "") }, deadline) };
    }
    default:
      return payload;
  }
}

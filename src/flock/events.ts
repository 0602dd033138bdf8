// The list events of docs/contract.md, one builder each, with the payload fields in the contract's order.
// Every payload carries list_id and ts (RFC 3339). The stream a list's events live on is
// listStream (src/base/streams.ts). The closed sets the payloads carry are arrays here (the schema's
// enums are made from them), each with its type.
import { withActor, type Actor } from "../base/actor.ts";
import type { TriageMode } from "../base/triage.ts";

export type Mode = TriageMode;
/** What a verdict judges: the Sentry's triage call, or the crows' output. */
export const TARGETS = ["triage", "output"] as const;
export type Target = (typeof TARGETS)[number];
/** A verdict: the owner's approved or rejected, a timeout (silence, counted as a rejection), or auto (trust skipped the owner). */
export const VERDICTS = ["approved", "rejected", "timeout", "auto"] as const;
export type VerdictValue = (typeof VERDICTS)[number];
/** Why an item was skipped: its triage rejected or timed out, the budget was spent, or the work failed. */
export const SKIP_REASONS = ["rejected", "timeout", "budget", "failure"] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

export type ListEvent =
  | {
      name: "list.started";
      payload: { items: Array<{ item_id: string; text: string }>; requester: string; nest_id: string };
    }
  | {
      name: "item.triaged";
      payload: {
        item_id: string;
        mode: Mode;
        task_type: string;
        subtasks: string[];
        reason: string;
        needs_approval: boolean;
      };
    }
  | { name: "crow.flying"; payload: { item_id: string; crow: string; borrowed: boolean } }
  | { name: "crow.landed"; payload: { item_id: string; crow: string; ok: boolean; tokens: number; error?: string } }
  | { name: "item.answered"; payload: { item_id: string; answer: string; crows: string[]; needs_approval: boolean } }
  | { name: "verdict"; payload: { item_id: string; target: Target; verdict: VerdictValue } }
  | { name: "trust.changed"; payload: { holder: string; task_type: string; from: number; to: number } }
  | { name: "item.skipped"; payload: { item_id: string; reason: SkipReason } }
  | { name: "requester.pranked"; payload: { message: string; cooldown_s: number } }
  | { name: "crow.banter"; payload: { item_id: string; crow: string; to: string; text: string } }
  | { name: "list.finished"; payload: { tokens_used: number; token_budget: number } };

export type ListEventName = ListEvent["name"];
export type PayloadOf<N extends ListEventName> = Extract<ListEvent, { name: N }>["payload"];

/**
 * A list event's wire payload: list_id first, the event's own fields in table order, then ts; an
 * event a request (or the system deciding) caused appends its actor after them (docs/rules.md "Actors").
 */
export function listEventPayload<N extends ListEventName>(
  listId: string,
  payload: PayloadOf<N>,
  now = new Date(),
  actor?: Actor,
): Record<string, unknown> {
  const wire: Record<string, unknown> = { list_id: listId, ...payload, ts: now.toISOString() };
  return withActor(wire, actor);
}

// The list events of EVENTS.md, one builder each, with the payload fields in the contract's order.
// Every payload carries list_id and ts (RFC 3339). The stream a list's events live on is
// listStream (src/base/streams.ts).
export type Mode = "solo" | "split" | "murder";
export type Target = "triage" | "output";
export type VerdictValue = "approved" | "rejected" | "auto" | "timeout";
export type SkipReason = "rejected" | "timeout" | "budget" | "failure";

import { withActor, type Actor } from "../base/actor.ts";

export type ListEvent =
  | { name: "list.started"; payload: { items: Array<{ item_id: string; text: string }>; requester: string; nest_id: string } }
  | { name: "item.triaged"; payload: { item_id: string; mode: Mode; task_type: string; subtasks: string[]; reason: string; needs_approval: boolean } }
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
export function listEventPayload<N extends ListEventName>(listId: string, payload: PayloadOf<N>, now = new Date(), actor?: Actor): Record<string, unknown> {
  const wire: Record<string, unknown> = { list_id: listId, ...payload, ts: now.toISOString() };
  return withActor(wire, actor);
}

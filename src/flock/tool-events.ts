// The events of a flight's tool calls (docs/tools.md "In the log"), on the list's own stream beside
// docs/contract.md's. They are new names, never new fields or values on docs/contract.md's events, so a client
// built on docs/contract.md alone (an EventSource listening by name) never hears them:
//   tool.asked     an `ask` call parks for the owner's approval, until `deadline`;
//   tool.decided   its one decision: approved, refused (with the owner's reason) or timeout;
//   tool.called    a call goes out (its "started" record committed with it), with how it was allowed;
//   tool.returned  its end: ok and a bounded result, or a named error (tool_outcome_unknown for a
//                  call whose end was never recorded).
// Arguments and results on events are bounded summaries; the whole arguments are on the approval.
// A nest crow's calls (answering a request, docs/tools.md "Nest crows with tools") go on the nest's
// side log instead, `nest_id` first and `refers_to` (the request) in place of `item_id`.
import { withActor, type Actor } from "../base/actor.ts";
import { listStream, watchStream } from "../base/streams.ts";

export const TOOL_EVENT_NAMES = ["tool.asked", "tool.decided", "tool.called", "tool.returned"] as const;
export type ToolEventName = (typeof TOOL_EVENT_NAMES)[number];

/** How a call that went out was allowed: its policy, a standing permission, or the owner's approval. */
export const TOOL_ALLOWANCES = ["allow", "permission", "approved"] as const;
export type ToolAllowance = (typeof TOOL_ALLOWANCES)[number];

export const TOOL_DECISIONS = ["approved", "refused", "timeout"] as const;
export type ToolDecision = (typeof TOOL_DECISIONS)[number];

/** The longest argument or result summary an event carries (characters). */
export const SUMMARY_CHARS = 512;

/** Where a call was made: a list flight's (nestId "") or a nest crow's answer to a request (listId ""). */
export interface CallPlace {
  listId: string;
  nestId: string;
}

/** A call's stream: its list's, or, for a nest crow's call, the nest's side log (never the nest stream, whose seq is the msg number). */
export const toolStreamOf = (place: CallPlace): string =>
  place.nestId !== "" ? watchStream(place.nestId) : listStream(place.listId);

export type ToolCallFacts = ({ item_id: string } | { refers_to: string }) & {
  call_id: string;
  crow: string;
  server: string;
  tool: string;
};

export type ToolEvent =
  | { name: "tool.asked"; payload: ToolCallFacts & { args: string; deadline: string } }
  | {
      name: "tool.decided";
      payload: ToolCallFacts & { decision: ToolDecision; reason: string | null; always: boolean };
    }
  | {
      name: "tool.called";
      payload: ToolCallFacts & { args: string; allowed_by: ToolAllowance; approved_by: Actor | null };
    }
  | {
      name: "tool.returned";
      payload: ToolCallFacts & { ok: boolean; result: string; error: string | null; duration_ms: number };
    };

/**
 * A tool event's wire payload: list_id (a nest crow's call: nest_id) first, its fields, ts, then the
 * actor of a request that caused it.
 */
export function toolEventPayload<N extends ToolEventName>(
  place: CallPlace,
  payload: Extract<ToolEvent, { name: N }>["payload"],
  now = new Date(),
  actor?: Actor,
): Record<string, unknown> {
  const head = place.nestId !== "" ? { nest_id: place.nestId } : { list_id: place.listId };
  const wire: Record<string, unknown> = { ...head, ...payload, ts: now.toISOString() };
  return withActor(wire, actor);
}

/** A bounded, one-line summary of a call's arguments or result for an event. */
export function summary(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= SUMMARY_CHARS ? flat : `${flat.slice(0, SUMMARY_CHARS - 1)}…`;
}

/** The facts every tool event of a call carries, in their wire order (a nest crow's: the request it answers). */
export function toolCallFacts(
  call: { itemId: string; nestId: string; crow: string; serverName: string; tool: string },
  id: string,
): ToolCallFacts {
  const rest = { call_id: id, crow: call.crow, server: call.serverName, tool: call.tool };
  return call.nestId !== "" ? { refers_to: call.itemId, ...rest } : { item_id: call.itemId, ...rest };
}

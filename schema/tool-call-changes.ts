// The tool-call feed: every `ask` call that parks for the owner (tool.asked) and its one decision
// (tool.decided: approved, refused, timeout), across all lists, in commit order, resumable by the
// log's global id like approvalChanges. The console keeps its tool-call cards from it: the pending
// calls at load (pendingToolCalls after toolCallChangesCursor), then this feed after that cursor.
// Also what a card shows beside the call: the item's text and, once decided, who decided and how.
import { builder } from "./builder.ts";
import { ActorRef } from "./actor.ts";
import { ToolCall } from "./tool-calls.ts";
import type { StoredEvent } from "../src/log/event-log.ts";
import { actorOfColumns, SYSTEM, type Actor } from "../src/base/actor.ts";
import { abortableFollow, lastIdNamed, resumeAfter } from "./follow.ts";

/** The log events that open or close a tool call's approval. */
const TOOL_CALL_EVENT_NAMES = ["tool.asked", "tool.decided"] as const;

export const TOOL_CALL_CHANGE_KINDS = ["asked", "decided"] as const;

interface ToolCallEventPayload {
  list_id: string;
  item_id: string;
  call_id: string;
  decision?: string;
  reason?: string | null;
  always?: boolean;
  actor?: Actor;
}

interface ToolCallChangeShape {
  event: StoredEvent;
  payload: ToolCallEventPayload;
  change: (typeof TOOL_CALL_CHANGE_KINDS)[number];
}

async function* toolCallChanges(events: AsyncGenerator<StoredEvent>): AsyncGenerator<ToolCallChangeShape> {
  for await (const event of events) {
    const payload = JSON.parse(event.payload) as ToolCallEventPayload;
    yield { event, payload, change: event.name === "tool.asked" ? "asked" : "decided" };
  }
}

builder.objectFields(ToolCall, (t) => ({
  itemText: t.string({
    nullable: true,
    description: "The text of the item whose flight asked for the call (null if the item is gone).",
    resolve: async (call, _args, ctx) =>
      (await ctx.app.prisma.item.findUnique({ where: { id: call.itemId }, select: { text: true } }))?.text ?? null,
  }),
  always: t.exposeBoolean("always", {
    description: "Approved always, for this crow and task type: it granted a standing permission.",
  }),
  decidedAt: t.field({ type: "DateTime", nullable: true, resolve: (call) => call.decidedAt }),
  decidedBy: t.field({
    type: ActorRef,
    nullable: true,
    description: "Who decided it (system: the window closed); null while it waits.",
    resolve: (call) => (call.decidedAt ? actorOfColumns(call) : null),
  }),
}));

const ToolCallChangeKind = builder.enumType("ToolCallChangeKind", {
  description: "asked: a tool call now waits on the owner; decided: it was approved, refused or timed out.",
  values: TOOL_CALL_CHANGE_KINDS,
});

const ToolCallChange = builder.objectRef<ToolCallChangeShape>("ToolCallChange").implement({
  description: "A tool call that was asked or decided. Keep the waiting set: asked adds callId, decided removes it.",
  fields: (t) => ({
    id: t.int({ description: "The log's global id: pass it as `after` to resume.", resolve: (c) => c.event.id }),
    change: t.field({ type: ToolCallChangeKind, resolve: (c) => c.change }),
    listId: t.id({ resolve: (c) => c.payload.list_id }),
    itemId: t.id({ resolve: (c) => c.payload.item_id }),
    callId: t.id({ resolve: (c) => c.payload.call_id }),
    decision: t.string({
      nullable: true,
      description: "decided only: approved, refused or timeout.",
      resolve: (c) => c.payload.decision ?? null,
    }),
    reason: t.string({
      nullable: true,
      description: "decided only: the refusal's reason.",
      resolve: (c) => c.payload.reason ?? null,
    }),
    always: t.boolean({
      description: "decided only: approved always (a standing permission).",
      resolve: (c) => c.payload.always === true,
    }),
    decidedBy: t.field({
      type: ActorRef,
      nullable: true,
      description: "decided only: who decided (the event's actor; system for a timeout).",
      resolve: (c) => (c.change === "decided" ? (c.payload.actor ?? SYSTEM) : null),
    }),
    ts: t.field({ type: "DateTime", resolve: (c) => c.event.ts }),
    call: t.field({
      type: ToolCall,
      nullable: true,
      description: "The call as it is now (its server, tool, whole arguments, deadline and status).",
      resolve: (c, _args, ctx) => ctx.app.prisma.toolCall.findUnique({ where: { id: c.payload.call_id } }),
    }),
  }),
});

builder.queryFields((t) => ({
  toolCallChangesCursor: t.int({
    authScopes: { read: true },
    description:
      "The newest tool.asked or tool.decided event's global id. To show what waits without replaying history: read this " +
      "first, then pendingToolCalls, then subscribe to toolCallChanges(after: this cursor); key the waiting set by callId.",
    resolve: (_root, _args, ctx) => ctx.app.log.lastNamedId(TOOL_CALL_EVENT_NAMES),
  }),
}));

builder.subscriptionFields((t) => ({
  toolCallChanges: t.field({
    authScopes: { read: true },
    type: ToolCallChange,
    description:
      "Tool calls as they are asked and decided, across every list: those after global id `after` (default 0: all) from the log, " +
      "then live ones. Resume with the last id received; an id the stream never sent (negative, past its end) is a 400 bad_input.",
    args: { after: t.arg.int() },
    subscribe: async (_root, args, ctx) => {
      const after = await resumeAfter(args.after, { lastSeq: () => lastIdNamed(ctx.app, TOOL_CALL_EVENT_NAMES) });
      return abortableFollow(
        (signal) => ctx.app.log.followNamed(TOOL_CALL_EVENT_NAMES, after, signal),
        toolCallChanges,
      );
    },
    resolve: (change: ToolCallChangeShape) => change,
  }),
}));

// Tool calls over GraphQL (docs/tools.md "The approval of a call"): the calls waiting on the owner
// (with their whole arguments), decideToolCall (approve, refuse with a reason, or approve always
// for this crow and task type: the decide scope), and standing permissions, listed and revoked.
// REST: compat/tool-calls.ts.
import { builder, principalOfContext } from "./builder.ts";
import { BadInputError, NotFoundError } from "../src/base/errors.ts";
import type { ToolCall as ToolCallRow, ToolPermission as PermissionRow } from "../src/generated/prisma/client.ts";
import { TOOL_DECISIONS, type ToolDecision } from "../src/flock/tool-events.ts";

const ToolDecisionEnum = builder.enumType("ToolCallDecision", {
  description: "A tool call's one decision: approved, refused by the owner, or timeout (silence: a refusal).",
  values: TOOL_DECISIONS,
});

export const ToolCall = builder.objectRef<ToolCallRow>("ToolCall").implement({
  description: "A crow's call of a tool: waiting on the owner (asked), decided, started, returned or unknown.",
  fields: (t) => ({
    callId: t.exposeID("id"),
    listId: t.exposeID("listId", { description: 'The list; "" for a nest crow\'s call.' }),
    itemId: t.id({
      description: 'The item; "" for a nest crow\'s call.',
      resolve: (call) => (call.nestId === "" ? call.itemId : ""),
    }),
    crow: t.exposeString("crow"),
    taskType: t.exposeString("taskType"),
    serverId: t.exposeString("serverId"),
    server: t.exposeString("serverName"),
    tool: t.exposeString("tool"),
    args: t.field({
      type: "JSON",
      description: "Its arguments, whole (at most CROWS_TOOL_ARGS_BYTES of JSON).",
      resolve: (call) => parseJson(call.args),
    }),
    readOnly: t.exposeBoolean("readOnly"),
    status: t.exposeString("status", {
      description: "asked, approved, refused, timeout, ready, started, returned or unknown.",
    }),
    deadline: t.field({ type: "DateTime", nullable: true, resolve: (call) => call.deadline }),
    reason: t.exposeString("reason", { nullable: true }),
    askedAt: t.field({ type: "DateTime", resolve: (call) => call.createdAt }),
    nestId: t.exposeString("nestId", {
      description: "A nest crow's call (answering a request): its nest; \"\" for a list flight's.",
    }),
    refersTo: t.string({
      description: "A nest crow's call: the request it answers; \"\" for a list flight's.",
      resolve: (call) => (call.nestId === "" ? "" : call.itemId),
    }),
  }),
});

const ToolPermission = builder.objectRef<PermissionRow>("ToolPermission").implement({
  description: "A standing permission: this crow may call this tool for this task type without asking.",
  fields: (t) => ({
    permissionId: t.exposeID("id"),
    crow: t.exposeString("crow"),
    taskType: t.exposeString("taskType"),
    serverId: t.exposeString("serverId"),
    tool: t.exposeString("tool"),
    grantedAt: t.field({ type: "DateTime", resolve: (p) => p.grantedAt }),
    grantedBy: t.exposeString("grantedBy", { description: "The kind of actor who granted it." }),
    callId: t.exposeID("callId", { description: "The call whose approval granted it." }),
    revokedAt: t.field({ type: "DateTime", nullable: true, resolve: (p) => p.revokedAt }),
  }),
});

const Decided = builder.objectRef<{ callId: string; decision: ToolDecision }>("ToolCallDecided").implement({
  fields: (t) => ({
    callId: t.exposeID("callId"),
    decision: t.field({ type: ToolDecisionEnum, resolve: (d) => d.decision }),
  }),
});

builder.queryFields((t) => ({
  pendingToolCalls: t.field({
    authScopes: { read: true },
    type: [ToolCall],
    description: "Tool calls waiting on the owner, oldest first (REST: GET /api/tool-calls).",
    resolve: (_root, _args, ctx) => ctx.app.flock.toolCalls.pending(),
  }),
  toolPermissions: t.field({
    authScopes: { read: true },
    type: [ToolPermission],
    description: "Standing permissions, newest first; revoked: true lists revoked ones too.",
    args: { revoked: t.arg.boolean() },
    resolve: (_root, args, ctx) => ctx.app.flock.toolCalls.permissions.list(args.revoked === true),
  }),
}));

builder.mutationFields((t) => ({
  decideToolCall: t.field({
    authScopes: { decide: true },
    type: Decided,
    description:
      "Approve or refuse a waiting tool call (REST: POST /api/tool-calls/{call_id}/decision). always (with approve): a standing permission. NotFoundError when nothing waits on it.",
    args: {
      callId: t.arg.id({ required: true }),
      approve: t.arg.boolean({ required: true }),
      reason: t.arg.string({ description: "Why it was refused: the crow's next model call is told." }),
      always: t.arg.boolean(),
    },
    errors: { types: [BadInputError, NotFoundError], directResult: true },
    resolve: async (_root, args, ctx) => {
      const callId = String(args.callId);
      const decision = await ctx.app.flock.toolCalls.decide(
        callId,
        { approve: args.approve, reason: args.reason ?? undefined, always: args.always ?? undefined },
        principalOfContext(ctx).actor,
      );
      return { callId, decision };
    },
  }),
  revokeToolPermission: t.field({
    authScopes: { decide: true },
    type: ToolPermission,
    description: "Revokes a standing permission (REST: DELETE /api/tool-permissions/{id}): its tool asks again.",
    args: { id: t.arg.id({ required: true }) },
    errors: { types: [NotFoundError], directResult: true },
    resolve: async (_root, args, ctx) => {
      const id = String(args.id);
      await ctx.app.flock.toolCalls.permissions.revoke(id, principalOfContext(ctx).actor);
      const row = (await ctx.app.flock.toolCalls.permissions.list(true)).find((p) => p.id === id);
      if (!row) throw new NotFoundError(`No standing permission ${id}.`);
      return row;
    },
  }),
}));

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

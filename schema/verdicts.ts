// Approvals: one row per (item, target), pending until the owner (or the 10-minute timeout, or
// trust) decides it. postVerdict is the owner's answer.
import { builder, principalOfContext } from "./builder.ts";
import { NotFoundError } from "../src/base/errors.ts";
import { checkedMaxSize } from "./connection.ts";
import { pageLimit } from "../src/base/util/clamp.ts";
import { TARGETS, type Target } from "../src/flock/events.ts";
import { APPROVAL_STATUSES, type ApprovalStatus as Status } from "../src/flock/approvals.ts";
import { deciderColumns } from "../src/base/actor.ts";

export const VerdictTarget = builder.enumType("VerdictTarget", {
  description: "What is being judged: the Sentry's triage call or the crows' output.",
  values: TARGETS,
});

export const ApprovalStatus = builder.enumType("ApprovalStatus", {
  values: APPROVAL_STATUSES,
});

export const Approval = builder.prismaObject("Approval", {
  description: "A judgment the flock waits for (pending) or has recorded.",
  fields: (t) => ({
    id: t.exposeID("id"),
    itemId: t.exposeID("itemId"),
    target: t.field({ type: VerdictTarget, select: { target: true }, resolve: (a) => a.target as Target }),
    status: t.field({ type: ApprovalStatus, select: { status: true }, resolve: (a) => a.status as Status }),
    pending: t.boolean({ select: { status: true }, resolve: (a) => a.status === "pending" }),
    deadline: t.expose("deadline", { type: "DateTime", description: "When silence becomes a timeout (rejected)." }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    decidedAt: t.expose("decidedAt", { type: "DateTime", nullable: true }),
    round: t.exposeInt("round", {
      description: "Which try this is: 0 first; a rework opens the approval again, one round higher.",
    }),
    rework: t.exposeString("rework", {
      nullable: true,
      description:
        "What a rejection asking for another try got: granted, out_of_tries or out_of_budget; null when none was asked.",
    }),
    edit: t.field({
      type: "JSON",
      nullable: true,
      select: { edit: true },
      description:
        'What the owner changed before approving, {"before", "after"} (triage: mode, task_type, subtasks; output: answer); null when nothing.',
      resolve: (a) => (a.edit ? (JSON.parse(a.edit) as object) : null),
    }),
    reason: t.exposeString("reason", {
      nullable: true,
      description: "The reason given with an approved or rejected verdict (at most 1,000 characters); null when none.",
    }),
    item: t.relation("item"),
  }),
});

builder.queryFields((t) => ({
  approvalsConnection: t.prismaConnection(
    {
      authScopes: { read: true },
      type: "Approval",
      cursor: "id",
      description:
        "Approvals, oldest first, as a cursor connection; status: pending for what waits on the owner (at most 100 a page).",
      args: { status: t.arg({ type: ApprovalStatus }) },
      maxSize: checkedMaxSize,
      resolve: (query, _root, args, ctx) => {
        return ctx.app.prisma.approval.findMany({
          ...query,
          where: args.status == null ? {} : { status: args.status },
          orderBy: { id: "asc" },
        });
      },
      totalCount: (_root, args, ctx) =>
        ctx.app.prisma.approval.count({ where: args.status == null ? {} : { status: args.status } }),
    },
    { name: "ApprovalConnection" },
  ),
  approvals: t.prismaField({
    authScopes: { read: true },
    type: ["Approval"],
    deprecationReason: "Use approvalsConnection (cursor pages, pageInfo, totalCount).",
    description: "Approvals, oldest first; pass status: pending for what waits on the owner.",
    args: {
      status: t.arg({ type: ApprovalStatus }),
      limit: t.arg.int({ defaultValue: 100, description: "1 to 500." }),
    },
    resolve: (query, _root, args, ctx) =>
      ctx.app.prisma.approval.findMany({
        ...query,
        where: args.status == null ? {} : { status: args.status },
        orderBy: { id: "asc" },
        take: pageLimit(args.limit, 100, 500),
      }),
  }),
}));

builder.mutationFields((t) => ({
  postVerdict: t.prismaField({
    authScopes: { decide: true },
    type: "Approval",
    description:
      "The owner's answer to a pending approval (REST: POST /api/verdicts). NotFoundError when nothing waits.",
    args: {
      itemId: t.arg.id({ required: true }),
      target: t.arg({ type: VerdictTarget, required: true }),
      approve: t.arg.boolean({ required: true }),
      edit: t.arg({
        type: "JSON",
        description:
          'With approve: true, the owner\'s changes (docs/rules.md Edits): triage {"mode"?, "task_type"?, "subtasks"?}, output {"answer"}.',
      }),
      rework: t.arg.boolean({
        description: "With approve: false, ask for another try (docs/rules.md Rework); tries and budget permitting.",
      }),
      reason: t.arg.string({
        description:
          "Why, in the owner's words: optional, at most 1,000 characters after trimming (BadInputError past it).",
      }),
    },
    errors: { types: [NotFoundError], directResult: true },
    resolve: async (query, _root, args, ctx) => {
      const itemId = String(args.itemId);
      const decided = await ctx.app.flock.postVerdict({
        itemId,
        target: args.target,
        approve: args.approve,
        reason: args.reason,
        rework: args.rework,
        edit: args.edit,
        actor: principalOfContext(ctx).actor,
      });
      const row = await ctx.app.prisma.approval.findUniqueOrThrow({
        ...query,
        where: { itemId_target: { itemId, target: args.target } },
      });
      // A granted rework may have opened the row's next round already: answer this verdict's round.
      if (row.round === decided.round) return row;
      const { actor, ...columns } = decided;
      return { ...row, ...columns, ...deciderColumns(actor) };
    },
  }),
}));

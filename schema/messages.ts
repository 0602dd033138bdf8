// Nest messages over GraphQL: the records (with `resolved` computed at read time), the asks with
// their resolution, quarantines, the postMessage mutation (the same posting path and guardrails as
// POST /api/nests/{nest_id}/messages) and the nestMessages subscription, which replays from the
// durable log after a msg_id (or its number) and then follows live posts.
import { builder, principalOfContext } from "./builder.ts";
import { requirePostScope } from "../src/access/post-scope.ts";
import { Nest } from "./nests.ts";
import { ForbiddenError, NotFoundError, RateLimitedError } from "../src/base/errors.ts";
import type { App } from "../src/app.ts";
import type { StoredEvent } from "../src/log/event-log.ts";
import type { MessageEntry } from "../src/nests/message.ts";
import { msgIdOf, nestStream } from "../src/base/streams.ts";
import { abortableFollow, resumeAfter } from "./follow.ts";
import { pageLimit } from "../src/base/util/clamp.ts";
import { MessageKind, QuarantineStatus, TaggedBy } from "./enums.ts";
import { keyWhere, keyedConnection, totalCountOf, type ConnectionArgs } from "./connection.ts";

export const Message = builder.objectRef<MessageEntry>("Message").implement({
  description:
    "One nest message record (docs/contract.md payload table), as stored, with `resolved` computed when read.",
  fields: (t) => ({
    msgId: t.exposeID("msg_id", { description: "<nest_id>-<n>, numbered from 1 in nest order." }),
    nestId: t.exposeID("nest_id"),
    n: t.exposeInt("n", { description: "The message number: the resume point of nestMessages." }),
    kind: t.field({ type: MessageKind, resolve: (m) => m.kind as typeof MessageKind.$inferType }),
    author: t.exposeString("author"),
    text: t.exposeString("text"),
    to: t.exposeString("to", { description: 'The addressed member, or "".' }),
    refersTo: t.exposeString("refers_to", { description: 'The msg_id this responds to, or "".' }),
    taggedBy: t.field({ type: TaggedBy, resolve: (m) => m.tagged_by as typeof TaggedBy.$inferType }),
    mode: t.exposeString("mode", { description: 'A request\'s mode: solo, conspiracy, split; "" otherwise.' }),
    modeTaggedBy: t.exposeString("mode_tagged_by"),
    invited: t.exposeInt("invited", { description: "Conspiracy only: how many crows it expects." }),
    approvalPhrase: t.exposeString("approval_phrase", {
      description: "ask_owner only: the exact words that approve it.",
    }),
    resolved: t.exposeString("resolved", {
      description: '"" (nothing to resolve, or open), "approved" or "rejected" (unanswered past the window).',
    }),
    ts: t.field({ type: "DateTime", resolve: (m) => m.ts }),
    reason: t.string({
      nullable: true,
      description: "The owner's reason with a reply to an ask; null for none (and on every other message).",
      resolve: (m) => m.reason ?? null,
    }),
  }),
});

export const Quarantine = builder.prismaObject("Quarantine", {
  description:
    "A crow the Sentry flagged. It stays quarantined until the owner's exact reinstate; a retire keeps the mark.",
  fields: (t) => ({
    id: t.exposeID("id"),
    crow: t.exposeString("crow"),
    nestId: t.exposeString("nestId", { description: "The nest of the flag." }),
    flagMsgId: t.exposeString("flagMsgId"),
    askMsgId: t.exposeString("askMsgId", { description: "The Sentry's ask_owner that decides it." }),
    referent: t.exposeString("referent", { description: "The request whose claim or deliver breached." }),
    status: t.field({
      type: QuarantineStatus,
      select: { status: true },
      resolve: (q) => q.status as typeof QuarantineStatus.$inferType,
    }),
    retired: t.exposeBoolean("retired", {
      description: "The owner retired the crow (spun: deleted; persona: out of the nest).",
    }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    liftedAt: t.expose("liftedAt", { type: "DateTime", nullable: true }),
  }),
});

interface AskShape {
  message: MessageEntry;
}

const Ask = builder.objectRef<AskShape>("Ask").implement({
  description: "An ask_owner and its resolution.",
  fields: (t) => ({
    message: t.field({ type: Message, resolve: (a) => a.message }),
    resolved: t.string({ description: '"" while open, "approved" or "rejected".', resolve: (a) => a.message.resolved }),
    approvalPhrase: t.string({ resolve: (a) => a.message.approval_phrase }),
    deadline: t.field({
      type: "DateTime",
      description: "When an unanswered ask reads rejected.",
      resolve: (a, _args, ctx) => new Date(Date.parse(a.message.ts) + ctx.app.config.approvalWindowMs),
    }),
    approvedBy: t.field({
      type: Message,
      nullable: true,
      description: "The owner's reply that approved it.",
      resolve: async (a, _args, ctx) => {
        const ask = await ctx.app.prisma.message.findUnique({
          where: { id: a.message.msg_id },
          select: { approvedBy: true },
        });
        const reply = ask?.approvedBy
          ? await ctx.app.prisma.message.findUnique({ where: { id: ask.approvedBy } })
          : null;
        return reply ? ctx.app.chat.toEntry(reply) : null;
      },
    }),
    quarantine: t.prismaField({
      type: "Quarantine",
      nullable: true,
      description: "The quarantine a Sentry watchdog ask decides.",
      resolve: (query, a, _args, ctx) =>
        ctx.app.prisma.quarantine.findFirst({ ...query, where: { askMsgId: a.message.msg_id } }),
    }),
  }),
});

async function entries(
  app: App,
  nestId: string,
  where: Record<string, unknown>,
  after: number,
  limit: number,
): Promise<MessageEntry[]> {
  await app.chat.requireNest(nestId);
  const rows = await app.prisma.message.findMany({
    where: { nestId, n: { gt: after }, ...where },
    orderBy: { n: "asc" },
    take: limit,
  });
  return rows.map((row) => app.chat.toEntry(row));
}

/** A page of a nest's messages by number (the (nestId, n) unique index); totalCount is the last number. */
async function messagePage(app: App, nestId: string, args: ConnectionArgs) {
  await app.chat.requireNest(nestId);
  return keyedConnection<MessageEntry>(args, {
    name: "message",
    order: "asc",
    keyOf: (m) => m.n,
    read: async (range) => {
      const rows = await app.prisma.message.findMany({
        where: { nestId, n: keyWhere(range) },
        orderBy: { n: range.descending ? "desc" : "asc" },
        take: range.limit,
      });
      return rows.map((row) => app.chat.toEntry(row));
    },
    // Messages are numbered 1, 2, 3... in the nest with no gap: the last number is the count.
    totalCount: async () =>
      (await app.prisma.message.findFirst({ where: { nestId }, orderBy: { n: "desc" }, select: { n: true } }))?.n ?? 0,
  });
}

const MESSAGE_COUNT = "Every message of the nest (its last number).";

builder.queryFields((t) => ({
  messagesConnection: t.connection(
    {
      authScopes: { read: true },
      type: Message,
      description:
        "A nest's messages in msg_id order, as a cursor connection: last: 50 is the newest 50, before pages back (at most 100 a page).",
      args: { nestId: t.arg.id({ required: true }) },
      resolve: (_root, args, ctx) => messagePage(ctx.app, String(args.nestId), args),
    },
    {
      name: "MessageConnection",
      fields: (tc) => ({ totalCount: tc.int({ nullable: true, description: MESSAGE_COUNT, resolve: totalCountOf }) }),
    },
  ),
  messages: t.field({
    authScopes: { read: true },
    type: [Message],
    deprecationReason: "Use messagesConnection (newest first with last, pages back with before, pageInfo, totalCount).",
    description: "A nest's messages after number `after`, in msg_id order (REST: GET /api/nests/{nest_id}/messages).",
    args: {
      nestId: t.arg.id({ required: true }),
      after: t.arg.int({ defaultValue: 0 }),
      limit: t.arg.int({ defaultValue: 1000, description: "1 to 1000." }),
    },
    resolve: (_root, args, ctx) =>
      entries(ctx.app, String(args.nestId), {}, Math.max(0, args.after ?? 0), pageLimit(args.limit, 1000, 1000)),
  }),
  message: t.field({
    authScopes: { read: true },
    type: Message,
    nullable: true,
    args: { msgId: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => {
      const row = await ctx.app.prisma.message.findUnique({ where: { id: String(args.msgId) } });
      return row ? ctx.app.chat.toEntry(row) : null;
    },
  }),
  asks: t.field({
    authScopes: { read: true },
    type: [Ask],
    description: 'A nest\'s ask_owner messages with their resolution; `resolved` filters ("" for open asks).',
    args: { nestId: t.arg.id({ required: true }), resolved: t.arg.string() },
    resolve: async (_root, args, ctx) => {
      const asks = await entries(ctx.app, String(args.nestId), { kind: "ask_owner" }, 0, 10_000);
      return asks.filter((m) => args.resolved == null || m.resolved === args.resolved).map((message) => ({ message }));
    },
  }),
  quarantines: t.prismaField({
    authScopes: { read: true },
    type: ["Quarantine"],
    description: "Every quarantine, oldest first; filter by crow and/or status (quarantined, reinstated).",
    args: { crow: t.arg.string(), status: t.arg({ type: QuarantineStatus }) },
    resolve: (query, _root, args, ctx) =>
      ctx.app.prisma.quarantine.findMany({
        ...query,
        where: {
          ...(args.crow == null ? {} : { crow: args.crow }),
          ...(args.status == null ? {} : { status: args.status }),
        },
        orderBy: { id: "asc" },
      }),
  }),
}));

builder.objectField(Nest, "messagesConnection", (t) =>
  t.connection(
    {
      type: Message,
      description: "This nest's messages in msg_id order, as a cursor connection.",
      resolve: (nest, args, ctx) => messagePage(ctx.app, nest.id, args),
    },
    {
      name: "NestMessageConnection",
      fields: (tc) => ({ totalCount: tc.int({ nullable: true, description: MESSAGE_COUNT, resolve: totalCountOf }) }),
    },
  ),
);

builder.objectField(Nest, "messages", (t) =>
  t.field({
    type: [Message],
    deprecationReason: "Use messagesConnection.",
    description: "This nest's messages after number `after`, in order.",
    args: { after: t.arg.int({ defaultValue: 0 }), limit: t.arg.int({ defaultValue: 1000 }) },
    resolve: (nest, args, ctx) =>
      entries(ctx.app, nest.id, {}, Math.max(0, args.after ?? 0), pageLimit(args.limit, 1000, 1000)),
  }),
);

builder.mutationFields((t) => ({
  postMessage: t.field({
    authScopes: { write: true, decide: true },
    type: Message,
    description:
      "Posts a message (REST: POST /api/nests/{nest_id}/messages). NotFoundError: unknown nest; BadInputError: a broken guardrail; " +
      "ForbiddenError: the author is quarantined; RateLimitedError: the author is in a cooldown.",
    args: {
      nestId: t.arg.id({ required: true }),
      author: t.arg.string({ required: true }),
      text: t.arg.string({ required: true }),
      to: t.arg.string(),
      kind: t.arg.string({ description: "The poster's kind header." }),
      refersTo: t.arg.string(),
      approvalPhrase: t.arg.string({ description: "Honored only when the message is an ask_owner." }),
      mode: t.arg.string({ description: "A request's mode header: solo, conspiracy or split." }),
      invited: t.arg.int({ description: "How many crows a conspiracy invites." }),
      reason: t.arg.string({
        description:
          "The owner's reason with a reply to an ask (at most 1,000 characters); refused on any other message.",
      }),
    },
    errors: { types: [NotFoundError, ForbiddenError, RateLimitedError], directResult: true },
    resolve: async (_root, args, ctx) => {
      const nestId = String(args.nestId);
      const principal = principalOfContext(ctx);
      await requirePostScope(ctx.app.prisma, principal, nestId, { author: args.author, refers_to: args.refersTo });
      const record = await ctx.app.chat.post(nestId, {
        author: args.author,
        text: args.text,
        to: args.to ?? undefined,
        kind: args.kind ?? undefined,
        refers_to: args.refersTo ?? undefined,
        approval_phrase: args.approvalPhrase ?? undefined,
        mode: args.mode ?? undefined,
        invited: args.invited ?? undefined,
        reason: args.reason ?? undefined,
        actor: principal.actor,
      });
      const row = await ctx.app.prisma.message.findUniqueOrThrow({ where: { id: record.msg_id } });
      return ctx.app.chat.toEntry(row);
    },
  }),
}));

builder.subscriptionFields((t) => ({
  nestMessages: t.field({
    authScopes: { read: true },
    type: Message,
    description:
      "A nest's messages: those after `after` (a msg_id or its number; default: from the first) replayed from the log, then live ones. " +
      "To resume, pass the last msg_id you received.",
    args: { nestId: t.arg.id({ required: true }), after: t.arg.string() },
    subscribe: async (_root, args, ctx) => {
      const nestId = String(args.nestId);
      await ctx.app.chat.requireNest(nestId);
      // "launch-copy-3", "3" or "" -> 3 / 0.
      const after = await resumeAfter(args.after, {
        lastSeq: () => ctx.app.log.lastSeq(nestStream(nestId)),
        idOf: (seq) => msgIdOf(nestId, seq),
        prefix: nestId,
      });
      return abortableFollow((signal) => ctx.app.log.follow(nestStream(nestId), after, signal));
    },
    // `resolved` as of delivery, like every other read.
    resolve: async (event: StoredEvent, _args, ctx) => {
      const payload = JSON.parse(event.payload) as { msg_id: string };
      const row = await ctx.app.prisma.message.findUniqueOrThrow({ where: { id: payload.msg_id } });
      return ctx.app.chat.toEntry(row);
    },
  }),
}));

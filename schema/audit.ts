// Who did what: each approval's decider (the Actor type is schema/actor.ts) and auditEntries, the
// audit trail read from the durable log (src/access/audit.ts; REST: GET /api/audit).
import { builder } from "./builder.ts";
import { BadInputError } from "../src/base/errors.ts";
import { actorOfColumns } from "../src/base/actor.ts";
import { ActorKindEnum, ActorRef } from "./actor.ts";
import { auditEntries, type AuditEntry, type AuditPage } from "../src/access/audit.ts";

builder.prismaObjectField("Approval", "decidedBy", (t) =>
  t.field({
    type: ActorRef,
    nullable: true,
    description: "Who decided it; null while pending (and for approvals decided before deciders were kept).",
    select: { decidedBy: true, decidedByTokenId: true, decidedByTokenName: true, decidedByWebhookId: true },
    resolve: (a) => actorOfColumns(a),
  }),
);

const AuditEntryRef = builder.objectRef<AuditEntry>("AuditEntry").implement({
  description: "One event of the log that carries an actor.",
  fields: (t) => ({
    id: t.int({ description: "The log's global id.", resolve: (e) => e.id }),
    stream: t.exposeString("stream"),
    seq: t.exposeInt("seq"),
    kind: t.exposeString("kind", {
      description: "The event's name: verdict, list.started, nest.message, token.created, ...",
    }),
    ts: t.field({ type: "DateTime", resolve: (e) => e.ts }),
    actor: t.field({ type: ActorRef, resolve: (e) => e.actor }),
    payload: t.field({ type: "JSON", resolve: (e) => e.payload }),
  }),
});

const AuditPageRef = builder.objectRef<AuditPage>("AuditPage").implement({
  fields: (t) => ({
    entries: t.field({ type: [AuditEntryRef], resolve: (p) => p.entries }),
    nextCursor: t.int({
      nullable: true,
      description: "Pass as `before` for older entries; null at the start.",
      resolve: (p) => p.next_cursor,
    }),
  }),
});

builder.queryFields((t) => ({
  auditEntries: t.field({
    authScopes: { read: true },
    type: AuditPageRef,
    description:
      "Who approved what, when, with which token: events that carry an actor, newest first (REST: GET /api/audit).",
    args: {
      before: t.arg.int({ description: "A nextCursor from the page before." }),
      limit: t.arg.int({ description: "1 to 500, default 50." }),
      actorKind: t.arg({ type: ActorKindEnum }),
      tokenId: t.arg.string(),
      kinds: t.arg.stringList({ description: "Event names." }),
      since: t.arg({ type: "DateTime" }),
      until: t.arg({ type: "DateTime" }),
    },
    errors: { types: [BadInputError], directResult: true },
    resolve: (_root, args, ctx) =>
      auditEntries(ctx.app.prisma, {
        before: args.before ?? undefined,
        limit: args.limit ?? undefined,
        actorKind: args.actorKind ?? undefined,
        tokenId: args.tokenId ?? undefined,
        kinds: args.kinds ?? undefined,
        since: args.since ?? undefined,
        until: args.until ?? undefined,
      }),
  }),
}));

// Who did what: the Actor type (src/base/actor.ts), each approval's decider, and auditEntries,
// the audit trail read from the durable log (src/access/audit.ts; REST: GET /api/audit).
import { builder } from "./builder.ts";
import { BadInputError } from "../src/base/errors.ts";
import { ACTOR_KINDS, type Actor } from "../src/base/actor.ts";
import { auditEntries, type AuditEntry, type AuditPage } from "../src/access/audit.ts";

const ActorKindEnum = builder.enumType("ActorKind", {
  description: "owner: CROWS_TOKEN (or loopback with no token); token: a named token; system: the server (a timeout, trust); link: a webhook's decide link.",
  values: ACTOR_KINDS,
});

const ActorRef = builder.objectRef<Actor>("Actor").implement({
  description: "Who caused a write. A token's name is the one it had at the time.",
  fields: (t) => ({
    kind: t.field({ type: ActorKindEnum, resolve: (a) => a.kind }),
    tokenId: t.string({ nullable: true, resolve: (a) => a.token_id ?? null }),
    tokenName: t.string({ nullable: true, resolve: (a) => a.token_name ?? null }),
    webhookId: t.string({ nullable: true, resolve: (a) => a.webhook_id ?? null }),
  }),
});

builder.prismaObjectField("Approval", "decidedBy", (t) =>
  t.field({
    type: ActorRef,
    nullable: true,
    description: "Who decided it; null while pending (and for approvals decided before deciders were kept).",
    select: { decidedBy: true, decidedByTokenId: true, decidedByTokenName: true },
    resolve: (a) => {
      if (a.decidedBy === "") return null;
      const actor: Actor = { kind: a.decidedBy as Actor["kind"] };
      if (a.decidedByTokenId !== null) actor.token_id = a.decidedByTokenId;
      if (a.decidedByTokenName !== null) actor.token_name = a.decidedByTokenName;
      return actor;
    },
  }),
);

const AuditEntryRef = builder.objectRef<AuditEntry>("AuditEntry").implement({
  description: "One event of the log that carries an actor.",
  fields: (t) => ({
    id: t.int({ description: "The log's global id.", resolve: (e) => e.id }),
    stream: t.exposeString("stream"),
    seq: t.exposeInt("seq"),
    kind: t.exposeString("kind", { description: "The event's name: verdict, list.started, nest.message, token.created, ..." }),
    ts: t.field({ type: "DateTime", resolve: (e) => e.ts }),
    actor: t.field({ type: ActorRef, resolve: (e) => e.actor }),
    payload: t.field({ type: "JSON", resolve: (e) => e.payload }),
  }),
});

const AuditPageRef = builder.objectRef<AuditPage>("AuditPage").implement({
  fields: (t) => ({
    entries: t.field({ type: [AuditEntryRef], resolve: (p) => p.entries }),
    nextCursor: t.int({ nullable: true, description: "Pass as `before` for older entries; null at the start.", resolve: (p) => p.next_cursor }),
  }),
});

builder.queryFields((t) => ({
  auditEntries: t.field({
    type: AuditPageRef,
    description: "Who approved what, when, with which token: events that carry an actor, newest first (REST: GET /api/audit).",
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

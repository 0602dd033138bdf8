// Who caused a write (src/base/actor.ts) as GraphQL shows it: on the audit trail, on an approval
// (its decider) and on a trust-history entry (its verdict's decider).
import { builder } from "./builder.ts";
import { ACTOR_KINDS, type Actor } from "../src/base/actor.ts";

export const ActorKindEnum = builder.enumType("ActorKind", {
  description:
    "owner: CROWS_TOKEN (or loopback with no token); token: a named token; system: the server (a timeout, trust); link: a webhook's decide link.",
  values: ACTOR_KINDS,
});

export const ActorRef = builder.objectRef<Actor>("Actor").implement({
  description: "Who caused a write. A token's name is the one it had at the time.",
  fields: (t) => ({
    kind: t.field({ type: ActorKindEnum, resolve: (a) => a.kind }),
    tokenId: t.string({ nullable: true, resolve: (a) => a.token_id ?? null }),
    tokenName: t.string({ nullable: true, resolve: (a) => a.token_name ?? null }),
    webhookId: t.string({ nullable: true, resolve: (a) => a.webhook_id ?? null }),
  }),
});

// Who caused a write: the `actor` field appended to every event a request causes, stored on the
// approval it decides, and what the audit trail filters by (docs/rules.md "Actors").
//   owner:  CROWS_TOKEN, or anyone on loopback when no token is configured;
//   token:  a named token (its id, and its name as it was at the time);
//   system: the server itself (a timeout's verdict, trust skipping an approval);
//   link:   a webhook's decide link, naming the webhook it went out on (reserved, not yet used).
// No imports: every floor may use it.
export type ActorKind = "owner" | "token" | "system" | "link";

export const ACTOR_KINDS: readonly ActorKind[] = ["owner", "token", "system", "link"];

export interface Actor {
  kind: ActorKind;
  token_id?: string;
  token_name?: string;
  webhook_id?: string;
}

export const OWNER: Actor = Object.freeze({ kind: "owner" });
export const SYSTEM: Actor = Object.freeze({ kind: "system" });

export function tokenActor(tokenId: string, tokenName: string): Actor {
  return { kind: "token", token_id: tokenId, token_name: tokenName };
}

/** The actor with its fields in one fixed order (kind first), so stored payloads are comparable. */
export function actorWire(actor: Actor): Actor {
  const wire: Actor = { kind: actor.kind };
  if (actor.token_id !== undefined) wire.token_id = actor.token_id;
  if (actor.token_name !== undefined) wire.token_name = actor.token_name;
  if (actor.webhook_id !== undefined) wire.webhook_id = actor.webhook_id;
  return wire;
}

/** A payload with `actor` appended after every field it already has (EVENTS.md's fields keep their order). */
export function withActor<P extends object>(payload: P, actor: Actor | undefined): P & { actor?: Actor } {
  return actor === undefined ? payload : { ...payload, actor: actorWire(actor) };
}

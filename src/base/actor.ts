// Who caused a write: the `actor` field appended to every event a request causes, stored on the
// approval it decides, and what the audit trail filters by (docs/rules.md "Actors").
//   owner:  CROWS_TOKEN, or anyone on loopback when no token is configured;
//   token:  a named token (its id, and its name as it was at the time);
//   system: the server itself (a timeout's verdict, trust skipping an approval);
//   link:   a webhook's decide link, naming the webhook it went out on (src/webhooks/links.ts).
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

/**
 * The fields a verdict (or an ask's reply: its reason) may append after its actor (docs/rules.md
 * "Reasons"): the actor is the last key of every payload but for these, which only ever follow it.
 */
export const FIELDS_AFTER_ACTOR: readonly string[] = ["reason", "rework", "edited"];

/** Whether `payload`'s `actor` is its last key, or followed only by FIELDS_AFTER_ACTOR. */
export function actorIsLast(payload: Record<string, unknown>): boolean {
  const keys = Object.keys(payload);
  const at = keys.lastIndexOf("actor");
  return at >= 0 && keys.slice(at + 1).every((k) => FIELDS_AFTER_ACTOR.includes(k));
}

/** The actor with its fields in one fixed order (kind first), so stored payloads are comparable. */
export function actorWire(actor: Actor): Actor {
  const wire: Actor = { kind: actor.kind };
  if (actor.token_id !== undefined) wire.token_id = actor.token_id;
  if (actor.token_name !== undefined) wire.token_name = actor.token_name;
  if (actor.webhook_id !== undefined) wire.webhook_id = actor.webhook_id;
  return wire;
}

/** A payload with `actor` appended after every field it already has (docs/contract.md's fields keep their order). */
export function withActor<P extends object>(payload: P, actor: Actor | undefined): P & { actor?: Actor } {
  return actor === undefined ? payload : { ...payload, actor: actorWire(actor) };
}

/** An actor as Approval and TrustEntry keep it, in their `decidedBy` columns ("": none kept). */
export interface DeciderColumns {
  decidedBy: string;
  decidedByTokenId: string | null;
  decidedByTokenName: string | null;
  decidedByWebhookId: string | null;
}

export function deciderColumns(actor: Actor | null | undefined): DeciderColumns {
  return {
    decidedBy: actor?.kind ?? "",
    decidedByTokenId: actor?.token_id ?? null,
    decidedByTokenName: actor?.token_name ?? null,
    decidedByWebhookId: actor?.webhook_id ?? null,
  };
}

/** The actor the columns keep, in actorWire's order; null when none was kept (rows older than deciders). */
export function actorOfColumns(columns: DeciderColumns): Actor | null {
  if (columns.decidedBy === "") return null;
  const actor: Actor = { kind: columns.decidedBy as ActorKind };
  if (columns.decidedByTokenId !== null) actor.token_id = columns.decidedByTokenId;
  if (columns.decidedByTokenName !== null) actor.token_name = columns.decidedByTokenName;
  if (columns.decidedByWebhookId !== null) actor.webhook_id = columns.decidedByWebhookId;
  return actor;
}

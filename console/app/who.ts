// Who decided, in words: the owner, a named token as it was called then, a webhook's decide link,
// or the system (a timeout, or trust skipping the approval).
export interface ActorView {
  kind: string;
  tokenId?: string | null;
  tokenName?: string | null;
  webhookId?: string | null;
}

export function who(actor: ActorView): string {
  if (actor.kind === "token") return `token "${actor.tokenName ?? actor.tokenId ?? "?"}"`;
  if (actor.kind === "link") return `link of webhook ${actor.webhookId ?? "?"}`;
  return actor.kind;
}

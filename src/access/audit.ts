// The audit trail: "who approved what, when, with which token", read from the durable log itself
// (the Event table), never from a second copy. An entry is an event that carries an actor (a
// request's write, a system decision, a token change), newest first, paged by the log's global
// id: pass an answer's next_cursor as `before` for the next page.
//
// The actor is always the payload's last key (but for a verdict's reason, appended after it),
// serialised in one order (src/base/actor.ts), so a
// filter is a plain substring of the stored JSON (the same on SQLite and PostgreSQL); text inside
// a JSON string has its quotes escaped and can never match it. Each row is then checked exactly.
import type { PrismaClient } from "../generated/prisma/client.ts";
import { BadInputError } from "../base/errors.ts";
import { ACTOR_KINDS, actorIsLast, type Actor, type ActorKind } from "../base/actor.ts";

export interface AuditQuery {
  before?: number;
  limit?: number;
  actorKind?: ActorKind;
  tokenId?: string;
  /** Event names, e.g. verdict, list.started, nest.message, token.revoked. */
  kinds?: string[];
  since?: Date;
  until?: Date;
}

export interface AuditEntry {
  id: number;
  stream: string;
  seq: number;
  kind: string;
  ts: string;
  actor: Actor;
  payload: Record<string, unknown>;
}

export interface AuditPage {
  entries: AuditEntry[];
  /** Pass as `before` for older entries; null at the start of the log. */
  next_cursor: number | null;
}

const MAX_LIMIT = 500;

/** A REST query string as an AuditQuery; a 400 for a bad value. */
export function auditQueryOf(params: URLSearchParams): AuditQuery {
  const int = (name: string) => {
    const raw = params.get(name);
    if (raw === null || raw === "") return undefined;
    if (!/^\d{1,15}$/.test(raw)) throw new BadInputError(`"${name}" must be a whole number.`);
    return Number(raw);
  };
  const date = (name: string) => {
    const raw = params.get(name);
    if (raw === null || raw === "") return undefined;
    const at = new Date(raw);
    if (Number.isNaN(at.getTime())) throw new BadInputError(`"${name}" must be an RFC 3339 time.`);
    return at;
  };
  const actorKind = params.get("actor_kind") || undefined;
  const kinds = params
    .getAll("kind")
    .flatMap((k) => k.split(","))
    .map((k) => k.trim())
    .filter((k) => k !== "");
  return {
    before: int("before"),
    limit: int("limit"),
    actorKind: actorKind as ActorKind | undefined,
    tokenId: params.get("token_id") || undefined,
    kinds: kinds.length ? kinds : undefined,
    since: date("since"),
    until: date("until"),
  };
}

export async function auditEntries(prisma: PrismaClient, query: AuditQuery): Promise<AuditPage> {
  const limit = query.limit ?? 50;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT)
    throw new BadInputError(`"limit" must be from 1 to ${MAX_LIMIT}.`);
  if (query.actorKind !== undefined && !ACTOR_KINDS.includes(query.actorKind))
    throw new BadInputError(`"actor_kind" must be one of ${ACTOR_KINDS.join(", ")}.`);
  if (query.tokenId !== undefined && !/^tok_[0-9a-f]{16}$/.test(query.tokenId))
    throw new BadInputError('"token_id" must be a token id (tok_...).');
  if (query.tokenId !== undefined && query.actorKind !== undefined && query.actorKind !== "token")
    throw new BadInputError('"token_id" goes with actor kind "token" only.');
  const needle =
    query.tokenId !== undefined
      ? `"actor":{"kind":"token","token_id":"${query.tokenId}"`
      : query.actorKind !== undefined
        ? `"actor":{"kind":"${query.actorKind}"`
        : `"actor":{"kind":"`;
  const rows = await prisma.event.findMany({
    where: {
      payload: { contains: needle },
      ...(query.before !== undefined ? { id: { lt: query.before } } : {}),
      ...(query.kinds ? { name: { in: query.kinds } } : {}),
      ...(query.since || query.until
        ? { ts: { ...(query.since ? { gte: query.since } : {}), ...(query.until ? { lte: query.until } : {}) } }
        : {}),
    },
    orderBy: { id: "desc" },
    take: limit + 1,
  });
  const entries: AuditEntry[] = [];
  for (const row of rows.slice(0, limit)) {
    const payload = JSON.parse(row.payload) as Record<string, unknown>;
    const actor = payload.actor as Actor | undefined;
    if (!actor || typeof actor !== "object" || !actorIsLast(payload)) continue;
    if (query.actorKind !== undefined && actor.kind !== query.actorKind) continue;
    if (query.tokenId !== undefined && actor.token_id !== query.tokenId) continue;
    entries.push({
      id: row.id,
      stream: row.stream,
      seq: row.seq,
      kind: row.name,
      ts: row.ts.toISOString(),
      actor,
      payload,
    });
  }
  return { entries, next_cursor: rows.length > limit ? rows[limit - 1]!.id : null };
}

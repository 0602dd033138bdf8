// Named tokens (docs/security.md "Named tokens"): created with a name, scopes and an optional
// expiry, the secret (`crows_<40 base62>`) shown once and only its SHA-256 stored, listed without
// it, revoked for good. Every change is an event on the "tokens" stream (token.created,
// token.revoked) carrying its actor, so the audit trail reads it from the durable log.
//
// A presented secret is looked up by its digest: the database compares digests, never the secret,
// and an attacker cannot steer a digest's prefix, so the lookup opens no timing oracle on it.
// Revocation takes effect on the next request, on every instance and for the CLI's writes too:
// an answer is kept only while the database is unchanged (SQLite's data_version, which any
// connection's commit moves: src/storage/read-version.ts), so PostgreSQL re-checks the row on every
// request, and a revocation made anywhere is seen at once. Open streams are cut by the gate
// (src/server/token-streams.ts).
import { createHash, randomBytes, randomInt } from "node:crypto";
import type { PrismaClient } from "../generated/prisma/client.ts";
import type { EventLog } from "../log/event-log.ts";
import type { ReadVersion } from "../storage/read-version.ts";
import { BadInputError, ForbiddenError, NotFoundError } from "../base/errors.ts";
import { actorWire, type Actor, tokenActor } from "../base/actor.ts";
import { missingScopeMessage, normaliseScopes, scopesOfColumn, SCOPES, type Scope } from "./scopes.ts";

export const TOKENS_STREAM = "tokens";
export const TOKEN_CREATED = "token.created";
export const TOKEN_REVOKED = "token.revoked";

/** What a named token looks like: scanners can find a leaked one by its form. */
export const SECRET_SHAPE = /^crows_[A-Za-z0-9]{40}$/;
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const PREFIX_LENGTH = "crows_".length + 4;
const LAST_USED_EVERY_MS = 60_000;
const MAX_EXPIRES_S = 10 * 365 * 24 * 3600;
const CACHE_SIZE = 1000;

/** A token as listings show it: never the secret, never its digest. */
export interface TokenView {
  id: string;
  name: string;
  prefix: string;
  scopes: Scope[];
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
}

/** Who a valid secret belongs to. */
export interface TokenPrincipal {
  actor: Actor;
  scopes: readonly Scope[];
  tokenId: string;
  /** Epoch ms, or undefined for a token that never expires. */
  expiresAt: number | undefined;
}

type TokenRow = Awaited<ReturnType<PrismaClient["token"]["findUniqueOrThrow"]>>;

export const digestOf = (secret: string): string => createHash("sha256").update(secret, "utf8").digest("hex");

function base62(length: number): string {
  let out = "";
  for (let i = 0; i < length; i++) out += BASE62[randomInt(62)];
  return out;
}

function view(row: TokenRow): TokenView {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    scopes: scopesOfColumn(row.scopes),
    created_at: row.createdAt.toISOString(),
    expires_at: row.expiresAt?.toISOString() ?? null,
    last_used_at: row.lastUsedAt?.toISOString() ?? null,
    revoked_at: row.revokedAt?.toISOString() ?? null,
  };
}

/** A token's name, trimmed (the REST record runs these checks too: compat/tokens.ts). */
export function checkName(raw: unknown): string {
  if (typeof raw !== "string" || raw.trim() === "") throw new BadInputError('"name" must be a non-empty string.');
  const name = raw.trim();
  if (name.length > 64) throw new BadInputError('"name" may have at most 64 characters.');
  if (/[\u0000-\u001f\u007f]/.test(name)) throw new BadInputError('"name" may not hold control characters.');
  return name;
}

export function checkScopes(raw: unknown): Scope[] {
  const scopes = Array.isArray(raw) ? normaliseScopes(raw) : undefined;
  if (!scopes || scopes.length === 0)
    throw new BadInputError(`"scopes" must be a non-empty list of ${SCOPES.map((s) => `"${s}"`).join(", ")}.`);
  return scopes;
}

export function checkExpires(raw: unknown): number | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== "number" || !Number.isInteger(raw) || raw < 1 || raw > MAX_EXPIRES_S) {
    throw new BadInputError(`"expires_in_s" must be a whole number of seconds from 1 to ${MAX_EXPIRES_S}.`);
  }
  return raw;
}

export interface CreatedToken extends TokenView {
  /** Shown this once; only its digest is kept. */
  secret: string;
}

export class TokenStore {
  private readonly cache = new Map<string, { principal: TokenPrincipal; version: string }>();
  private readonly touched = new Map<string, number>();

  constructor(
    private readonly prisma: PrismaClient,
    private readonly log: EventLog,
    /** The database's version (src/storage/read-version.ts): an answer is kept only while it holds. */
    private readonly version: ReadVersion,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * A new token. `granter` is the scopes of whoever asks: a token never mints one with a scope it
   * does not hold itself (403 naming the scope).
   */
  async create(
    input: { name: unknown; scopes: unknown; expiresInS?: unknown },
    actor: Actor,
    granter: readonly Scope[] = SCOPES,
  ): Promise<CreatedToken> {
    const name = checkName(input.name);
    const scopes = checkScopes(input.scopes);
    const expiresInS = checkExpires(input.expiresInS);
    const lacking = scopes.find((scope) => !granter.includes(scope));
    if (lacking)
      throw new ForbiddenError(`${missingScopeMessage(lacking)} A token cannot grant a scope it does not hold.`);
    const secret = `crows_${base62(40)}`;
    const id = `tok_${randomBytes(8).toString("hex")}`;
    const createdAt = new Date(this.now());
    const expiresAt = expiresInS === undefined ? null : new Date(createdAt.getTime() + expiresInS * 1000);
    let row: TokenRow | undefined;
    await this.log.appendWith(TOKENS_STREAM, async (tx) => {
      row = await tx.token.create({
        data: {
          id,
          name,
          prefix: secret.slice(0, PREFIX_LENGTH),
          hash: digestOf(secret),
          scopes: scopes.join(","),
          createdAt,
          expiresAt,
        },
      });
      return [{ name: TOKEN_CREATED, payload: this.payload(row, createdAt, actor) }];
    });
    return { ...view(row!), secret };
  }

  async list(): Promise<TokenView[]> {
    const rows = await this.prisma.token.findMany({ orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
    return rows.map(view);
  }

  /** Revokes for good; NotFoundError for an unknown id. Revoking a revoked token changes nothing. */
  async revoke(id: unknown, actor: Actor): Promise<TokenView> {
    // The message never repeats what was sent: a secret pasted in place of an id stays out of errors.
    if (typeof id !== "string" || !/^tok_[0-9a-f]{16}$/.test(id))
      throw new NotFoundError("No such token: an id looks like tok_ and 16 hex digits.");
    const at = new Date(this.now());
    await this.log.appendWith(TOKENS_STREAM, async (tx) => {
      const moved = await tx.token.updateMany({ where: { id, revokedAt: null }, data: { revokedAt: at } });
      if (moved.count === 0) return [];
      return [
        { name: TOKEN_REVOKED, payload: this.payload(await tx.token.findUniqueOrThrow({ where: { id } }), at, actor) },
      ];
    });
    this.forget(id);
    const row = await this.prisma.token.findUnique({ where: { id } });
    if (!row) throw new NotFoundError(`No token ${id}.`);
    return view(row);
  }

  /** The principal a presented secret stands for, or undefined (unknown, revoked, expired). */
  async authenticate(secret: string): Promise<TokenPrincipal | undefined> {
    if (!SECRET_SHAPE.test(secret)) return undefined;
    const hash = digestOf(secret);
    const version = this.version.current();
    const cached = this.cache.get(hash);
    let principal: TokenPrincipal | undefined;
    if (cached && version !== null && cached.version === version) {
      principal = cached.principal;
    } else {
      const row = await this.prisma.token.findUnique({ where: { hash } });
      principal =
        row && row.revokedAt === null
          ? {
              actor: tokenActor(row.id, row.name),
              scopes: scopesOfColumn(row.scopes),
              tokenId: row.id,
              expiresAt: row.expiresAt?.getTime(),
            }
          : undefined;
      if (principal && version !== null) this.remember(hash, principal, version);
      if (!principal) this.cache.delete(hash);
    }
    if (!principal || (principal.expiresAt !== undefined && principal.expiresAt <= this.now())) return undefined;
    this.touch(principal.tokenId);
    return principal;
  }

  /** Whether a token still admits requests (for open streams); reads the row. */
  async stillValid(id: string): Promise<boolean> {
    const row = await this.prisma.token.findUnique({ where: { id }, select: { revokedAt: true, expiresAt: true } });
    return !!row && row.revokedAt === null && (row.expiresAt === null || row.expiresAt.getTime() > this.now());
  }

  /** Drops what this instance remembers of a token (another instance revoked it). */
  forget(id: string): void {
    for (const [hash, entry] of this.cache) if (entry.principal.tokenId === id) this.cache.delete(hash);
  }

  private remember(hash: string, principal: TokenPrincipal, version: string): void {
    if (this.cache.size >= CACHE_SIZE) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(hash, { principal, version });
  }

  /** Last use, written at most about once a minute per token (never on every request). */
  private touch(id: string): void {
    const now = this.now();
    if (now - (this.touched.get(id) ?? 0) < LAST_USED_EVERY_MS) return;
    this.touched.set(id, now);
    void this.prisma.token
      .updateMany({ where: { id }, data: { lastUsedAt: new Date(now) } })
      .catch(() => this.touched.delete(id));
  }

  private payload(row: TokenRow, at: Date, actor: Actor): Record<string, unknown> {
    return {
      token_id: row.id,
      name: row.name,
      prefix: row.prefix,
      scopes: scopesOfColumn(row.scopes),
      expires_at: row.expiresAt?.toISOString() ?? null,
      ts: at.toISOString(),
      actor: actorWire(actor),
    };
  }
}

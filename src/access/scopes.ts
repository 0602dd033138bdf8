// The scopes a token may hold: small and closed (docs/security.md "Scopes").
//   read:    queries, streams, exports, the console, the audit trail;
//   decide:  verdicts and replies to an owner ask;
//   write:   lists, nests, posts;
//   admin:   tokens (and webhooks);
//   metrics: GET /metrics only, for a scraper.
export type Scope = "read" | "decide" | "write" | "admin" | "metrics";

export const SCOPES: readonly Scope[] = ["read", "decide", "write", "admin", "metrics"];

export const isScope = (value: unknown): value is Scope =>
  typeof value === "string" && (SCOPES as readonly string[]).includes(value);

/** Scopes in SCOPES order, without repeats; undefined when any entry is not a scope. */
export function normaliseScopes(values: readonly unknown[]): Scope[] | undefined {
  if (!values.every(isScope)) return undefined;
  return SCOPES.filter((scope) => values.includes(scope));
}

/** The stored column (comma-separated) as scopes; unknown entries are dropped (never widened). */
export function scopesOfColumn(column: string): Scope[] {
  return SCOPES.filter((scope) => column.split(",").includes(scope));
}

/** The refusal's words: which scope is missing. */
export function missingScopeMessage(scope: Scope): string {
  return `This token lacks the "${scope}" scope needed here.`;
}

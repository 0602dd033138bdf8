// The export's lines: an event as one NDJSON line (its stored payload JSON inlined, not re-encoded),
// and the fixed CSV columns of verdicts and of the trust history (RFC 4180 quoting). The actor
// columns say who decided (src/base/actor.ts): the kind, and the token's id and name for a token. A
// verdict's is its event's; a ledger entry's is the one it keeps, the same verdict's decider (for
// the Sentry's record, whoever sent the reply to its ask); empty where none was kept.
import type { ExportedEvent } from "../src/log/export-pages.ts";
import type { TrustHistoryRow } from "../src/storage/trust-history.ts";
import type { Actor } from "../src/base/actor.ts";

export function eventLine(e: ExportedEvent): string {
  return `{"id":${e.id},"stream":${JSON.stringify(e.stream)},"seq":${e.seq},"name":${JSON.stringify(e.name)},"ts":${JSON.stringify(e.ts)},"payload":${e.payload}}\n`;
}

/** A field quoted when it holds a comma, a quote or a line break (the quote doubled). */
function csvField(value: string | number): string {
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvRow(fields: ReadonlyArray<string | number>): string {
  return `${fields.map(csvField).join(",")}\r\n`;
}

const ACTOR_COLUMNS = ["actor", "actor_token_id", "actor_token_name"] as const;

export const VERDICT_COLUMNS = ["event_id", "ts", "list_id", "item_id", "target", "verdict", ...ACTOR_COLUMNS] as const;

interface VerdictPayload {
  list_id?: string;
  item_id?: string;
  target?: string;
  verdict?: string;
  actor?: Actor;
  reason?: string;
}

/** ACTOR_COLUMNS' fields for an actor (none: empty). */
const actorFields = (actor: Actor | null | undefined): string[] => [
  actor?.kind ?? "",
  actor?.token_id ?? "",
  actor?.token_name ?? "",
];

/**
 * The columns are fixed; `?with=reason` appends one more, `reason` (the owner's words, empty when
 * none was given), last, so a reader of the fixed columns reads the same file.
 */
export const REASON_COLUMN = "reason";

export function verdictRow(e: ExportedEvent, withReason = false): string {
  const p = JSON.parse(e.payload) as VerdictPayload;
  return csvRow([
    e.id,
    e.ts,
    p.list_id ?? "",
    p.item_id ?? "",
    p.target ?? "",
    p.verdict ?? "",
    ...actorFields(p.actor),
    ...(withReason ? [p.reason ?? ""] : []),
  ]);
}

export const TRUST_HISTORY_COLUMNS = [
  "id",
  "at",
  "holder",
  "task_type",
  "verdict",
  "subject",
  "from",
  "to",
  ...ACTOR_COLUMNS,
] as const;

export function trustHistoryRow(e: TrustHistoryRow, withReason = false): string {
  return csvRow([
    ...[e.id, e.at, e.holder, e.taskType, e.verdict, e.subject, e.from, e.to, ...actorFields(e.actor)],
    ...(withReason ? [e.reason ?? ""] : []),
  ]);
}

// A nest message as it is stored and sent: its kinds, its ids and stream, the record's fields in
// the table's order, and the nest.message payload (docs/nests-chat.md "Storage and the stream").
import type { PrismaClient } from "../generated/prisma/client.ts";
import { CROW_KINDS } from "../classifier/questions.ts";
import { resolvedOf, type Resolved } from "./resolved.ts";
import { withActor, type Actor } from "../base/actor.ts";
import { withReason } from "../flock/reason.ts";

export const MAX_MESSAGE_CHARS = 2000;
export const MAX_PHRASE_CHARS = 200;
export const MESSAGE_EVENT = "nest.message";
export const KINDS = [...CROW_KINDS, "ask_owner", "nudge", "flag"] as const;
export type Kind = (typeof KINDS)[number];
/**
 * The server itself, on the wire: the author of its nudges and the tagger of the kinds it fixes.
 * The contract spells it "harness" (docs/contract.md); in this repository harness/ is the test harness,
 * so code says SERVER_VOICE and the console and docs say "the server".
 */
export const SERVER_VOICE = "harness";
/**
 * Who decided a message's kind (docs/contract.md Tagging, src/nests/tagging.ts): a sure Jev, the poster's
 * header, a sure Jev over a differing header, the default (say), or the server for its own kinds.
 */
export const TAGGED_BY = ["jev", "header", "disagreement", "default", SERVER_VOICE] as const;
export type TaggedBy = (typeof TAGGED_BY)[number];

/** The record of the Payload table, every field snake_case, in the table's order. */
export interface MessageRecord {
  msg_id: string;
  kind: string;
  author: string;
  text: string;
  to: string;
  refers_to: string;
  tagged_by: string;
  mode: string;
  mode_tagged_by: string;
  invited: number;
  approval_phrase: string;
  resolved: Resolved;
  /** The owner's reason with a reply to an ask (docs/rules.md "Reasons"): only when one was given, last. */
  reason?: string;
}

/** A record with its nest, number and time: what GraphQL serves. */
export interface MessageEntry extends MessageRecord {
  nest_id: string;
  n: number;
  ts: string;
}

export type MessageRow = Awaited<ReturnType<PrismaClient["message"]["findUniqueOrThrow"]>>;

/** The stored row as its record, with `resolved` as of `nowMs`. */
export function recordOf(row: MessageRow, nowMs: number, approvalWindowMs: number): MessageRecord {
  return {
    msg_id: row.id,
    kind: row.kind,
    author: row.author,
    text: row.text,
    to: row.to,
    refers_to: row.refersTo,
    tagged_by: row.taggedBy,
    mode: row.mode,
    mode_tagged_by: row.modeTaggedBy,
    invited: row.invited,
    approval_phrase: row.approvalPhrase,
    resolved: resolvedOf(row, nowMs, approvalWindowMs),
    ...(row.reason !== "" ? { reason: row.reason } : {}),
  };
}

/**
 * The nest.message payload: nest_id, the record's fields in table order, ts; then the actor of a
 * request's post; then, last, the owner's reason with a reply to an ask, when one was given.
 */
export function nestMessagePayload(
  nestId: string,
  record: MessageRecord,
  at: Date,
  actor?: Actor,
): Record<string, unknown> {
  const { reason, ...fields } = record;
  return withReason(withActor({ nest_id: nestId, ...fields, ts: at.toISOString() }, actor), reason);
}

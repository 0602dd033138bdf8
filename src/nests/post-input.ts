// What a client sends to post a message, and the checks of each field: every refusal is a 400
// with the rule in its text (docs/nests-chat.md "One posting path", "Kind headers", "`to` and
// `refers_to`").
import { BadInputError } from "../base/errors.ts";
import { CROW_KINDS, REQUEST_MODES, type RequestMode } from "../classifier/questions.ts";
import { KINDS, MAX_MESSAGE_CHARS, MAX_PHRASE_CHARS, type Kind } from "./message.ts";
import type { Actor } from "../base/actor.ts";
import { requesterKey } from "../flock/rate-limit.ts";
import { EMPTY_NAME } from "../flock/todo-text.ts";

/** Who a message may be addressed to besides members and the owner (docs/contract.md: addressable roles). */
export const ADDRESSABLE_ROLES: readonly string[] = ["Elder", "Quill", "Boss"];

/** What a client sends (REST body or GraphQL args), unchecked. */
export interface PostInput {
  author: unknown;
  text: unknown;
  to?: unknown;
  kind?: unknown;
  refers_to?: unknown;
  approval_phrase?: unknown;
  /** Extension: the mode header escape for a request (solo, conspiracy, split). */
  mode?: unknown;
  /** Extension: how many crows a conspiracy invites (1..CROWS_MURDER_SIZE). */
  invited?: unknown;
  /** The owner's reason with a reply to an ask (docs/rules.md "Reasons"); refused on anything else. */
  reason?: unknown;
  /** Who posted it through a request (appended to the event, never to the record). */
  actor?: Actor;
}

export function checkAuthor(raw: unknown): string {
  if (typeof raw !== "string" || raw.trim() === "")
    throw new BadInputError('"author" must be a non-empty string: "owner" or a member of the nest.');
  const author = raw.trim();
  if (author.length > 100) throw new BadInputError('"author" may have at most 100 characters.');
  // Authors share the requesters' rate-limit key, so an author with an empty key is refused alike.
  if (requesterKey(author) === "") throw new BadInputError(EMPTY_NAME("author"));
  return author;
}

export function checkText(raw: unknown, internal: boolean): string {
  if (typeof raw !== "string") throw new BadInputError('"text" must be a string of 1-2000 characters.');
  let text = raw.trim();
  // The server's own voices are clipped rather than refused: a long model reply still lands.
  if (internal && text.length > MAX_MESSAGE_CHARS) text = `${text.slice(0, MAX_MESSAGE_CHARS - 1).trimEnd()}…`;
  if (text.length < 1 || text.length > MAX_MESSAGE_CHARS) {
    throw new BadInputError(`"text" must be 1-${MAX_MESSAGE_CHARS} characters after trimming, got ${text.length}.`);
  }
  return text;
}

export function checkKindHeader(raw: unknown, forced: Kind | undefined): Kind | undefined {
  if (forced !== undefined) return forced;
  if (raw === undefined || raw === null || raw === "") return undefined;
  if (typeof raw !== "string" || !(KINDS as readonly string[]).includes(raw)) {
    throw new BadInputError(
      `"kind" must be one of ${CROW_KINDS.join(", ")} (or ask_owner for the owner, Quill and the Sentry).`,
    );
  }
  if (raw === "nudge") throw new BadInputError('"kind" nudge is posted by the harness only.');
  if (raw === "flag") throw new BadInputError('"kind" flag is posted by the Sentry only.');
  return raw as Kind;
}

export function checkOptionalString(raw: unknown, field: string): string {
  if (raw === undefined || raw === null) return "";
  if (typeof raw !== "string") throw new BadInputError(`"${field}" must be a string when given.`);
  return raw;
}

export function checkTo(raw: unknown, members: string[], internal: boolean): string {
  const to = checkOptionalString(raw, "to").trim().replace(/^@/, "");
  if (to === "" || internal) return to;
  if (to === "owner" || members.includes(to) || ADDRESSABLE_ROLES.includes(to)) return to;
  throw new BadInputError(
    `"to" must be "owner", a member of the nest or ${ADDRESSABLE_ROLES.join(", ")}; ${to} is none of them.`,
  );
}

export function checkPhrase(raw: unknown): string {
  const phrase = checkOptionalString(raw, "approval_phrase").trim();
  if (phrase.length < 1 || phrase.length > MAX_PHRASE_CHARS) {
    throw new BadInputError(
      `an ask_owner needs an "approval_phrase" of 1-${MAX_PHRASE_CHARS} characters: the exact words the owner must reply with.`,
    );
  }
  return phrase;
}

export function checkModeHeader(raw: unknown): RequestMode | undefined {
  if (raw === undefined || raw === null || raw === "") return undefined;
  if (typeof raw !== "string" || !(REQUEST_MODES as readonly string[]).includes(raw)) {
    throw new BadInputError(`"mode" must be one of ${REQUEST_MODES.join(", ")} when given.`);
  }
  return raw as RequestMode;
}

export function checkInvited(raw: unknown, cap: number): number | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== "number" || !Number.isInteger(raw) || raw < 1 || raw > cap) {
    throw new BadInputError(`"invited" must be a whole number from 1 to ${cap} (CROWS_MURDER_SIZE) when given.`);
  }
  return raw;
}

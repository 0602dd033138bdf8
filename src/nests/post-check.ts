// The first step of NestChat.post (chat.ts): every check a post passes before the classifier is
// asked, in docs/nests-chat.md "One posting path"'s order: the nest (404), the quarantine gate
// (403, before membership: a retired-but-quarantined crow reads 403), the text and the kind
// header, membership (400), `to`, `refers_to`, the approval phrase, the mode and invited headers.
import type { Config } from "../base/config.ts";
import type { PrismaClient } from "../generated/prisma/client.ts";
import { BadInputError, ForbiddenError } from "../base/errors.ts";
import { CROW_KINDS, type CrowKind, type RequestMode } from "../classifier/questions.ts";
import type { NestRecord, NestStore } from "./store.ts";
import { SERVER_VOICE, type Kind } from "./message.ts";
import { addressedIn } from "./addressing.ts";
import {
  checkAuthor,
  checkInvited,
  checkKindHeader,
  checkModeHeader,
  checkOptionalString,
  checkPhrase,
  checkText,
  checkTo,
  type PostInput,
} from "./post-input.ts";
import { ASK_ROLES, type Membership } from "./membership.ts";
import { readReason } from "../flock/reason.ts";

export interface PostChecks {
  nests: NestStore;
  membership: Membership;
  prisma: PrismaClient;
  config: Pick<Config, "murderSize">;
}

/** What of an internal post (chat.ts InternalPost) the checks read. */
interface InternalFlags {
  forcedKind?: Kind;
  quarantineDecline?: boolean;
  response?: boolean;
}

/** A post that passed every check before the classifier. */
export interface CheckedPost {
  nest: NestRecord;
  author: string;
  /** Under the quarantine gate (checked again inside the transaction). */
  gated: boolean;
  text: string;
  /** An ask_owner header honored for its poster. */
  asking: boolean;
  crowHeader: CrowKind | undefined;
  to: string;
  refersTo: string;
  phrase: string;
  modeHeader: RequestMode | undefined;
  invitedHeader: number | undefined;
  /** The owner's reason with a reply to an ask; "" for none. */
  reason: string;
}

export const quarantinedError = (author: string) =>
  new ForbiddenError(`${author} is quarantined pending the owner's decision.`);

export async function checkPost(
  checks: PostChecks,
  nestId: string,
  input: PostInput,
  internal: InternalFlags | undefined,
): Promise<CheckedPost> {
  const nest = await checks.nests.require(nestId);
  const author = checkAuthor(input.author);
  const gated = author !== "owner" && !(internal?.quarantineDecline && internal.forcedKind === "decline");
  if (gated && (await checks.membership.isQuarantined(author))) throw quarantinedError(author);
  const text = checkText(input.text, internal !== undefined);
  const header = checkKindHeader(input.kind, internal?.forcedKind);
  const members = await checks.membership.members(nest);
  const isMember = members.includes(author);
  // ask_owner is honored for the owner and the owner-facing roles only; a crow's is dropped.
  const asking =
    header === "ask_owner" && (author === "owner" || ASK_ROLES.includes(author) || author === SERVER_VOICE);
  const crowHeader: CrowKind | undefined =
    header !== undefined && (CROW_KINDS as readonly string[]).includes(header) ? (header as CrowKind) : undefined;
  await checks.membership.check(nest, author, isMember, asking, internal);
  // No `to`: a client's text that opens with @Name addresses that member or role (addressing.ts).
  const given = checkTo(input.to, members, internal !== undefined);
  const to = given !== "" || internal !== undefined ? given : addressedIn(text, members);
  const referent = await checkRefersTo(checks.prisma, nest.id, input.refers_to);
  const refersTo = referent?.id ?? "";
  const phrase =
    asking || internal?.forcedKind === "ask_owner"
      ? checkPhrase(input.approval_phrase)
      : checkOptionalString(input.approval_phrase, "approval_phrase");
  const modeHeader = checkModeHeader(input.mode);
  const invitedHeader = checkInvited(input.invited, checks.config.murderSize);
  const reason = checkReplyReason(input.reason, author, referent);
  return { nest, author, gated, text, asking, crowHeader, to, refersTo, phrase, modeHeader, invitedHeader, reason };
}

/**
 * A reason goes with the owner's reply to an ask only, bounded as a verdict's (the same check:
 * src/flock/reason.ts); absent, null or only spaces is none.
 */
function checkReplyReason(raw: unknown, author: string, referent: { kind: string } | null): string {
  const reason = readReason(raw);
  if (reason === undefined) return "";
  if (author !== "owner" || referent?.kind !== "ask_owner")
    throw new BadInputError(
      '"reason" goes with the owner\'s reply to an ask only (author "owner", refers_to an ask_owner).',
    );
  return reason;
}

/** `refers_to`, when given, must be a message of the same nest (400 otherwise); null when not given. */
async function checkRefersTo(
  prisma: PrismaClient,
  nestId: string,
  raw: unknown,
): Promise<{ id: string; kind: string } | null> {
  const refersTo = checkOptionalString(raw, "refers_to").trim();
  if (refersTo === "") return null;
  const row = await prisma.message.findUnique({ where: { id: refersTo }, select: { nestId: true, kind: true } });
  if (!row || row.nestId !== nestId)
    throw new BadInputError(`refers_to "${refersTo}" is not a message of nest "${nestId}".`);
  return { id: refersTo, kind: row.kind };
}

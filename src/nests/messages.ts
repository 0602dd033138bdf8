// Nest messages (EVENTS.md "Nest messages"): the one posting path every message takes, whoever
// posts it (the owner over REST or GraphQL, a crow answering through the must-respond loop, Quill,
// Boss, the Sentry). It checks the guardrails, tags the kind (and a request's mode) with one
// classifier call, stores the record and its `nest.message` event in one transaction (the event's
// seq is the message number n, so the SSE id is the msg_id), then hands the record to the
// listeners (responders, watchdog) in the background. `resolved` is computed at read time.
//
// Decisions where the contract is silent are listed in docs/nests-chat.md.
import { randomUUID } from "node:crypto";
import type { Config } from "../base/config.ts";
import type { PrismaClient } from "../generated/prisma/client.ts";
import type { EventLog, Tx } from "../log/event-log.ts";
import type { Classifier } from "../classifier/jev.ts";
import { BadInputError, ForbiddenError, RateLimitedError } from "../base/errors.ts";
import { CROW_KINDS, REQUEST_MODES, bandedChoice, messageState, modeQuestions, tagQuestions, type CrowKind, type RequestMode } from "../classifier/questions.ts";
import { ROSTER, SERVICE_ROLE_NAMES } from "../base/roster.ts";
import type { RateLimiter } from "../flock/rate-limit.ts";
import type { NestRecord, NestStore } from "./store.ts";
import { DEFAULT_NEST } from "./store.ts";
import { resolvedOf, type Resolved } from "./resolved.ts";
import { describeError } from "../base/describe-error.ts";

export const MAX_MESSAGE_CHARS = 2000;
export const MAX_PHRASE_CHARS = 200;
export const MESSAGE_EVENT = "nest.message";
export const KINDS = [...CROW_KINDS, "ask_owner", "nudge", "flag"] as const;
export type Kind = (typeof KINDS)[number];
export type TaggedBy = "jev" | "header" | "disagreement" | "default" | "harness";

/** Service roles that may post ask_owner without being members. */
export const ASK_ROLES: readonly string[] = ["Quill", "Sentry"];
/** Who a message may be addressed to besides members and the owner (EVENTS.md: addressable roles). */
export const ADDRESSABLE_ROLES: readonly string[] = ["Elder", "Quill", "Boss"];

export const nestStream = (nestId: string) => `nest:${nestId}`;
/** What every msg_id of a nest starts with (the REST stream's frames are laid out with it). */
export const msgIdPrefix = (nestId: string) => `${nestId}-`;
/** msg_id is <nest_id>-<n>, n from 1 in nest order; it is also the nest stream's SSE id. */
export const msgIdOf = (nestId: string, n: number) => `${msgIdPrefix(nestId)}${n}`;
export const watchStream = (nestId: string) => `watch:${nestId}`;

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
}

/** A record with its nest, number and time: what GraphQL serves. */
export interface MessageEntry extends MessageRecord {
  nest_id: string;
  n: number;
  ts: string;
}

export type MessageRow = Awaited<ReturnType<PrismaClient["message"]["findUniqueOrThrow"]>>;

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
}

/**
 * How the harness posts on someone's behalf. Client posts pass none of this. Every internal post
 * still goes through the quarantine gate (unless `quarantineDecline`), the text rules and (unless
 * `unmetered`) the rate limit.
 */
export interface InternalPost {
  /**
   * The kind the harness fixed, tagged_by "harness": every reply the must-respond loop writes
   * (claim, deliver, decline, Quill's relay and say, Boss's say, the Elder's deliver), a nudge, the
   * Sentry's flag. When it is a kind Jev chooses among, Jev is still asked and its answer stored
   * with this kind as the truth (calibration data), but the answer never changes the kind.
   */
  forcedKind?: Kind;
  /** A response to another message: may be posted by a borrowed crow or a service role, and never
   * calls for a response itself, whatever it is tagged (no cascades, no idle loop). */
  response?: boolean;
  /** Not rate-limited: the loop's replies (the loop bounds them to one per request) and the
   * Sentry's flag and ask (a busy flock must not silence the watchdog). */
  unmetered?: boolean;
  /** The decline the loop writes for a crow that cannot answer because it is quarantined: it
   * carries no work of the crow's, so it passes the quarantine gate. Only with forcedKind decline. */
  quarantineDecline?: boolean;
  /** Extra writes in the message's own transaction (the Sentry's quarantine row). */
  within?: (tx: Tx, row: MessageRow) => Promise<void>;
}

export interface PostedContext {
  nest: NestRecord;
  /** True when the message may call for a response (not a response itself). */
  mayCallForResponse: boolean;
}

export type PostListener = (record: MessageRecord, context: PostedContext) => Promise<void>;

/** What the posting path learns from a reply that resolves an ask (asks.ts fills it in the tx). */
export interface ReplyHook {
  inTx(tx: Tx, reply: MessageRow): Promise<(() => Promise<void>) | null>;
}

/** Stores the promises a message makes (a response it calls for, the Sentry's inspection), in its transaction (obligations.ts). */
export interface ObligationHook {
  inTx(tx: Tx, row: MessageRow, context: { callsForResponse: boolean }): Promise<void>;
}

export interface ChatDeps {
  config: Config;
  prisma: PrismaClient;
  log: EventLog;
  classifier: Classifier;
  nests: NestStore;
  limiter: RateLimiter;
  logLine: (line: string) => void;
  now?: () => number;
}

interface Tag {
  kind: Kind;
  taggedBy: TaggedBy;
  mode: string;
  modeTaggedBy: string;
}

export class NestChat {
  private readonly listeners: PostListener[] = [];
  private replyHook: ReplyHook | undefined;
  private obligationHook: ObligationHook | undefined;
  private readonly resumers: Array<() => Promise<void>> = [];
  private readonly tasks = new Set<Promise<void>>();
  private readonly stopping = new AbortController();
  readonly now: () => number;

  constructor(readonly deps: ChatDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** Aborted when the server stops: background responders give up their model calls. */
  get signal(): AbortSignal {
    return this.stopping.signal;
  }

  onPosted(listener: PostListener): void {
    this.listeners.push(listener);
  }

  setReplyHook(hook: ReplyHook): void {
    this.replyHook = hook;
  }

  setObligationHook(hook: ObligationHook): void {
    this.obligationHook = hook;
  }

  /** Work to pick up when the server starts (open obligations). */
  onResume(resumer: () => Promise<void>): void {
    this.resumers.push(resumer);
  }

  async resume(): Promise<void> {
    for (const resumer of this.resumers) await resumer();
  }

  /** Runs background work (responders, watchdog) so stop() can wait for it; errors are logged. */
  spawn(what: string, task: () => Promise<void>): void {
    if (this.stopping.signal.aborted) return;
    const run = task()
      .catch((error: unknown) => {
        if (!this.stopping.signal.aborted) this.deps.logLine(`nests: ${what} failed: ${describeError(error)}`);
      })
      .finally(() => this.tasks.delete(run));
    this.tasks.add(run);
  }

  /** Resolves once no background work is left (including work that work started). For tests. */
  async idle(): Promise<void> {
    while (this.tasks.size > 0) await Promise.allSettled([...this.tasks]);
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    await this.idle();
  }

  /** The nest, or 404. */
  requireNest(nestId: string): Promise<NestRecord> {
    return this.deps.nests.require(nestId);
  }

  /**
   * Who may post in a nest besides the owner: its core, or for `todo` the whole flock (roster, then
   * spun crows) less persona crows the owner retired from it.
   */
  async members(nest: NestRecord): Promise<string[]> {
    if (nest.id !== DEFAULT_NEST) return nest.crows;
    const [spun, retired] = await Promise.all([
      this.deps.prisma.spunCrow.findMany({ orderBy: { name: "asc" }, select: { name: true } }),
      this.deps.prisma.quarantine.findMany({ where: { nestId: DEFAULT_NEST, retired: true }, select: { crow: true } }),
    ]);
    const gone = new Set(retired.map((r) => r.crow));
    return [...ROSTER.filter((crow) => !gone.has(crow)), ...spun.map((s) => s.name)];
  }

  async isQuarantined(crow: string): Promise<boolean> {
    return (await this.deps.prisma.quarantine.count({ where: { crow, status: "quarantined" } })) > 0;
  }

  /** Every record of the nest in msg_id order, with `resolved` as of now. */
  async list(nestId: string, after = 0, limit = 10_000): Promise<MessageRecord[]> {
    await this.requireNest(nestId);
    const rows = await this.deps.prisma.message.findMany({ where: { nestId, n: { gt: after } }, orderBy: { n: "asc" }, take: limit });
    return rows.map((row) => this.toRecord(row));
  }

  async get(msgId: string): Promise<MessageRecord | null> {
    const row = await this.deps.prisma.message.findUnique({ where: { id: msgId } });
    return row ? this.toRecord(row) : null;
  }

  /** The record with where and when it was posted (GraphQL's Message). */
  toEntry(row: MessageRow): MessageEntry {
    return { nest_id: row.nestId, n: row.n, ts: row.createdAt.toISOString(), ...this.toRecord(row) };
  }

  toRecord(row: MessageRow): MessageRecord {
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
      resolved: resolvedOf(row, this.now(), this.deps.config.approvalWindowMs),
    };
  }

  /** POSTs a message: 404, 400, 403, 429 as EVENTS.md says, else the stored record. */
  async post(nestId: string, input: PostInput, internal?: InternalPost): Promise<MessageRecord> {
    const nest = await this.requireNest(nestId);
    const author = checkAuthor(input.author);
    // The quarantine gate runs before membership: a retired-but-quarantined crow reads 403.
    const gated = author !== "owner" && !(internal?.quarantineDecline && internal.forcedKind === "decline");
    if (gated && (await this.isQuarantined(author))) {
      throw new ForbiddenError(`${author} is quarantined pending the owner's decision.`);
    }
    const text = checkText(input.text, internal !== undefined);
    const header = checkKindHeader(input.kind, internal?.forcedKind);
    const members = await this.members(nest);
    const isMember = members.includes(author);
    // ask_owner is honored for the owner and the owner-facing roles only; a crow's is dropped.
    const asking = header === "ask_owner" && (author === "owner" || ASK_ROLES.includes(author) || author === "harness");
    const crowHeader: CrowKind | undefined = header !== undefined && (CROW_KINDS as readonly string[]).includes(header) ? (header as CrowKind) : undefined;
    await this.checkMembership(nest, author, isMember, asking, internal);
    const to = checkTo(input.to, members, internal !== undefined);
    const refersTo = await this.checkRefersTo(nest.id, input.refers_to);
    const phrase = asking || internal?.forcedKind === "ask_owner" ? checkPhrase(input.approval_phrase) : checkOptionalString(input.approval_phrase, "approval_phrase");
    const modeHeader = checkModeHeader(input.mode);
    const invitedHeader = checkInvited(input.invited, this.deps.config.murderSize);

    if (!internal?.unmetered) {
      const admission = await this.deps.limiter.admit(author);
      if (!admission.admitted) throw new RateLimitedError(admission.message, admission.cooldownS);
    }

    const provisional = `pending:${nest.id}:${randomUUID()}`;
    const forced: Kind | undefined = internal?.forcedKind ?? (asking ? "ask_owner" : undefined);
    const tag = await this.tag({ provisional, text, author, to, refersTo, forced, forcedBy: internal?.forcedKind ? "harness" : "header", crowHeader, modeHeader });
    let invited = 0;
    if (tag.kind === "request" && tag.mode === "conspiracy") invited = invitedHeader ?? this.deps.config.murderSize;
    // claim/deliver with no `to` answer the requester of what they refer to.
    let addressed = to;
    if (addressed === "" && refersTo !== "" && (tag.kind === "claim" || tag.kind === "deliver")) {
      addressed = (await this.deps.prisma.message.findUnique({ where: { id: refersTo }, select: { author: true } }))?.author ?? "";
    }
    if (tag.kind === "ask_owner" && addressed === "") addressed = "owner";

    let after: (() => Promise<void>) | null = null;
    const stream = nestStream(nest.id);
    const [event] = await this.deps.log.appendWith(stream, async (tx) => {
      // Again inside the transaction: a flag that landed while Jev was tagging still gates this post.
      if (gated && (await tx.quarantine.count({ where: { crow: author, status: "quarantined" } })) > 0) {
        throw new ForbiddenError(`${author} is quarantined pending the owner's decision.`);
      }
      // The message number is the stream's next seq, so msg_id n and the SSE id always agree.
      const last = await tx.event.findFirst({ where: { stream }, orderBy: { seq: "desc" }, select: { seq: true } });
      const n = (last?.seq ?? 0) + 1;
      const row = await tx.message.create({
        data: {
          id: msgIdOf(nest.id, n),
          nestId: nest.id,
          n,
          kind: tag.kind,
          author,
          text,
          to: addressed,
          refersTo,
          taggedBy: tag.taggedBy,
          mode: tag.mode,
          modeTaggedBy: tag.modeTaggedBy,
          invited,
          approvalPhrase: tag.kind === "ask_owner" ? phrase : "",
        },
      });
      if (internal?.within) await internal.within(tx, row);
      if (this.obligationHook) await this.obligationHook.inTx(tx, row, { callsForResponse: !internal?.response });
      if (this.replyHook) after = await this.replyHook.inTx(tx, row);
      return [{ name: MESSAGE_EVENT, payload: wirePayload(nest.id, this.toRecord(row), row.createdAt) }];
    });
    const payload = JSON.parse(event!.payload) as MessageRecord & { nest_id: string; ts: string };
    const { nest_id: _n, ts: _t, ...record } = payload;
    // The classifier answers were stored before the id existed; give them their msg_id.
    await this.deps.prisma.classifierAnswer.updateMany({ where: { subject: provisional }, data: { subject: record.msg_id } }).catch(() => {});
    if (after) await (after as () => Promise<void>)();
    const context: PostedContext = { nest, mayCallForResponse: !internal?.response };
    for (const listener of this.listeners) this.spawn(`listener on ${record.msg_id}`, () => listener(record, context));
    return record;
  }

  /**
   * The harness hands a Jev verdict to one crow so it proceeds on a missed expectation: a nudge,
   * to that crow, refers_to the expectation. Its crow answers through the must-respond loop.
   */
  nudge(nestId: string, crow: string, text: string, refersTo: string, within?: InternalPost["within"]): Promise<MessageRecord> {
    return this.post(nestId, { author: "harness", text, to: crow, refers_to: refersTo }, { forcedKind: "nudge", unmetered: true, ...(within ? { within } : {}) });
  }

  // EVENTS.md Tagging: one classifier call; Jev's tag stands at or above the band; unsure falls to
  // the header; a sure Jev that differs from the header wins as "disagreement"; nothing: say.
  // A kind the harness fixed stands whatever Jev says (tagged_by "harness"); Jev is asked anyway
  // when the kind is one of its choices, so the answer is stored for calibration.
  private async tag(args: {
    provisional: string;
    text: string;
    author: string;
    to: string;
    refersTo: string;
    forced: Kind | undefined;
    forcedBy: TaggedBy;
    crowHeader: CrowKind | undefined;
    modeHeader: RequestMode | undefined;
  }): Promise<Tag> {
    const { forced, crowHeader, modeHeader } = args;
    // ask_owner, nudge and flag are not among Jev's choices: there is nothing to ask.
    const fixed = forced !== undefined && (CROW_KINDS as readonly string[]).includes(forced) ? (forced as CrowKind) : undefined;
    if (forced !== undefined && fixed === undefined) return { kind: forced, taggedBy: args.forcedBy, mode: "", modeTaggedBy: "" };
    // A fixed kind other than request has no mode to ask about.
    const questions = fixed !== undefined && fixed !== "request" ? tagQuestions() : { ...tagQuestions(), ...modeQuestions() };
    const truth: Record<string, string> = {};
    const kindTruth = fixed ?? crowHeader;
    if (kindTruth) truth.kind = kindTruth;
    if (modeHeader) truth.mode = modeHeader;
    const answers = await this.deps.classifier.ask({
      state: messageState({ text: args.text, author: args.author, to: args.to, refers_to: args.refersTo }),
      questions,
      subject: args.provisional,
      truth,
    });
    const threshold = this.deps.config.jevThreshold;
    // The loop's own replies keep the kind the loop gave them: Jev's answer is calibration data only.
    const [kind, taggedBy] = fixed !== undefined ? ([fixed, args.forcedBy] as const) : bandRule(bandedChoice(answers.kind, threshold), crowHeader, CROW_KINDS, "say");
    if (kind !== "request") return { kind, taggedBy, mode: "", modeTaggedBy: "" };
    // A request with no usable mode is taken up by one crow.
    const [mode, modeTaggedBy] = bandRule(bandedChoice(answers.mode, threshold), modeHeader, REQUEST_MODES, "solo");
    return { kind, taggedBy, mode, modeTaggedBy };
  }

  private async checkMembership(nest: NestRecord, author: string, isMember: boolean, asking: boolean, internal: InternalPost | undefined): Promise<void> {
    if (author === "owner" || isMember) return;
    if (asking && ASK_ROLES.includes(author)) return;
    if (internal) {
      // The harness speaks for the service roles, and a crow the Sentry borrowed answers what it was
      // picked for; a stranger to the flock never posts.
      if (author === "harness" || SERVICE_ROLE_NAMES.includes(author)) return;
      if (internal.response && (await this.isFlockCrow(author))) return;
    }
    const role = SERVICE_ROLE_NAMES.find((r) => r === author);
    if (role) {
      throw new BadInputError(
        ASK_ROLES.includes(role)
          ? `${role} is a service role, not a member of nest "${nest.id}"; it may only post ask_owner here.`
          : `${role} is a service role, not a member of nest "${nest.id}"; it speaks here only through the harness.`,
      );
    }
    throw new BadInputError(
      `${author} is not a member of nest "${nest.id}"; a non-member posts through the assistant (address Quill) or a member.`,
    );
  }

  /** A roster crow or a spun crow in the registry. */
  async isFlockCrow(name: string): Promise<boolean> {
    return ROSTER.includes(name) || (await this.deps.prisma.spunCrow.count({ where: { name } })) > 0;
  }

  private async checkRefersTo(nestId: string, raw: unknown): Promise<string> {
    const refersTo = checkOptionalString(raw, "refers_to").trim();
    if (refersTo === "") return "";
    const row = await this.deps.prisma.message.findUnique({ where: { id: refersTo }, select: { nestId: true } });
    if (!row || row.nestId !== nestId) throw new BadInputError(`refers_to "${refersTo}" is not a message of nest "${nestId}".`);
    return refersTo;
  }
}

/** The nest.message payload: nest_id, the record's fields in table order, ts. */
export function wirePayload(nestId: string, record: MessageRecord, at: Date): Record<string, unknown> {
  return { nest_id: nestId, ...record, ts: at.toISOString() };
}

function bandRule<T extends string>(
  banded: ReturnType<typeof bandedChoice>,
  header: T | undefined,
  allowed: readonly T[],
  fallback: T,
): [T, TaggedBy] {
  const jev = banded.sure && (allowed as readonly string[]).includes(banded.choice) ? (banded.choice as T) : undefined;
  if (jev !== undefined) return [jev, header !== undefined && header !== jev ? "disagreement" : "jev"];
  if (header !== undefined) return [header, "header"];
  return [fallback, "default"];
}

function checkAuthor(raw: unknown): string {
  if (typeof raw !== "string" || raw.trim() === "") throw new BadInputError('"author" must be a non-empty string: "owner" or a member of the nest.');
  const author = raw.trim();
  if (author.length > 100) throw new BadInputError('"author" may have at most 100 characters.');
  return author;
}

function checkText(raw: unknown, internal: boolean): string {
  if (typeof raw !== "string") throw new BadInputError('"text" must be a string of 1-2000 characters.');
  let text = raw.trim();
  // The harness's own voices are clipped rather than refused: a long model reply still lands.
  if (internal && text.length > MAX_MESSAGE_CHARS) text = `${text.slice(0, MAX_MESSAGE_CHARS - 1).trimEnd()}…`;
  if (text.length < 1 || text.length > MAX_MESSAGE_CHARS) {
    throw new BadInputError(`"text" must be 1-${MAX_MESSAGE_CHARS} characters after trimming, got ${text.length}.`);
  }
  return text;
}

function checkKindHeader(raw: unknown, forced: Kind | undefined): Kind | undefined {
  if (forced !== undefined) return forced;
  if (raw === undefined || raw === null || raw === "") return undefined;
  if (typeof raw !== "string" || !(KINDS as readonly string[]).includes(raw)) {
    throw new BadInputError(`"kind" must be one of ${CROW_KINDS.join(", ")} (or ask_owner for the owner, Quill and the Sentry).`);
  }
  if (raw === "nudge") throw new BadInputError('"kind" nudge is posted by the harness only.');
  if (raw === "flag") throw new BadInputError('"kind" flag is posted by the Sentry only.');
  return raw as Kind;
}

function checkOptionalString(raw: unknown, field: string): string {
  if (raw === undefined || raw === null) return "";
  if (typeof raw !== "string") throw new BadInputError(`"${field}" must be a string when given.`);
  return raw;
}

function checkTo(raw: unknown, members: string[], internal: boolean): string {
  const to = checkOptionalString(raw, "to").trim().replace(/^@/, "");
  if (to === "" || internal) return to;
  if (to === "owner" || members.includes(to) || ADDRESSABLE_ROLES.includes(to)) return to;
  throw new BadInputError(`"to" must be "owner", a member of the nest or ${ADDRESSABLE_ROLES.join(", ")}; ${to} is none of them.`);
}

function checkPhrase(raw: unknown): string {
  const phrase = checkOptionalString(raw, "approval_phrase").trim();
  if (phrase.length < 1 || phrase.length > MAX_PHRASE_CHARS) {
    throw new BadInputError(`an ask_owner needs an "approval_phrase" of 1-${MAX_PHRASE_CHARS} characters: the exact words the owner must reply with.`);
  }
  return phrase;
}

function checkModeHeader(raw: unknown): RequestMode | undefined {
  if (raw === undefined || raw === null || raw === "") return undefined;
  if (typeof raw !== "string" || !(REQUEST_MODES as readonly string[]).includes(raw)) {
    throw new BadInputError(`"mode" must be one of ${REQUEST_MODES.join(", ")} when given.`);
  }
  return raw as RequestMode;
}

function checkInvited(raw: unknown, cap: number): number | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== "number" || !Number.isInteger(raw) || raw < 1 || raw > cap) {
    throw new BadInputError(`"invited" must be a whole number from 1 to ${cap} (CROWS_MURDER_SIZE) when given.`);
  }
  return raw;
}

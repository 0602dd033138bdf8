// NestChat: the one posting path every nest message takes, whoever posts it, and the reads of a
// nest's messages. The order of the checks, the transaction and what the listeners get are in
// docs/nests-chat.md "One posting path" and "Storage and the stream".
import { randomUUID } from "node:crypto";
import type { Config } from "../base/config.ts";
import type { Actor } from "../base/actor.ts";
import type { PrismaClient } from "../generated/prisma/client.ts";
import type { EventLog, Tx } from "../log/event-log.ts";
import type { Classifier } from "../classifier/jev.ts";
import { BadInputError, ForbiddenError, RateLimitedError } from "../base/errors.ts";
import { CROW_KINDS, type CrowKind } from "../classifier/questions.ts";
import type { RateLimiter } from "../flock/rate-limit.ts";
import { TaskRunner } from "../engine/tasks.ts";
import { describeError } from "../base/describe-error.ts";
import type { NestRecord, NestStore } from "./store.ts";
import { msgIdOf, nestStream } from "../base/streams.ts";
import {
  MESSAGE_EVENT,
  SERVER_VOICE,
  recordOf,
  nestMessagePayload,
  type Kind,
  type MessageEntry,
  type MessageRecord,
  type MessageRow,
} from "./message.ts";
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
import { tagMessage } from "./tagging.ts";
import { ASK_ROLES, Membership } from "./membership.ts";

/**
 * How the server posts on someone's behalf. Client posts pass none of this. Every internal post
 * still goes through the quarantine gate (unless `quarantineDecline`), the text rules and (unless
 * `unmetered`) the rate limit.
 */
export interface InternalPost {
  /**
   * The kind the server fixed, tagged_by "harness" (SERVER_VOICE): every reply the must-respond loop writes
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

/** What the posting path learns from a reply that resolves an ask (asks.ts fills it in the tx); `actor` sent the reply. */
export interface ReplyHook {
  inTx(tx: Tx, reply: MessageRow, actor: Actor | undefined): Promise<(() => Promise<void>) | null>;
}

/** Stores the promises a message makes (a response it calls for, the Sentry's inspection, an ask's resolution), in its transaction (obligations/). */
export interface ObligationHook {
  inTx(tx: Tx, row: MessageRow, context: { callsForResponse: boolean }): Promise<void>;
  /** Lease sweeps over open obligations finished on this instance. */
  sweepsDone(): number;
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

export class NestChat {
  private readonly listeners: PostListener[] = [];
  private replyHook: ReplyHook | undefined;
  private obligationHook: ObligationHook | undefined;
  private readonly resumers: Array<() => Promise<void>> = [];
  private readonly tasks: TaskRunner;
  private readonly membership: Membership;
  readonly now: () => number;

  constructor(readonly deps: ChatDeps) {
    this.now = deps.now ?? Date.now;
    this.tasks = new TaskRunner((what, error) => deps.logLine(`nests: ${what} failed: ${describeError(error)}`));
    this.membership = new Membership(deps.prisma);
  }

  /** Aborted when the server stops: background responders give up their model calls. */
  get signal(): AbortSignal {
    return this.tasks.signal;
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

  /** Lease sweeps over open obligations finished here (tests: a sweep begun after a moment proves it passed). */
  obligationSweepsDone(): number {
    return this.obligationHook?.sweepsDone() ?? 0;
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
    this.tasks.spawn(what, task);
  }

  /** Resolves once no background work is left (including work that work started). For tests. */
  idle(): Promise<void> {
    return this.tasks.idle();
  }

  stop(): Promise<void> {
    return this.tasks.stop();
  }

  /** The nest, or 404. */
  requireNest(nestId: string): Promise<NestRecord> {
    return this.deps.nests.require(nestId);
  }

  /** Who may post in a nest besides the owner (membership.ts). */
  members(nest: NestRecord): Promise<string[]> {
    return this.membership.members(nest);
  }

  isQuarantined(crow: string): Promise<boolean> {
    return this.membership.isQuarantined(crow);
  }

  /** A roster crow or a spun crow in the registry. */
  isFlockCrow(name: string): Promise<boolean> {
    return this.membership.isFlockCrow(name);
  }

  /** Every record of the nest in msg_id order, with `resolved` as of now. */
  async list(nestId: string, after = 0, limit = 10_000): Promise<MessageRecord[]> {
    await this.requireNest(nestId);
    const rows = await this.deps.prisma.message.findMany({
      where: { nestId, n: { gt: after } },
      orderBy: { n: "asc" },
      take: limit,
    });
    return rows.map((row) => this.toRecord(row));
  }

  /** The newest `limit` records below number `before` (the newest when absent), in msg_id order. */
  async newest(nestId: string, limit: number, before?: number): Promise<MessageRecord[]> {
    await this.requireNest(nestId);
    const rows = await this.deps.prisma.message.findMany({
      where: { nestId, ...(before === undefined ? {} : { n: { lt: before } }) },
      orderBy: { n: "desc" },
      take: limit,
    });
    return rows.reverse().map((row) => this.toRecord(row));
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
    return recordOf(row, this.now(), this.deps.config.approvalWindowMs);
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
    const asking =
      header === "ask_owner" && (author === "owner" || ASK_ROLES.includes(author) || author === SERVER_VOICE);
    const crowHeader: CrowKind | undefined =
      header !== undefined && (CROW_KINDS as readonly string[]).includes(header) ? (header as CrowKind) : undefined;
    await this.membership.check(nest, author, isMember, asking, internal);
    // No `to`: a client's text that opens with @Name addresses that member or role (addressing.ts).
    const given = checkTo(input.to, members, internal !== undefined);
    const to = given !== "" || internal !== undefined ? given : addressedIn(text, members);
    const refersTo = await this.checkRefersTo(nest.id, input.refers_to);
    const phrase =
      asking || internal?.forcedKind === "ask_owner"
        ? checkPhrase(input.approval_phrase)
        : checkOptionalString(input.approval_phrase, "approval_phrase");
    const modeHeader = checkModeHeader(input.mode);
    const invitedHeader = checkInvited(input.invited, this.deps.config.murderSize);

    if (!internal?.unmetered) {
      const admission = await this.deps.limiter.admit(author);
      if (!admission.admitted) throw new RateLimitedError(admission.message, admission.cooldownS);
    }

    const provisional = `pending:${nest.id}:${randomUUID()}`;
    const forced: Kind | undefined = internal?.forcedKind ?? (asking ? "ask_owner" : undefined);
    const tag = await tagMessage(this.deps.classifier, this.deps.config.jevThreshold, {
      provisional,
      text,
      author,
      to,
      refersTo,
      forced,
      forcedBy: internal?.forcedKind ? SERVER_VOICE : "header",
      crowHeader,
      modeHeader,
    });
    let invited = 0;
    if (tag.kind === "request" && tag.mode === "conspiracy") invited = invitedHeader ?? this.deps.config.murderSize;
    // claim/deliver with no `to` answer the requester of what they refer to.
    let addressed = to;
    if (addressed === "" && refersTo !== "" && (tag.kind === "claim" || tag.kind === "deliver")) {
      addressed =
        (await this.deps.prisma.message.findUnique({ where: { id: refersTo }, select: { author: true } }))?.author ??
        "";
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
      if (this.replyHook) after = await this.replyHook.inTx(tx, row, input.actor);
      return [
        { name: MESSAGE_EVENT, payload: nestMessagePayload(nest.id, this.toRecord(row), row.createdAt, input.actor) },
      ];
    });
    const payload = JSON.parse(event!.payload) as MessageRecord & { nest_id: string; ts: string };
    const { nest_id: _n, ts: _t, actor: _a, ...record } = payload as typeof payload & { actor?: unknown };
    // The classifier answers were stored before the id existed; give them their msg_id. They are
    // calibration data only: a failed re-key leaves them under the provisional subject, and the
    // message, already stored and sent, must not read as failed for it.
    await this.deps.prisma.classifierAnswer
      .updateMany({ where: { subject: provisional }, data: { subject: record.msg_id } })
      .catch(() => {});
    if (after) await (after as () => Promise<void>)();
    const context: PostedContext = { nest, mayCallForResponse: !internal?.response };
    for (const listener of this.listeners) this.spawn(`listener on ${record.msg_id}`, () => listener(record, context));
    return record;
  }

  /**
   * The server hands a Jev verdict to one crow so it proceeds on a missed expectation: a nudge,
   * to that crow, refers_to the expectation. Its crow answers through the must-respond loop.
   */
  nudge(
    nestId: string,
    crow: string,
    text: string,
    refersTo: string,
    within?: InternalPost["within"],
  ): Promise<MessageRecord> {
    return this.post(
      nestId,
      { author: SERVER_VOICE, text, to: crow, refers_to: refersTo },
      { forcedKind: "nudge", unmetered: true, ...(within ? { within } : {}) },
    );
  }

  private async checkRefersTo(nestId: string, raw: unknown): Promise<string> {
    const refersTo = checkOptionalString(raw, "refers_to").trim();
    if (refersTo === "") return "";
    const row = await this.deps.prisma.message.findUnique({ where: { id: refersTo }, select: { nestId: true } });
    if (!row || row.nestId !== nestId)
      throw new BadInputError(`refers_to "${refersTo}" is not a message of nest "${nestId}".`);
    return refersTo;
  }
}

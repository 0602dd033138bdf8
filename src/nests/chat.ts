// NestChat: the one posting path every nest message takes, whoever posts it, and the reads of a
// nest's messages. The order of the checks, the transaction and what the listeners get are in
// docs/nests-chat.md "One posting path" and "Storage and the stream".
import { randomUUID } from "node:crypto";
import type { Config } from "../base/config.ts";
import type { Actor } from "../base/actor.ts";
import type { PrismaClient } from "../generated/prisma/client.ts";
import type { EventLog, Tx } from "../log/event-log.ts";
import type { Classifier } from "../classifier/jev.ts";
import { RateLimitedError } from "../base/errors.ts";
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
import type { PostInput } from "./post-input.ts";
import { checkPost, quarantinedError, type CheckedPost, type PostChecks } from "./post-check.ts";
import { tagMessage, type Tag } from "./tagging.ts";
import { Membership } from "./membership.ts";

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

  private readonly postChecks: PostChecks;

  constructor(readonly deps: ChatDeps) {
    this.now = deps.now ?? Date.now;
    this.tasks = new TaskRunner((what, error) => deps.logLine(`nests: ${what} failed: ${describeError(error)}`));
    this.membership = new Membership(deps.prisma);
    this.postChecks = { nests: deps.nests, membership: this.membership, prisma: deps.prisma, config: deps.config };
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

  /**
   * POSTs a message: 404, 400, 403, 429 as docs/contract.md says, else the stored record. The steps, in
   * docs/nests-chat.md "One posting path"'s order: check it, meter it, tag it, address it, store
   * it with its event, then tell whoever waits on it.
   */
  async post(nestId: string, input: PostInput, internal?: InternalPost): Promise<MessageRecord> {
    const post = await checkPost(this.postChecks, nestId, input, internal);
    if (!internal?.unmetered) {
      const admission = await this.deps.limiter.admit(post.author);
      if (!admission.admitted) throw new RateLimitedError(admission.message, admission.cooldownS);
    }
    const provisional = `pending:${post.nest.id}:${randomUUID()}`;
    const tag = await tagMessage(this.deps.classifier, this.deps.config.jevThreshold, {
      provisional,
      text: post.text,
      author: post.author,
      to: post.to,
      refersTo: post.refersTo,
      forced: internal?.forcedKind ?? (post.asking ? "ask_owner" : undefined),
      forcedBy: internal?.forcedKind ? SERVER_VOICE : "header",
      crowHeader: post.crowHeader,
      modeHeader: post.modeHeader,
    });
    const addressed = await this.addressee(post, tag);
    const { record, afterReply } = await this.store(post, tag, addressed, input.actor, internal);
    await this.announce(record, provisional, afterReply, { nest: post.nest, mayCallForResponse: !internal?.response });
    return record;
  }

  /** Who the message is to once tagged: claim/deliver with no `to` answer the requester of what they refer to. */
  private async addressee(post: CheckedPost, tag: Tag): Promise<string> {
    if (post.to === "" && post.refersTo !== "" && (tag.kind === "claim" || tag.kind === "deliver")) {
      const referent = await this.deps.prisma.message.findUnique({
        where: { id: post.refersTo },
        select: { author: true },
      });
      return referent?.author ?? "";
    }
    return post.to === "" && tag.kind === "ask_owner" ? "owner" : post.to;
  }

  /**
   * The message, its event and what it promises, in one transaction. Its number is the stream's
   * next seq, from the event store, so msg_id n and the SSE id always agree.
   */
  private async store(
    post: CheckedPost,
    tag: Tag,
    addressed: string,
    actor: Actor | undefined,
    internal: InternalPost | undefined,
  ): Promise<{ record: MessageRecord; afterReply: (() => Promise<void>) | null }> {
    const { nest, author } = post;
    const invited =
      tag.kind === "request" && tag.mode === "conspiracy" ? (post.invitedHeader ?? this.deps.config.murderSize) : 0;
    let afterReply: (() => Promise<void>) | null = null;
    const stream = nestStream(nest.id);
    const [event] = await this.deps.log.appendWith(stream, async (tx) => {
      // Again inside the transaction: a flag that landed while Jev was tagging still gates this post.
      if (post.gated && (await tx.quarantine.count({ where: { crow: author, status: "quarantined" } })) > 0)
        throw quarantinedError(author);
      const n = await this.deps.log.nextSeqIn(tx, stream);
      const row = await tx.message.create({
        data: {
          id: msgIdOf(nest.id, n),
          nestId: nest.id,
          n,
          kind: tag.kind,
          author,
          text: post.text,
          to: addressed,
          refersTo: post.refersTo,
          taggedBy: tag.taggedBy,
          mode: tag.mode,
          modeTaggedBy: tag.modeTaggedBy,
          invited,
          approvalPhrase: tag.kind === "ask_owner" ? post.phrase : "",
          reason: post.reason,
        },
      });
      if (internal?.within) await internal.within(tx, row);
      if (this.obligationHook) await this.obligationHook.inTx(tx, row, { callsForResponse: !internal?.response });
      if (this.replyHook) afterReply = await this.replyHook.inTx(tx, row, actor);
      return [{ name: MESSAGE_EVENT, payload: nestMessagePayload(nest.id, this.toRecord(row), row.createdAt, actor) }];
    });
    const payload = JSON.parse(event!.payload) as MessageRecord & { nest_id: string; ts: string };
    const { nest_id: _n, ts: _t, actor: _a, ...record } = payload as typeof payload & { actor?: unknown };
    return { record, afterReply };
  }

  /** After the commit: the classifier answers get their msg_id, an ask's resolution runs, the listeners hear it. */
  private async announce(
    record: MessageRecord,
    provisional: string,
    afterReply: (() => Promise<void>) | null,
    context: PostedContext,
  ): Promise<void> {
    // The classifier answers were stored before the id existed; give them their msg_id. They are
    // calibration data only: a failed re-key leaves them under the provisional subject, and the
    // message, already stored and sent, must not read as failed for it.
    await this.deps.prisma.classifierAnswer
      .updateMany({ where: { subject: provisional }, data: { subject: record.msg_id } })
      .catch(() => {});
    if (afterReply) await afterReply();
    for (const listener of this.listeners) this.spawn(`listener on ${record.msg_id}`, () => listener(record, context));
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
}

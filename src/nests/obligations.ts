// Obligations: the must-respond loop's promises, stored so they outlive the process that made them
// (docs/nests-chat.md "Obligations"). A message that calls for a response gets an Obligation row in
// the message's own transaction, naming who must answer and its stage:
//
//   awaiting_claim -> claimed -> answered | declined
//
// Every move is a conditional update inside the transaction of the message that makes it (the
// claim, the deliver, the decline, Quill's or Boss's or the Elder's reply). An answer to an
// obligation that is no longer open is refused in that same transaction, so it is never stored:
// a takeover racing a late answer from the old owner ends with exactly one deliver or decline.
//
// Ownership: the instance that stored the message holds the obligation's lease and runs its
// responder. A sweep every CROWS_LEASE_MS / 3 renews held leases and takes over open obligations
// whose lease lapsed (their instance died) or that carry this instance's own name but are not
// running here (this instance restarted), and drives each from its stored stage: awaiting_claim
// runs the responder from the start; claimed means the responder's instance died, a missed
// expectation, so the harness nudges the crow.
//
// Missed expectations: a claim with no deliver within CROWS_NUDGE_AFTER_MS gets the harness's one
// nudge (author harness, to the crow, refers_to the request), and the crow proceeds. If it still
// has not answered CROWS_NUDGE_AFTER_MS after the nudge, it declines (posted for it), so the loop
// always closes, with at most one nudge per obligation. The deadlines are computed from the stored
// claimedAt / nudgedAt, so a takeover arms what is left of them. Nothing polls the conversation:
// timers fire at stored deadlines, and the sweep only keeps leases.
//
// The Sentry's inspection of a crow's claim or deliver is an obligation too (id "watch:<msg_id>",
// respondent Sentry), stored with the claim or deliver: awaiting_claim until its `watch` verdict
// is logged, which closes it in the same transaction (answered), or marks it claimed when the
// verdict is a breach, until the Sentry's ask_owner closes it. A takeover re-inspects, or posts the
// flag and ask that are still missing, so a quarantine always comes with its ask.
import type { Config } from "../config.ts";
import type { PrismaClient } from "../generated/prisma/client.ts";
import type { Tx } from "../log/event-log.ts";
import { ConflictError, CrowsError } from "../errors.ts";
import type { MessageRecord, MessageRow } from "./message.ts";
import type { NestChat, ObligationHook } from "./chat.ts";
import type { NestRecord, NestStore } from "./store.ts";
import { SERVICE_ROLE_NAMES } from "../flock/roster.ts";
import { describeError } from "../ops/describe-error.ts";

export const OPEN_STAGES = ["awaiting_claim", "claimed"] as const;
export type Outcome = "answered" | "declined";
type ObligationRow = Awaited<ReturnType<PrismaClient["obligation"]["findUniqueOrThrow"]>>;
type Within = (tx: Tx, row: MessageRow) => Promise<void>;

/**
 * Who must answer a stored message: the crow or role it is addressed to, "" for the room; null
 * when it calls for no response (not a request, or a request to the owner or the Sentry). A
 * nudge is no new promise: it rides the obligation of the request it refers to.
 */
export function respondentOf(message: { kind: string; to: string }): string | null {
  if (message.kind !== "request") return null;
  if (message.to === "owner" || message.to === "Sentry") return null;
  return message.to;
}

/** The id of the Sentry's inspection of a crow's claim or deliver. */
export const watchObligationId = (msgId: string) => `watch:${msgId}`;
export const WATCHER = "Sentry";

/** A crow's claim or deliver on something: the watchdog inspects it when it refers to a request. */
function mayBeWatched(message: { kind: string; author: string; refersTo: string }): boolean {
  if (message.kind !== "claim" && message.kind !== "deliver") return false;
  if (message.author === "owner" || message.author === "harness" || SERVICE_ROLE_NAMES.includes(message.author)) return false;
  return message.refersTo !== "";
}

/** What the watchdog does for an inspection it resumes (Watchdog implements it). */
export interface WatchResumer {
  /** stage awaiting_claim: inspect from the start; claimed: the breach was judged, post what is missing of flag and ask. */
  resumeWatch(nest: NestRecord, message: MessageRecord, judged: boolean): Promise<void>;
}

/** What the loop does for an obligation it resumes (Responders implements it). */
export interface ObligationRunner {
  /** Answers the request from the start, exactly as for a fresh post. */
  respond(nest: NestRecord, request: MessageRecord): Promise<void>;
  /** The crow that claimed the request proceeds: it delivers, or declines with a reason. */
  proceed(nest: NestRecord, crow: string, request: MessageRecord): Promise<void>;
}

export interface ObligationsDeps {
  config: Config;
  prisma: PrismaClient;
  nests: NestStore;
  instanceId: string;
  logLine: (line: string) => void;
  now?: () => number;
}

export class Obligations implements ObligationHook {
  // Obligations this instance drives, with when it took them. An id enters before its creating
  // transaction commits, so a sweep that can see the row also sees it is already running here.
  private readonly held = new Map<string, number>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private runner: ObligationRunner | undefined;
  private watcher: WatchResumer | undefined;
  private sweeper: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;
  private readonly now: () => number;

  constructor(
    private readonly chat: NestChat,
    private readonly deps: ObligationsDeps,
  ) {
    this.now = deps.now ?? Date.now;
    chat.signal.addEventListener("abort", () => this.stop(), { once: true });
  }

  setRunner(runner: ObligationRunner): void {
    this.runner = runner;
  }

  setWatcher(watcher: WatchResumer): void {
    this.watcher = watcher;
  }

  get instanceId(): string {
    return this.deps.instanceId;
  }

  /** The obligations this instance drives now (tests, diagnostics). */
  heldIds(): string[] {
    return [...this.held.keys()];
  }

  // --- the posting path: inside the message's transaction ---------------------------------------

  /** Stores what the message promises, owned by this instance: its response, the Sentry's inspection. */
  async inTx(tx: Tx, row: MessageRow, context: { callsForResponse: boolean }): Promise<void> {
    const respondent = context.callsForResponse ? respondentOf(row) : null;
    if (respondent !== null) {
      await tx.obligation.create({
        data: { id: row.id, requestId: row.id, nestId: row.nestId, respondent, ownerId: this.instanceId, leaseUntil: this.leaseEnd() },
      });
      this.held.set(row.id, this.now());
    }
    if (mayBeWatched(row)) {
      const referent = await tx.message.findUnique({ where: { id: row.refersTo }, select: { kind: true, nestId: true } });
      if (referent?.kind !== "request" || referent.nestId !== row.nestId) return;
      const id = watchObligationId(row.id);
      await tx.obligation.create({ data: { id, requestId: row.id, nestId: row.nestId, respondent: WATCHER, ownerId: this.instanceId, leaseUntil: this.leaseEnd() } });
      this.held.set(id, this.now());
    }
  }

  /**
   * The watch verdict on `msgId` is being logged: closes the inspection (answered), or on a breach
   * marks it claimed until the ask_owner closes it. Refused when another instance judged it first.
   */
  judged(msgId: string, breach: boolean): (tx: Tx) => Promise<void> {
    return async (tx) => {
      const id = watchObligationId(msgId);
      const at = new Date(this.now());
      const moved = await tx.obligation.updateMany({
        where: { id, stage: "awaiting_claim" },
        data: breach ? { stage: "claimed", claimedAt: at } : { stage: "answered", closedAt: at },
      });
      if (moved.count === 0 && (await tx.obligation.count({ where: { id } })) > 0) throw new ConflictError(`${msgId} was inspected already.`);
    };
  }

  /** The Sentry's ask_owner after a breach: closes the inspection of `msgId` in the ask's transaction. */
  asked(msgId: string): Within {
    return async (tx, row) => {
      await tx.obligation.updateMany({ where: { id: watchObligationId(msgId), stage: { in: [...OPEN_STAGES] } }, data: { stage: "answered", answerId: row.id, closedAt: row.createdAt } });
    };
  }

  /**
   * The crow's claim: awaiting_claim -> claimed, naming the crow (a room request learns its crow
   * here). A conspiracy's further crows each get an obligation of their own. Any other claim on an
   * obligation already claimed or closed is refused with the claim.
   */
  claim(request: MessageRecord, crow: string): Within {
    return async (tx, row) => {
      const at = row.createdAt;
      const took = await tx.obligation.updateMany({
        where: { id: request.msg_id, stage: "awaiting_claim", respondent: { in: ["", crow] } },
        data: { respondent: crow, stage: "claimed", claimedAt: at },
      });
      if (took.count === 1) return this.armAt(request.msg_id, at.getTime() + this.deps.config.nudgeAfterMs);
      const promised = await tx.obligation.findMany({ where: { requestId: request.msg_id }, select: { respondent: true } });
      if (promised.length === 0) return; // nothing was promised for it (stored before obligations existed)
      if (request.kind === "request" && request.mode === "conspiracy" && request.to === "" && !promised.some((p) => p.respondent === crow)) {
        const id = `${request.msg_id}/${crow}`;
        await tx.obligation.create({
          data: { id, requestId: request.msg_id, nestId: row.nestId, respondent: crow, stage: "claimed", claimedAt: at, ownerId: this.instanceId, leaseUntil: this.leaseEnd() },
        });
        this.held.set(id, this.now());
        return this.armAt(id, at.getTime() + this.deps.config.nudgeAfterMs);
      }
      throw new ConflictError(`${request.msg_id} is already claimed or answered; ${crow}'s claim is not stored.`);
    };
  }

  /**
   * The answer (a deliver, a decline, or a role's one reply): closes the author's open obligation on
   * the request, once. A second answer finds it closed and is refused, so it is never stored.
   */
  close(requestId: string, author: string, outcome: Outcome): Within {
    return async (tx, row) => {
      const closed = await tx.obligation.updateMany({
        where: { requestId, respondent: { in: [author, ""] }, stage: { in: [...OPEN_STAGES] } },
        data: { respondent: author, stage: outcome, answerId: row.id, closedAt: row.createdAt },
      });
      if (closed.count > 0) return this.disarm(requestId, author);
      if ((await tx.obligation.count({ where: { requestId } })) === 0) return; // nothing was promised
      throw new ConflictError(`${requestId} is already answered; ${author}'s ${row.kind} is not stored.`);
    };
  }

  /**
   * A room request's crow declines and hands it on to the next crow: its decline reopens the
   * obligation (claimed -> awaiting_claim, no respondent) instead of closing it, so the next
   * crow's claim takes it. Refused like an answer when the obligation is no longer the crow's.
   */
  handOn(requestId: string, crow: string): Within {
    return async (tx, row) => {
      const reopened = await tx.obligation.updateMany({
        // Claimed by this crow, or still unclaimed (a quarantined crow declines before it claims).
        where: { id: requestId, OR: [{ respondent: crow, stage: "claimed" }, { respondent: "", stage: "awaiting_claim" }] },
        data: { respondent: "", stage: "awaiting_claim", claimedAt: null, nudgeId: "", nudgedAt: null },
      });
      if (reopened.count > 0) return this.disarm(requestId, crow);
      if ((await tx.obligation.count({ where: { requestId } })) === 0) return;
      throw new ConflictError(`${requestId} is no longer ${crow}'s to hand on; ${crow}'s ${row.kind} is not stored.`);
    };
  }

  /** Closes an obligation that ends with no post (Boss saturated, the respondent refused by a guardrail). */
  async closeWithoutPost(requestId: string, respondent: string, why: string): Promise<void> {
    const closed = await this.deps.prisma.obligation.updateMany({
      where: { requestId, respondent: { in: respondent === WATCHER ? [WATCHER] : [respondent, ""] }, stage: { in: [...OPEN_STAGES] } },
      data: { stage: "declined", closedAt: new Date(this.now()) },
    });
    if (closed.count > 0) this.deps.logLine(`nests: ${requestId} closed without a reply from ${respondent}: ${why}`);
    this.disarm(requestId, respondent);
  }

  // --- ownership: resume, leases, takeover ------------------------------------------------------

  /** Takes up every open obligation this instance may drive, then keeps sweeping (lease upkeep). */
  async resume(): Promise<void> {
    await this.sweep();
    const every = Math.max(50, Math.floor(this.deps.config.leaseMs / 3));
    this.sweeper ??= setInterval(() => void this.sweep(), every);
    this.sweeper.unref?.();
  }

  stop(): void {
    clearInterval(this.sweeper);
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }

  private sweep(): Promise<void> {
    this.sweeping ??= this.renewAndTakeOver()
      .catch((error: unknown) => {
        if (!this.chat.signal.aborted) this.deps.logLine(`nests: obligation sweep failed: ${describeError(error)}`);
      })
      .finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  private async renewAndTakeOver(): Promise<void> {
    if (this.chat.signal.aborted) return;
    const { prisma } = this.deps;
    const mine = [...this.held.keys()];
    if (mine.length > 0) {
      await prisma.obligation.updateMany({ where: { id: { in: mine }, ownerId: this.instanceId, stage: { in: [...OPEN_STAGES] } }, data: { leaseUntil: this.leaseEnd() } });
      const rows = new Map((await prisma.obligation.findMany({ where: { id: { in: mine } }, select: { id: true, ownerId: true, stage: true } })).map((r) => [r.id, r]));
      for (const id of mine) {
        const row = rows.get(id);
        // Not committed yet (or rolled back): keep it a while, its transaction may still be running.
        if (!row && this.now() - this.held.get(id)! < this.deps.config.leaseMs) continue;
        if (row && row.ownerId === this.instanceId && (OPEN_STAGES as readonly string[]).includes(row.stage)) continue;
        if (row && row.ownerId !== this.instanceId && (OPEN_STAGES as readonly string[]).includes(row.stage)) {
          this.deps.logLine(`nests: obligation ${id} was taken over by another instance; a late answer from here will be refused`);
        }
        this.held.delete(id);
        this.clearTimer(id);
      }
    }
    const claimable = await prisma.obligation.findMany({ where: { stage: { in: [...OPEN_STAGES] }, ...this.claimableWhere() }, orderBy: { createdAt: "asc" } });
    for (const row of claimable) if (!this.held.has(row.id)) await this.take(row.id);
  }

  /** Open obligations this instance may take: its own (not running here), unowned, or lapsed. */
  private claimableWhere() {
    return { OR: [{ ownerId: this.instanceId }, { ownerId: null }, { leaseUntil: null }, { leaseUntil: { lt: new Date(this.now()) } }] };
  }

  /** One conditional update takes the lease, so exactly one instance wins; the winner drives it. */
  private async take(id: string): Promise<void> {
    if (this.chat.signal.aborted || this.held.has(id)) return;
    const { count } = await this.deps.prisma.obligation.updateMany({
      where: { id, stage: { in: [...OPEN_STAGES] }, ...this.claimableWhere() },
      data: { ownerId: this.instanceId, leaseUntil: this.leaseEnd() },
    });
    if (count !== 1 || this.held.has(id)) return;
    this.held.set(id, this.now());
    const row = await this.deps.prisma.obligation.findUniqueOrThrow({ where: { id } });
    this.deps.logLine(`nests: resuming obligation ${id} (${row.stage}${row.respondent ? `, ${row.respondent}` : ""})`);
    this.chat.spawn(`obligation ${id}`, () => this.drive(row));
  }

  /** Carries a resumed obligation on from its stored stage. */
  private async drive(row: ObligationRow): Promise<void> {
    const request = await this.chat.get(row.requestId);
    const nest = await this.deps.nests.get(row.nestId);
    if (!request || !nest || !this.runner || (row.id === watchObligationId(row.requestId) && !this.watcher)) {
      await this.closeWithoutPost(row.requestId, row.respondent, "its request or nest is gone");
      return;
    }
    if (row.id === watchObligationId(row.requestId)) {
      await this.watcher!.resumeWatch(nest, request, row.stage === "claimed");
      return;
    }
    if (row.stage === "awaiting_claim") {
      // Nobody answered yet: the loop starts over, exactly as for a fresh post.
      await this.runner.respond(nest, request);
      return;
    }
    // Claimed, and the instance running its crow is gone: a missed expectation.
    if (row.nudgeId === "") {
      await this.nudge(row, "its responder's instance stopped before it answered");
      return;
    }
    // Already nudged once: the crow proceeds again, and declines at the nudge's deadline at the latest.
    this.armAt(row.id, (row.nudgedAt?.getTime() ?? this.now()) + this.deps.config.nudgeAfterMs);
    await this.runner.proceed(nest, row.respondent, request);
  }

  // --- missed expectations ----------------------------------------------------------------------

  private armAt(id: string, dueMs: number): void {
    this.clearTimer(id);
    if (this.chat.signal.aborted) return;
    const timer = setTimeout(() => {
      this.timers.delete(id);
      this.chat.spawn(`deadline of obligation ${id}`, () => this.onDeadline(id));
    }, Math.max(0, dueMs - this.now()));
    timer.unref?.();
    this.timers.set(id, timer);
  }

  private clearTimer(id: string): void {
    clearTimeout(this.timers.get(id));
    this.timers.delete(id);
  }

  private disarm(requestId: string, respondent: string): void {
    this.clearTimer(requestId);
    this.clearTimer(`${requestId}/${respondent}`);
  }

  /** A deadline passed: nudge once; after the nudge's own deadline, the crow declines. */
  private async onDeadline(id: string): Promise<void> {
    const row = await this.deps.prisma.obligation.findUnique({ where: { id } });
    if (!row || row.ownerId !== this.instanceId || row.stage !== "claimed") return;
    const bound = this.deps.config.nudgeAfterMs;
    const due = (row.nudgeId === "" ? row.claimedAt!.getTime() : row.nudgedAt!.getTime()) + bound;
    if (due > this.now()) return this.armAt(id, due);
    if (row.nudgeId === "") return this.nudge(row, `no deliver came within ${seconds(bound)} of the claim`);
    await this.declineFor(row);
  }

  /** The harness's one nudge: a Jev verdict handed to the crow so it proceeds. */
  private async nudge(row: ObligationRow, why: string): Promise<void> {
    const text =
      `Missed expectation on ${row.requestId}: ${why}. ${row.respondent}, please proceed: deliver your answer, ` +
      `or decline with a reason.`;
    try {
      await this.chat.nudge(row.nestId, row.respondent, text, row.requestId, async (tx, nudge) => {
        const marked = await tx.obligation.updateMany({ where: { id: row.id, stage: "claimed", nudgeId: "" }, data: { nudgeId: nudge.id, nudgedAt: nudge.createdAt } });
        if (marked.count !== 1) throw new ConflictError(`${row.id} was answered or nudged already.`);
      });
    } catch (error) {
      if (!(error instanceof CrowsError)) throw error;
      this.deps.logLine(`nests: no nudge for ${row.id}: ${describeError(error)}`);
      return;
    }
    this.armAt(row.id, this.now() + this.deps.config.nudgeAfterMs);
  }

  /** The crow still has not answered after its nudge: it declines, so the loop closes. */
  private async declineFor(row: ObligationRow): Promise<void> {
    const text = `I can't answer this one: nothing came within ${seconds(this.deps.config.nudgeAfterMs)} even after the harness's nudge.`;
    try {
      await this.chat.post(
        row.nestId,
        { author: row.respondent, text, refers_to: row.requestId },
        { forcedKind: "decline", response: true, unmetered: true, within: this.close(row.requestId, row.respondent, "declined") },
      );
    } catch (error) {
      if (!(error instanceof CrowsError)) throw error;
      // Answered meanwhile (conflict), or the crow may not post any more (quarantined, gone).
      if (!(error instanceof ConflictError)) await this.closeWithoutPost(row.requestId, row.respondent, `its decline was refused (${error.code})`);
    }
  }

  private leaseEnd(): Date {
    return new Date(this.now() + this.deps.config.leaseMs);
  }
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}

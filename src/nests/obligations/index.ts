// Obligations: the must-respond loop's promises, stored with the message that makes them so they
// outlive the process (docs/nests-chat.md "Obligations"). This front joins the stage writes
// (stages.ts), the lease over who drives each one (ownership.ts), the nudge deadlines
// (deadlines.ts) and an ask's expiry (ask-expiry.ts).
import type { Tx } from "../../log/event-log.ts";
import { obligationFence, type Fence, type StaleEpochError } from "../../storage/fence.ts";
import type { NestChat, ObligationHook } from "../chat.ts";
import type { MessageRecord, MessageRow } from "../message.ts";
import { AskExpiry } from "./ask-expiry.ts";
import { Deadlines } from "./deadlines.ts";
import { Ownership, type ObligationRunner, type WatchResumer } from "./ownership.ts";
import { FIRST_EPOCH } from "./fencing.ts";
import {
  refuseIfStale,
  Stages,
  type ObligationRow,
  type ObligationsDeps,
  type Outcome,
  type Within,
} from "./stages.ts";

export { OPEN_STAGES, WATCHER, respondentOf, watchObligationId, type ObligationsDeps, type Outcome } from "./stages.ts";
export type { ObligationRunner, WatchResumer } from "./ownership.ts";
export { ASK_EXPIRED_EVENT, askObligationId } from "./ask-expiry.ts";

export class Obligations implements ObligationHook {
  private readonly stages: Stages;
  private readonly deadlines: Deadlines;
  private readonly ownership: Ownership;
  private readonly asks: AskExpiry;

  constructor(
    chat: NestChat,
    private readonly deps: ObligationsDeps,
  ) {
    const now = deps.now ?? Date.now;
    this.deadlines = new Deadlines(chat, deps, this, now);
    this.ownership = new Ownership(
      chat,
      deps,
      this.deadlines,
      (requestId, respondent, why) => this.closeWithoutPost(requestId, respondent, why),
      now,
    );
    const lease = this.ownership.lease;
    const ownership = this.ownership;
    const held = {
      hold: (id: string) => lease.hold(id, { takenAt: now(), epoch: FIRST_EPOCH }),
      leaseEnd: () => lease.leaseEnd(),
      fences: ownership.fences,
      fencedOut: (error: StaleEpochError) => ownership.fencedOut(error),
    };
    this.stages = new Stages(
      deps,
      {
        ...held,
        armAt: (id, dueMs) => this.deadlines.armAt(id, dueMs),
        disarm: (requestId, respondent) => this.deadlines.disarm(requestId, respondent),
      },
      now,
    );
    this.asks = new AskExpiry(
      deps,
      {
        stopping: () => chat.signal.aborted,
        ...held,
        armAt: (id, dueMs) => this.deadlines.armAt(id, dueMs),
      },
      now,
    );
    chat.signal.addEventListener("abort", () => this.stop(), { once: true });
  }

  setRunner(runner: ObligationRunner): void {
    this.ownership.runner = runner;
  }

  setWatcher(watcher: WatchResumer): void {
    this.ownership.watcher = watcher;
  }

  get instanceId(): string {
    return this.deps.instanceId;
  }

  /** The obligations this instance drives now (tests, diagnostics). */
  heldIds(): string[] {
    return this.ownership.lease.heldIds();
  }

  /** Lease sweeps finished on this instance (tests, diagnostics). */
  sweepsDone(): number {
    return this.ownership.lease.sweepsDone;
  }

  /** Stores what the message promises, owned by this instance: its response, the Sentry's inspection, an ask's resolution. */
  async inTx(tx: Tx, row: MessageRow, context: { callsForResponse: boolean }): Promise<void> {
    await this.stages.inTx(tx, row, context);
    if (row.kind === "ask_owner") await this.asks.opened(tx, row);
  }

  /** In an exact reply's transaction: closes the ask's obligation; false when the ask expired first (AskExpiry.answered). */
  askAnswered(tx: Tx, askId: string, reply: MessageRow): Promise<boolean> {
    return this.asks.answered(tx, askId, reply);
  }

  /** An ask's deadline fired here (Deadlines): it expires, once. */
  expireAsk(row: ObligationRow): Promise<void> {
    return this.asks.fire(row);
  }

  /** The fence of a holder's move that may touch `ids` (fencing.ts): a where clause. */
  fence(ids: string[]) {
    return this.ownership.fences.where(ids);
  }

  /** After a holder's move matched no row: steps down and refuses the message when the fence refused it. */
  refuseIfStale(tx: Tx, ids: string[]): Promise<void> {
    const ownership = this.ownership;
    return refuseIfStale({ fences: ownership.fences, fencedOut: (e) => ownership.fencedOut(e) }, tx, ids);
  }

  /**
   * The fence a crow's turn at a request writes its tool calls under (docs/tools.md "Nest crows
   * with tools"): the epoch this instance holds, or held, of the crow's own obligation on it (a
   * conspiracy's further lens) or else of the request's. Null when it never held either (a request
   * stored with no obligation; one let go of so long ago its epoch is forgotten): no fence.
   */
  callFence(requestId: string, crow: string): Fence | null {
    for (const id of [`${requestId}/${crow}`, requestId]) {
      const epoch = this.ownership.fences.epochOf(id);
      if (epoch !== undefined) return obligationFence(id, epoch);
    }
    return null;
  }

  /** A write under an obligation's fence was refused elsewhere (a crow's tool call): this instance steps down from it. */
  fencedOut(error: StaleEpochError): void {
    this.ownership.fencedOut(error);
  }

  /** Calls `stop` once this instance steps down from obligation `id` (refused, or its sweep saw it taken over). */
  whenSteppedDown(id: string, stop: () => void): () => void {
    return this.ownership.whenSteppedDown(id, stop);
  }

  /** The watch verdict on `msgId` is being logged (Stages.judged). */
  judged(msgId: string, breach: boolean): (tx: Tx) => Promise<void> {
    return this.stages.judged(msgId, breach);
  }

  /** The Sentry's ask_owner after a breach closes the inspection of `msgId`. */
  asked(msgId: string): Within {
    return this.stages.asked(msgId);
  }

  /** The crow's claim: awaiting_claim -> claimed (Stages.claim). */
  claim(request: MessageRecord, crow: string): Within {
    return this.stages.claim(request, crow);
  }

  /** The one answer closes the author's open obligation on the request (Stages.close). */
  close(requestId: string, author: string, outcome: Outcome): Within {
    return this.stages.close(requestId, author, outcome);
  }

  /** A room request's crow declines and hands it on (Stages.handOn). */
  handOn(requestId: string, crow: string): Within {
    return this.stages.handOn(requestId, crow);
  }

  /** Closes an obligation that ends with no post (Boss saturated, the respondent refused by a guardrail). */
  closeWithoutPost(requestId: string, respondent: string, why: string): Promise<void> {
    return this.stages.closeWithoutPost(requestId, respondent, why);
  }

  /** Takes up every open obligation this instance may drive, then keeps sweeping (lease upkeep). */
  resume(): Promise<void> {
    return this.ownership.lease.resume();
  }

  stop(): void {
    // Only clears the sweep's interval; the sweep in flight, if any, ends on its own (it never rejects).
    void this.ownership.lease.stop();
    this.deadlines.stop();
  }
}

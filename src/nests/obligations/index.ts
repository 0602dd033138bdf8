// Obligations: the must-respond loop's promises, stored with the message that makes them so they
// outlive the process (docs/nests-chat.md "Obligations"). This front joins the stage writes
// (stages.ts), the lease over who drives each one (ownership.ts) and the nudge deadlines
// (deadlines.ts).
import type { Tx } from "../../log/event-log.ts";
import type { NestChat, ObligationHook } from "../chat.ts";
import type { MessageRecord, MessageRow } from "../message.ts";
import { Deadlines } from "./deadlines.ts";
import { Ownership, type ObligationRunner, type WatchResumer } from "./ownership.ts";
import { Stages, type ObligationsDeps, type Outcome, type Within } from "./stages.ts";

export { OPEN_STAGES, WATCHER, respondentOf, watchObligationId, type ObligationsDeps, type Outcome } from "./stages.ts";
export type { ObligationRunner, WatchResumer } from "./ownership.ts";

export class Obligations implements ObligationHook {
  private readonly stages: Stages;
  private readonly deadlines: Deadlines;
  private readonly ownership: Ownership;

  constructor(chat: NestChat, private readonly deps: ObligationsDeps) {
    const now = deps.now ?? Date.now;
    this.deadlines = new Deadlines(chat, deps, this, now);
    this.ownership = new Ownership(chat, deps, this.deadlines, (requestId, respondent, why) => this.closeWithoutPost(requestId, respondent, why), now);
    const lease = this.ownership.lease;
    this.stages = new Stages(
      deps,
      {
        hold: (id) => lease.hold(id, now()),
        leaseEnd: () => lease.leaseEnd(),
        armAt: (id, dueMs) => this.deadlines.armAt(id, dueMs),
        disarm: (requestId, respondent) => this.deadlines.disarm(requestId, respondent),
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

  /** Stores what the message promises, owned by this instance: its response, the Sentry's inspection. */
  inTx(tx: Tx, row: MessageRow, context: { callsForResponse: boolean }): Promise<void> {
    return this.stages.inTx(tx, row, context);
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

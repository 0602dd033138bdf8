// Missed expectations: a claim with no deliver within CROWS_NUDGE_AFTER_MS gets the server's one
// nudge, and one more CROWS_NUDGE_AFTER_MS later the crow declines, so the loop always closes.
// Timers fire at the stored claimedAt / nudgedAt deadlines, so a takeover arms what is left
// (docs/nests-chat.md "Obligations: the loop's promises survive kill -9 and other instances").
// The same timers fire an ask's expiry at the end of its window (ask-expiry.ts).
import { ConflictError, CrowsError } from "../../base/errors.ts";
import { describeError } from "../../base/describe-error.ts";
import type { NestChat } from "../chat.ts";
import { isAskObligation } from "./ask-expiry.ts";
import { OPEN_STAGES, type ObligationRow, type ObligationsDeps, type Outcome, type Within } from "./stages.ts";
import type { Prisma } from "../../generated/prisma/client.ts";
import type { Tx } from "../../log/event-log.ts";

/** The answers a deadline may write: the crow's decline closes the obligation, or it closes bare; an ask expires. */
export interface DeadlineAnswers {
  close(requestId: string, author: string, outcome: Outcome): Within;
  closeWithoutPost(requestId: string, respondent: string, why: string): Promise<void>;
  expireAsk(row: ObligationRow): Promise<void>;
  /** The fence of a holder's move on `ids` (fencing.ts), and the step-down when it refused one. */
  fence(ids: string[]): Prisma.ObligationWhereInput;
  refuseIfStale(tx: Tx, ids: string[]): Promise<void>;
}

/** setTimeout fires at once past ~24.8 days; a longer wait wakes early and re-arms (each handler re-checks its due time). */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class Deadlines {
  private readonly timers = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly chat: NestChat,
    private readonly deps: ObligationsDeps,
    private readonly answers: DeadlineAnswers,
    private readonly now: () => number,
  ) {}

  armAt(id: string, dueMs: number): void {
    this.clearTimer(id);
    if (this.chat.signal.aborted) return;
    const timer = setTimeout(
      () => {
        this.timers.delete(id);
        this.chat.spawn(`deadline of obligation ${id}`, () => this.onDeadline(id));
      },
      Math.min(MAX_TIMER_MS, Math.max(0, dueMs - this.now())),
    );
    timer.unref?.();
    this.timers.set(id, timer);
  }

  clearTimer(id: string): void {
    clearTimeout(this.timers.get(id));
    this.timers.delete(id);
  }

  disarm(requestId: string, respondent: string): void {
    this.clearTimer(requestId);
    this.clearTimer(`${requestId}/${respondent}`);
  }

  stop(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }

  /** A deadline passed: nudge once; after the nudge's own deadline, the crow declines. An ask expires. */
  private async onDeadline(id: string): Promise<void> {
    const row = await this.deps.prisma.obligation.findUnique({ where: { id } });
    if (!row || row.ownerId !== this.deps.instanceId) return;
    if (isAskObligation(id))
      return (OPEN_STAGES as readonly string[]).includes(row.stage) ? this.answers.expireAsk(row) : undefined;
    if (row.stage !== "claimed") return;
    // A crow waiting on the owner's approval of a tool call has missed nothing: the wait is the
    // owner's. Its clock starts again when the last such wait ended (docs/tools.md "Nest crows with tools").
    const wait = await this.ownersWait(row);
    if (wait.until !== null) return this.armAt(id, wait.until);
    const bound = this.deps.config.nudgeAfterMs;
    const since = Math.max(row.nudgeId === "" ? row.claimedAt!.getTime() : row.nudgedAt!.getTime(), wait.endedAt);
    const due = since + bound;
    if (due > this.now()) return this.armAt(id, due);
    if (row.nudgeId === "") return this.nudge(row, `no deliver came within ${seconds(bound)} of the claim`);
    await this.declineFor(row);
  }

  /**
   * The respondent's tool calls on this request that waited on the owner: `until`, the deadline of
   * one still waiting (null when none is); `endedAt`, when the last wait ended (0 for none).
   */
  private async ownersWait(row: ObligationRow): Promise<{ until: number | null; endedAt: number }> {
    const calls = await this.deps.prisma.toolCall.findMany({
      where: { nestId: row.nestId, itemId: row.requestId, crow: row.respondent, policy: "ask" },
      select: { status: true, deadline: true, decidedAt: true },
    });
    let endedAt = 0;
    for (const call of calls) {
      const deadline = call.deadline?.getTime() ?? 0;
      if (call.status === "asked" && deadline > this.now()) return { until: deadline, endedAt };
      endedAt = Math.max(endedAt, call.decidedAt?.getTime() ?? deadline);
    }
    return { until: null, endedAt };
  }

  /** The server's one nudge: a Jev verdict handed to the crow so it proceeds. */
  async nudge(row: ObligationRow, why: string): Promise<void> {
    const text =
      `Missed expectation on ${row.requestId}: ${why}. ${row.respondent}, please proceed: deliver your answer, ` +
      `or decline with a reason.`;
    try {
      await this.chat.nudge(row.nestId, row.respondent, text, row.requestId, async (tx, nudge) => {
        const marked = await tx.obligation.updateMany({
          where: { id: row.id, stage: "claimed", nudgeId: "", ...this.answers.fence([row.id]) },
          data: { nudgeId: nudge.id, nudgedAt: nudge.createdAt },
        });
        if (marked.count !== 1) await this.answers.refuseIfStale(tx, [row.id]);
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
        {
          forcedKind: "decline",
          response: true,
          unmetered: true,
          within: this.answers.close(row.requestId, row.respondent, "declined"),
        },
      );
    } catch (error) {
      if (!(error instanceof CrowsError)) throw error;
      // Answered meanwhile (conflict), or the crow may not post any more (quarantined, gone).
      if (!(error instanceof ConflictError))
        await this.answers.closeWithoutPost(row.requestId, row.respondent, `its decline was refused (${error.code})`);
    }
  }
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}

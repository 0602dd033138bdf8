// An ask's expiry (docs/nests-chat.md "ask_owner"): silence counts as no. Every ask_owner stores an
// obligation `ask:<msg_id>` (respondent `owner`) in its own transaction, so the promise that it
// resolves one way or the other outlives the process and is driven by exactly one instance (the
// obligations' lease and deadline timers, nothing of its own). The owner's exact reply in time
// closes it `answered`, in the reply's transaction; otherwise, once the approval window has passed,
// the holder appends one `ask.expired` on `watch:<nest_id>` and closes it `declined` in that same
// transaction. Each close is a conditional update on the open stage, so whichever commits first
// wins: one expiry or one approval, never both, across restarts and instances. The nest stream
// itself stays one event per message (its seq is the msg_id's n), and the compat wire unchanged.
import { ConflictError } from "../../base/errors.ts";
import { describeError } from "../../base/describe-error.ts";
import { SYSTEM, withActor } from "../../base/actor.ts";
import { watchStream } from "../../base/streams.ts";
import type { Tx } from "../../log/event-log.ts";
import type { MessageRow } from "../message.ts";
import { OPEN_STAGES, refuseIfStale, type HeldTimers, type ObligationRow, type ObligationsDeps } from "./stages.ts";
import { FIRST_EPOCH } from "./fencing.ts";

export const ASK_EXPIRED_EVENT = "ask.expired";
/** Who an ask's obligation waits on. */
export const ASKED = "owner";
/** How soon an expiry whose write failed (the database restarting) is tried again. */
const RETRY_MS = 1_000;

export const askObligationId = (msgId: string) => `ask:${msgId}`;
export const isAskObligation = (id: string) => id.startsWith("ask:");

/** The moment an ask stops taking replies: a reply stamped at it still counts, one after it does not. */
export const askDeadlineMs = (ask: Pick<MessageRow, "createdAt">, windowMs: number) =>
  ask.createdAt.getTime() + windowMs;

/** What the expiry does with the obligations' lease and timers. */
export interface ExpiryEffects extends HeldTimers {
  /** True once the server is stopping: a failed write then is the shutdown, not worth a line or a retry. */
  stopping(): boolean;
}

export class AskExpiry {
  constructor(
    private readonly deps: ObligationsDeps,
    private readonly effects: ExpiryEffects,
    private readonly now: () => number,
  ) {}

  private get windowMs(): number {
    return this.deps.config.approvalWindowMs;
  }

  /** In the ask's own transaction: the promise that it resolves, held here, armed for its deadline. */
  async opened(tx: Tx, ask: MessageRow): Promise<void> {
    const id = askObligationId(ask.id);
    await tx.obligation.create({
      data: {
        id,
        requestId: ask.id,
        nestId: ask.nestId,
        respondent: ASKED,
        ownerId: this.deps.instanceId,
        leaseUntil: this.effects.leaseEnd(),
        epoch: FIRST_EPOCH,
      },
    });
    this.effects.hold(id);
    this.effects.armAt(id, askDeadlineMs(ask, this.windowMs) + 1);
  }

  /**
   * In an exact reply's transaction: closes the ask's obligation answered. False when the ask
   * expired first (its expiry committed), so the reply approves nothing. An ask stored before asks
   * had obligations has none, and the reply's own window check decides alone.
   */
  async answered(tx: Tx, askId: string, reply: MessageRow): Promise<boolean> {
    const id = askObligationId(askId);
    const closed = await tx.obligation.updateMany({
      where: { id, stage: { in: [...OPEN_STAGES] } },
      data: { stage: "answered", answerId: reply.id, closedAt: reply.createdAt },
    });
    if (closed.count === 1) return true;
    return (await tx.obligation.count({ where: { id } })) === 0;
  }

  /** The deadline timer fired on this instance, which holds the obligation: the ask expires, once. */
  async fire(row: ObligationRow): Promise<void> {
    try {
      await this.expire(row);
    } catch (error) {
      // Only when the database fails (restarting, stalled): a lost expiry would be silence again.
      // At shutdown the obligation stays open, and the next start expires it.
      if (this.effects.stopping()) return;
      this.deps.logLine(`nests: the expiry of ${row.requestId} failed (tried again shortly): ${describeError(error)}`);
      this.effects.armAt(row.id, this.now() + RETRY_MS);
    }
  }

  private async expire(row: ObligationRow): Promise<void> {
    const ask = await this.deps.prisma.message.findUnique({ where: { id: row.requestId } });
    if (!ask || ask.kind !== "ask_owner" || ask.approvedAt) {
      // Gone with its nest, or approved before asks had obligations: nothing left to expire.
      await this.close(row, ask?.approvedAt ? "answered" : "declined");
      return;
    }
    const due = askDeadlineMs(ask, this.windowMs);
    // Timers may fire a little early; the window is the owner's up to the deadline itself.
    if (this.now() <= due) return this.effects.armAt(row.id, due + 1);
    const at = new Date(this.now());
    await this.deps.log
      .appendWith(watchStream(ask.nestId), async (tx) => {
        // The holder's expiry: fenced by the epoch it holds (fencing.ts); the owner's reply is not.
        const closed = await tx.obligation.updateMany({
          where: { id: row.id, stage: { in: [...OPEN_STAGES] }, ...this.effects.fences.where([row.id]) },
          data: { stage: "declined", closedAt: at },
        });
        if (closed.count !== 1) await refuseIfStale(this.effects, tx, [row.id]);
        if (closed.count !== 1) throw new ConflictError(`${ask.id} was answered or expired already.`);
        return [{ name: ASK_EXPIRED_EVENT, payload: askExpiredPayload(ask, due, at) }];
      })
      .catch((error: unknown) => {
        if (!(error instanceof ConflictError)) throw error; // else the exact reply, or another instance's expiry, came first
      });
  }

  private async close(row: ObligationRow, stage: "answered" | "declined"): Promise<void> {
    await this.deps.prisma.obligation.updateMany({
      where: { id: row.id, stage: { in: [...OPEN_STAGES] }, ...this.effects.fences.where([row.id]) },
      data: { stage, closedAt: new Date(this.now()) },
    });
  }
}

/**
 * The `ask.expired` payload: nest_id first and ts then the actor last, like every nest event. The
 * ask reads `resolved: "rejected"` from now on; `verdict: "timeout"` is the list approvals' word for
 * the same fail-safe no. The server decided it, so the actor is `system`, as on a timeout verdict.
 */
export function askExpiredPayload(ask: MessageRow, dueMs: number, at: Date): Record<string, unknown> {
  const payload = {
    nest_id: ask.nestId,
    ask_id: ask.id,
    author: ask.author,
    to: ask.to,
    refers_to: ask.refersTo,
    approval_phrase: ask.approvalPhrase,
    deadline: new Date(dueMs).toISOString(),
    verdict: "timeout",
    resolved: "rejected",
    ts: at.toISOString(),
  };
  return withActor(payload, SYSTEM);
}

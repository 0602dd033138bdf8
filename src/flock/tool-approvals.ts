// The approval of an `ask` tool call (docs/tools.md "The approval of a call"): the owner's one
// decision (approved, refused with a reason, or approved always: a standing permission granted in
// the same transaction), or `timeout` at the call's stored deadline, so a restart keeps it. The
// waiter wakes on a decision from any instance (the list stream's bus signal; the row is the truth).
// A tool decision never moves trust. The timeout is the call's writer's own decision, fenced by its
// lease (the list's epoch, or the obligation's for a nest crow's call; docs/tools.md "At most
// once"): an instance that lost the lease writes none.
import type { PrismaClient, ToolCall } from "../generated/prisma/client.ts";
import type { EventDraft, EventLog, Tx } from "../log/event-log.ts";
import { topicOf, type Bus, type BusEvent } from "../log/bus.ts";
import { BadInputError, NotFoundError } from "../base/errors.ts";
import { deciderColumns, SYSTEM, type Actor } from "../base/actor.ts";
import { StoppedError } from "./approvals.ts";
import { toolCallFacts, toolEventPayload, toolStreamOf, type ToolDecision } from "./tool-events.ts";
import { grantIn } from "./tool-permissions.ts";
import { StaleEpochError } from "../storage/fence.ts";
import type { CallOwner } from "./call-owner.ts";

/** The longest reason a refusal may carry (characters). */
export const MAX_REASON_CHARS = 1_000;
/** How soon a timeout whose write failed (the database restarting) is written again. */
const TIMEOUT_RETRY_MS = 1_000;

export class ToolApprovals {
  private readonly waiters = new Map<string, Set<(decision: ToolDecision) => void>>();
  private readonly failers = new Map<(error: Error) => void, string>(); // -> its list id
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly timerLists = new Map<string, string>(); // call id -> its list id
  private stopped = false;

  constructor(
    private readonly prisma: PrismaClient,
    private readonly log: EventLog,
    private readonly now: () => number = Date.now,
    private readonly bus?: Bus,
  ) {}

  /**
   * The owner's decision on an asked call. NotFoundError when nothing waits on it: decided already,
   * past its deadline (silence is a refusal, whatever arrives after), or no such call.
   */
  async decide(
    callId: unknown,
    input: { approve: unknown; reason?: unknown; always?: unknown },
    actor: Actor,
  ): Promise<ToolDecision> {
    if (typeof callId !== "string" || callId.trim() === "") throw new BadInputError("A call id is required.");
    if (typeof input.approve !== "boolean")
      throw new BadInputError(
        '"approve" is required and must be true or false; a missing answer is never read as a no.',
      );
    if (input.reason !== undefined && input.reason !== null && typeof input.reason !== "string")
      throw new BadInputError('"reason" must be a string when given.');
    if (input.always !== undefined && typeof input.always !== "boolean")
      throw new BadInputError('"always" must be true or false when given.');
    const reason = typeof input.reason === "string" && input.reason.trim() !== "" ? input.reason.trim() : null;
    if (reason !== null && reason.length > MAX_REASON_CHARS)
      throw new BadInputError(`"reason" is at most ${MAX_REASON_CHARS} characters.`);
    if (input.always === true && !input.approve) throw new BadInputError('"always" goes with an approval only.');
    const decision: ToolDecision = input.approve ? "approved" : "refused";
    const call = await this.call(callId);
    const moved =
      call !== null && (await this.record(call, decision, actor, { reason, always: input.always === true }));
    if (!moved) throw new NotFoundError(`No tool call ${callId} is waiting for a decision.`);
    return decision;
  }

  /**
   * The decision on an asked call: at once when recorded, else when the owner decides or its
   * stored deadline passes (then `timeout`, a refusal). The waiter is registered before the row is
   * read, so a decision landing in between is not missed; another instance's decision wakes it by
   * the call stream's bus signal. The timeout is written under `owner`'s fence; refused, the
   * owner steps down (which ends this wait).
   */
  async waitFor(call: ToolCall, owner: CallOwner): Promise<ToolDecision> {
    if (this.stopped) throw new StoppedError();
    let settle!: (decision: ToolDecision) => void;
    let fail!: (error: Error) => void;
    const decided = new Promise<ToolDecision>((resolve, reject) => {
      settle = resolve;
      fail = reject;
    });
    decided.catch(() => {});
    const set = this.waiters.get(call.id) ?? new Set();
    set.add(settle);
    this.waiters.set(call.id, set);
    this.failers.set(fail, call.listId);
    const topic = topicOf(toolStreamOf(call));
    const onAppend = (event: BusEvent) => {
      if (event.detail.name === "tool.decided" || event.detail.seq === 0)
        void this.settleFromRow(call.id).catch(() => {});
    };
    this.bus?.addEventListener(topic, onAppend);
    try {
      const row = await this.call(call.id);
      if (!row) throw new Error(`no tool call ${call.id}`);
      const known = decisionOf(row.status);
      if (known) settle(known);
      else this.arm(row, owner);
      return await decided;
    } finally {
      this.bus?.removeEventListener(topic, onAppend);
      set.delete(settle);
      if (set.size === 0) this.waiters.delete(call.id);
      this.failers.delete(fail);
    }
  }

  stop(): void {
    this.stopped = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    for (const fail of [...this.failers.keys()]) fail(new StoppedError());
  }

  /** Another instance took the list over: its waiters end here, its deadlines are the new owner's. */
  release(listId: string): void {
    for (const [callId, list] of [...this.timerLists]) {
      if (list !== listId) continue;
      clearTimeout(this.timers.get(callId));
      this.timers.delete(callId);
      this.timerLists.delete(callId);
    }
    for (const [fail, list] of [...this.failers]) if (list === listId) fail(new StoppedError());
  }

  private arm(call: ToolCall, owner: CallOwner): void {
    if (this.stopped || this.timers.has(call.id) || !call.deadline) return;
    const deadline = call.deadline;
    const timer = setTimeout(
      () => {
        this.timers.delete(call.id);
        if (deadline.getTime() > this.now()) return this.arm(call, owner);
        void this.record(call, "timeout", SYSTEM, { reason: null, always: false }, owner)
          .then((moved) => (moved ? undefined : this.settleFromRow(call.id)))
          .catch((error: unknown) => {
            // Refused by the fence: another instance runs the list now; this one steps down, no retry.
            if (error instanceof StaleEpochError) return owner.fencedOut(error);
            if (this.stopped || this.timers.has(call.id)) return;
            const retry = setTimeout(() => {
              this.timers.delete(call.id);
              this.arm(call, owner);
            }, TIMEOUT_RETRY_MS);
            retry.unref?.();
            this.timers.set(call.id, retry);
          });
      },
      Math.max(0, deadline.getTime() - this.now()),
    );
    timer.unref?.();
    this.timers.set(call.id, timer);
    this.timerLists.set(call.id, call.listId);
  }

  private async settleFromRow(callId: string): Promise<void> {
    if (!this.waiters.has(callId)) return;
    const row = await this.call(callId);
    const decision = row ? decisionOf(row.status) : null;
    if (!decision) return;
    clearTimeout(this.timers.get(callId));
    this.timers.delete(callId);
    this.timerLists.delete(callId);
    for (const settle of [...(this.waiters.get(callId) ?? [])]) settle(decision);
  }

  /**
   * Moves an asked call to `decision` with its tool.decided (and, for "always", the standing
   * permission it grants) in one transaction; false when it was not asked or its deadline passed.
   * A tool decision never moves trust (docs/tools.md "Tool approvals and trust"). Only the run's
   * own decision (the timeout, with its `owner`) is fenced; the owner's answer may come through
   * any instance.
   */
  private async record(
    call: ToolCall,
    decision: ToolDecision,
    actor: Actor,
    extra: { reason: string | null; always: boolean },
    owner?: CallOwner,
  ): Promise<boolean> {
    const at = new Date(this.now());
    let moved = false;
    const build = async (tx: Tx): Promise<EventDraft[]> => {
      // The owner's window ends at the deadline: a decision after it moves nothing (the timeout does).
      const inTime = decision === "timeout" ? { lte: at } : { gt: at };
      const { count } = await tx.toolCall.updateMany({
        where: { id: call.id, status: "asked", deadline: inTime },
        data: {
          status: decision,
          decidedAt: at,
          reason: extra.reason,
          always: extra.always,
          ...deciderColumns(actor),
        },
      });
      if (count === 0) return [];
      moved = true;
      if (extra.always) await grantIn(tx, call, actor, at);
      return [
        {
          name: "tool.decided",
          payload: toolEventPayload<"tool.decided">(
            call,
            { ...toolCallFacts(call, call.id), decision, reason: extra.reason, always: extra.always },
            at,
            actor,
          ),
        },
      ];
    };
    const stream = toolStreamOf(call);
    if (owner?.fence && decision === "timeout") await this.log.fencedAppendWith(stream, owner.fence, build);
    else await this.log.appendWith(stream, build);
    if (!moved) return false;
    clearTimeout(this.timers.get(call.id));
    this.timers.delete(call.id);
    this.timerLists.delete(call.id);
    for (const settle of [...(this.waiters.get(call.id) ?? [])]) settle(decision);
    return true;
  }

  private call(callId: string): Promise<ToolCall | null> {
    return this.prisma.toolCall.findUnique({ where: { id: callId } });
  }
}

/** What a row's status says was decided (null: still asked). */
export function decisionOf(status: string): ToolDecision | null {
  if (status === "asked") return null;
  if (status === "refused" || status === "timeout") return status;
  return "approved"; // approved, started, returned, unknown: it was approved once
}

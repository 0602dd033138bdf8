// Over 400 lines for now: this round's reminders arm their timers beside the deadlines' (one timer
// table, one release() per list); the split is the timer table into its own class that both the
// deadline and the reminder use, so reminders.ts can hold remind() whole.
// Approvals (docs/flock.md §4.4, docs/contract.md "Settled details"): every target (an item's triage,
// its output) gets exactly one verdict. A pending approval waits for POST /api/verdicts until its
// deadline; no answer by then is `timeout`, which counts as a rejection (fail safe). The deadline
// is stored, so after a restart a pending approval still times out at its original moment.
// The verdict, the approval row and the trust changes it causes commit in one transaction.
// With several instances the verdict may be recorded by another instance than the one waiting:
// a waiter also wakes on its list stream's bus signal and re-reads the row (the row is the truth).
import type { Item } from "../generated/prisma/client.ts";
import { stringArray } from "../base/util/json-column.ts";
import type { EventLog, StateTx } from "../log/event-log.ts";
import { topicOf, type Bus, type BusEvent } from "../log/bus.ts";
import { NotFoundError } from "../base/errors.ts";
import { listEventPayload, VERDICTS, type Target, type VerdictValue } from "./events.ts";
import { listStream } from "../base/streams.ts";
import type { TrustLedger } from "./trust.ts";
import { SYSTEM, type Actor } from "../base/actor.ts";
import { StaleEpochError } from "../storage/fence.ts";
import type { ListOwner } from "./list-owner.ts";
import { withReason } from "./reason.ts";
import { grantRework } from "./rework.ts";
import { applyEdit, type Edit } from "./edit.ts";
import { FLOCK } from "../base/settings/flock.ts";
import { REMINDER_EVENT, reminderDueMs, reminderPayload } from "./reminders.ts";
import type { ApprovalRow } from "../storage/state-shapes.ts";

/** How soon a timeout whose write failed (the database restarting) is written again. */
const TIMEOUT_RETRY_MS = 1_000;

export type Decision = Exclude<VerdictValue, "auto"> | "auto";

/** What an owner's verdict may carry besides yes or no (docs/rules.md "Reasons", "Rework", "Edits"). */
export interface VerdictExtras {
  reason?: string;
  /** With a rejection: ask for another try. */
  rework?: boolean;
  /** With an approval: the owner's changes. */
  edit?: Edit;
}

/**
 * The approval as an answer left it: what the verdict wrote on the row. A granted rework opens the
 * same row again one round higher at once (the run wakes on the verdict's own signal), so a reader
 * after the answer may already find the next round (schema/verdicts.ts answers this instead).
 */
export interface DecidedApproval {
  round: number;
  status: Decision;
  decidedAt: Date;
  actor: Actor;
  reason: string | null;
  rework: string | null;
  edit: string | null;
}

/** An approval row's status: pending until its one verdict, then that verdict. */
export const APPROVAL_STATUSES = ["pending", ...VERDICTS] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];

/** Raised to waiters when the engine stops; the item resumes on the next start. */
export class StoppedError extends Error {
  constructor() {
    super("the flock is stopping");
  }
}

export interface ApprovalSubject {
  listId: string;
  itemId: string;
  target: Target;
  taskType: string;
  /** Whose ledger records the verdict moves: "flock" for triage, the item's crows for output. */
  holders: string[];
  /**
   * The list's owner, when its run waits: the timeout at the deadline is the owner's write, fenced
   * by its epoch. (An answer is anyone's: a verdict may be recorded by any instance.)
   */
  owner?: ListOwner;
  /** The item's tries: which round of this target's approval (docs/rules.md "Rework"). */
  round: number;
}

/** The approval a target of `item` waits on, and whose ledger records its verdict moves. */
export function approvalSubject(
  item: Pick<Item, "id" | "listId" | "taskType" | "crows" | "tries">,
  target: Target,
): ApprovalSubject {
  return {
    listId: item.listId,
    itemId: item.id,
    target,
    taskType: item.taskType ?? "other",
    holders: target === "triage" ? ["flock"] : stringArray(item.crows),
    round: item.tries,
  };
}

const key = (itemId: string, target: string) => `${itemId}|${target}`;
/** The reminder's timer sits beside the deadline's, under a key of its own (same list prefix: release()). */
const reminderKey = (k: string) => `${k}|reminder`;

export class ApprovalDesk {
  private readonly waiters = new Map<string, Set<(decision: Decision) => void>>();
  private readonly failers = new Map<(error: Error) => void, string>(); // -> its list id
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private stopped = false;

  constructor(
    private readonly log: EventLog,
    private readonly trust: TrustLedger,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
    private readonly bus?: Bus,
    /** How many reworks one item may get (CROWS_REWORK_TRIES). */
    private readonly reworkTries: number = FLOCK.reworkTries.default as number,
    /** How long before a deadline its reminder goes (CROWS_APPROVAL_REMINDER_MS); 0: none. */
    private readonly reminderLeadMs: number = 0,
  ) {}

  /**
   * Inside the transaction that announces the target (item.triaged, item.answered): parks a
   * pending approval with its deadline, or records `auto` when trust skips it — so an item is never
   * announced without the approval it waits on. Returns the events to append after the announcement.
   */
  async openIn(
    tx: StateTx,
    subject: ApprovalSubject,
    needsApproval: boolean,
    /** The approval's own window (its task type's or nest's, settings/windows.ts); the base window otherwise. */
    windowMs = this.windowMs,
  ): Promise<Array<{ name: string; payload: object }>> {
    if (needsApproval) {
      await tx.openApproval(subject.itemId, subject.target, new Date(this.now() + windowMs), subject.round);
      return [];
    }
    return (await this.decideIn(tx, subject, "auto", true, SYSTEM)) ?? [];
  }

  /**
   * The owner's answer, by `actor`, with their reason if any, and on a rejection maybe a request for
   * another try (rework.ts); NotFoundError when nothing is waiting (including a second answer).
   */
  async answer(
    subject: ApprovalSubject,
    approve: boolean,
    actor: Actor,
    extras: VerdictExtras = {},
  ): Promise<DecidedApproval> {
    let decided: DecidedApproval | undefined;
    const recorded = await this.record(subject, approve ? "approved" : "rejected", actor, extras, (d) => {
      decided = d;
    });
    if (!recorded || !decided)
      throw new NotFoundError(
        `Nothing is waiting for ${subject.target === "output" ? "an" : "a"} ${subject.target} verdict on ${subject.itemId}.`,
      );
    return decided;
  }

  /**
   * A cancelled list's pending approval, rejected by whoever cancelled (docs/rules.md "Cancelling a
   * list"): a rejection like the owner's own. False when it was decided already.
   */
  rejectForCancel(subject: ApprovalSubject, actor: Actor): Promise<boolean> {
    return this.record(subject, "rejected", actor);
  }

  /**
   * The decision for a target: at once when it is already recorded, otherwise when the owner
   * answers or the deadline passes. The waiter is registered before the row is read, so an
   * answer landing in between is not missed.
   */
  async waitFor(subject: ApprovalSubject): Promise<Decision> {
    if (this.stopped) throw new StoppedError();
    const k = key(subject.itemId, subject.target);
    let settle!: (decision: Decision) => void;
    let fail!: (error: Error) => void;
    const decided = new Promise<Decision>((resolve, reject) => {
      settle = resolve;
      fail = reject;
    });
    // stop() may reject it while the row read below is still in flight: not unhandled, awaited below.
    decided.catch(() => {});
    const set = this.waiters.get(k) ?? new Set();
    set.add(settle);
    this.waiters.set(k, set);
    this.failers.set(fail, subject.listId);
    // A verdict appended by any instance signals the list stream; the row says whether it was ours.
    const topic = topicOf(listStream(subject.listId));
    const onAppend = (event: BusEvent) => {
      // Only a verdict (or a nudge: "re-read, something may have been missed") can decide it.
      // A failed read of the row drops only this wake-up: the deadline's timer and the next signal read it again.
      if (event.detail.name === "verdict" || event.detail.seq === 0) void this.settleFromRow(subject).catch(() => {});
    };
    this.bus?.addEventListener(topic, onAppend);
    try {
      const row = await this.log.state.approval(subject.itemId, subject.target);
      if (!row) throw new Error(`no approval row for ${k}`);
      if (row.status !== "pending") settle(row.status as Decision);
      else {
        this.arm(subject, row.deadline);
        this.armReminder(subject, row);
      }
      return await decided;
    } finally {
      this.bus?.removeEventListener(topic, onAppend);
      set.delete(settle);
      if (set.size === 0) this.waiters.delete(k);
      this.failers.delete(fail);
    }
  }

  /** Wakes every waiter with StoppedError and drops the timers; the rows stay pending. */
  stop(): void {
    this.stopped = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    for (const fail of [...this.failers.keys()]) fail(new StoppedError());
  }

  /**
   * Like stop(), for one list this instance no longer holds (another instance took it over):
   * its waiters end with StoppedError and its deadlines are left to the new owner.
   */
  release(listId: string): void {
    for (const [k, timer] of this.timers) {
      if (!k.startsWith(`${listId}-`)) continue; // item ids are <list_id>-<n>
      clearTimeout(timer);
      this.timers.delete(k);
    }
    for (const [fail, list] of [...this.failers]) if (list === listId) fail(new StoppedError());
  }

  private arm(subject: ApprovalSubject, deadline: Date): void {
    const k = key(subject.itemId, subject.target);
    if (this.stopped || this.timers.has(k)) return;
    const delay = Math.max(0, deadline.getTime() - this.now());
    // setTimeout caps at ~24.8 days; windows are minutes.
    const timer = setTimeout(() => {
      this.timers.delete(k);
      // Node's timers can fire a millisecond before the wall clock reaches the deadline; the
      // window is the owner's until the deadline itself, so wait out the remainder.
      if (deadline.getTime() > this.now()) return this.arm(subject, deadline);
      // Not moved: someone (maybe another instance, its signal lost) decided first; hand that on.
      void this.record(subject, "timeout", SYSTEM)
        .then((moved) => (moved ? undefined : this.settleFromRow(subject)))
        .catch((error: unknown) => {
          // Refused by the fence: this instance no longer owns the list; it steps down, no retry.
          if (!(error instanceof StaleEpochError)) throw error;
          subject.owner?.fencedOut(error);
        })
        // Fails only when the database does. At shutdown the row stays pending, and on the next start
        // the list waits on it again, finds the deadline past and records the timeout then. A
        // database that restarted or stalled under a live server is tried again shortly, or the
        // list would wait for ever on a deadline long past.
        .catch(() => {
          if (this.stopped || this.timers.has(k)) return;
          const retry = setTimeout(() => {
            this.timers.delete(k);
            this.arm(subject, deadline);
          }, TIMEOUT_RETRY_MS);
          retry.unref?.();
          this.timers.set(k, retry);
        });
    }, delay);
    timer.unref?.();
    this.timers.set(k, timer);
  }

  /**
   * Sets the reminder's timer for a pending round not reminded yet; one due while the server was
   * down goes at once (remind() refuses it if the deadline has passed meanwhile).
   */
  private armReminder(subject: ApprovalSubject, row: ApprovalRow): void {
    const k = reminderKey(key(subject.itemId, subject.target));
    const due = reminderDueMs(row.openedAt, row.deadline, this.reminderLeadMs);
    if (this.stopped || row.reminded || due === null || this.timers.has(k)) return;
    const timer = setTimeout(
      () => {
        this.timers.delete(k);
        void this.remind(subject).catch((error: unknown) => {
          if (error instanceof StaleEpochError) return; // the list is another instance's now: its reminder
          // The database failed: try again shortly, as a timeout is (remind() checks everything again).
          if (this.stopped || this.timers.has(k)) return;
          const retry = setTimeout(() => {
            this.timers.delete(k);
            this.armReminder(subject, row);
          }, TIMEOUT_RETRY_MS);
          retry.unref?.();
          this.timers.set(k, retry);
        });
      },
      Math.max(0, due - this.now()),
    );
    timer.unref?.();
    this.timers.set(k, timer);
  }

  /**
   * Sends this round's reminder: the `approval.reminder` event, in the transaction that marks the
   * row reminded. False, with nothing written, when the approval was decided (by any instance),
   * reopened for another round, is past its deadline, or was reminded already.
   */
  async remind(subject: ApprovalSubject): Promise<boolean> {
    const { listId, itemId, target, round } = subject;
    let sent = false;
    const build = async (tx: StateTx) => {
      const at = new Date(this.now());
      const row = await tx.approval(itemId, target);
      if (!row || !(await tx.markReminded(itemId, target, round, at))) return [];
      sent = true;
      return [
        {
          name: REMINDER_EVENT,
          payload: reminderPayload(listId, { itemId, target, round, deadline: row.deadline }, at),
        },
      ];
    };
    const stream = listStream(listId);
    if (subject.owner) await this.log.fencedAppend(stream, subject.owner.fence, build);
    else await this.log.appendState(stream, build);
    return sent;
  }

  /** Drops a target's timers (the deadline's and the reminder's): it was decided. */
  private disarm(k: string): void {
    for (const name of [k, reminderKey(k)]) {
      clearTimeout(this.timers.get(name));
      this.timers.delete(name);
    }
  }

  /** Wakes this target's waiters when its row is decided, whoever decided it. */
  private async settleFromRow(subject: ApprovalSubject): Promise<void> {
    const k = key(subject.itemId, subject.target);
    if (!this.waiters.has(k)) return;
    const row = await this.log.state.approval(subject.itemId, subject.target);
    if (!row || row.status === "pending") return;
    this.disarm(k);
    for (const settle of [...(this.waiters.get(k) ?? [])]) settle(row.status as Decision);
  }

  /**
   * Moves a pending approval to `decision` and appends the verdict and every trust.changed it
   * causes, in one transaction. Returns false when it was not pending.
   */
  private async record(
    subject: ApprovalSubject,
    decision: Decision,
    actor: Actor,
    extras: VerdictExtras = {},
    seen?: (decided: DecidedApproval) => void,
  ): Promise<boolean> {
    let moved = false;
    const build = async (tx: StateTx) => {
      const events = await this.decideIn(tx, subject, decision, false, actor, extras, seen);
      moved = events !== null;
      return events ?? [];
    };
    const stream = listStream(subject.listId);
    // Only the owner's own verdict (the timeout) is fenced; an answer may come through any instance.
    if (subject.owner && decision === "timeout") await this.log.fencedAppend(stream, subject.owner.fence, build);
    else await this.log.appendState(stream, build);
    if (!moved) return false;
    const k = key(subject.itemId, subject.target);
    this.disarm(k);
    for (const settle of [...(this.waiters.get(k) ?? [])]) settle(decision);
    return true;
  }

  /**
   * The verdict and trust changes for `decision`, or null when the approval was not pending. The
   * approval row and every event name `actor` as the decider (a timeout and trust skipping: system).
   * The decider's reason is kept on the row and each trust entry, and appended last to the verdict.
   */
  private async decideIn(
    tx: StateTx,
    subject: ApprovalSubject,
    decision: Decision,
    create: boolean,
    actor: Actor,
    extras: VerdictExtras = {},
    seen?: (decided: DecidedApproval) => void,
  ): Promise<Array<{ name: string; payload: object }> | null> {
    const { listId, itemId, target, taskType, holders } = subject;
    const { reason } = extras;
    const decidedAt = new Date(this.now());
    let reworked = false;
    let edited: { before: object; after: object } | null = null;
    if (create) {
      await tx.createDecidedApproval(itemId, target, decision, decidedAt, actor, subject.round);
    } else {
      // Applied first; an approval that was not pending decides nothing (the row check below rolls back).
      const outcome =
        extras.rework && decision === "rejected"
          ? await grantRework(tx, { listId, itemId, target, reason, maxTries: this.reworkTries })
          : null;
      edited = extras.edit && decision === "approved" ? await applyEdit(tx, itemId, target, extras.edit) : null;
      const kept = { reason, rework: outcome ?? undefined, edit: edited ? JSON.stringify(edited) : undefined };
      if (!(await tx.decideApproval(itemId, target, decision, decidedAt, actor, kept))) {
        if (outcome === "granted" || edited)
          throw new NotFoundError(`Nothing is waiting for a ${target} verdict on ${itemId}.`);
        return null;
      }
      reworked = outcome === "granted";
      seen?.({
        round: subject.round,
        status: decision,
        decidedAt,
        actor,
        reason: reason ?? null,
        rework: outcome ?? null,
        edit: kept.edit ?? null,
      });
    }
    const verdict: Record<string, unknown> = withReason(
      listEventPayload<"verdict">(listId, { item_id: itemId, target, verdict: decision }, decidedAt, actor),
      reason,
    );
    // After everything else: a granted rework (the item flies again, docs/rules.md "Rework"), an
    // edit (what the owner changed before saying yes, "Edits").
    if (reworked) verdict.rework = true;
    if (edited) verdict.edited = edited;
    const events: Array<{ name: string; payload: object }> = [{ name: "verdict", payload: verdict }];
    for (const holder of holders) {
      const change = await this.trust.apply(tx, holder, taskType, decision, itemId, actor, reason ?? null, !!edited);
      if (change) {
        events.push({
          name: "trust.changed",
          payload: listEventPayload<"trust.changed">(
            listId,
            { holder, task_type: taskType, from: change.from, to: change.to },
            decidedAt,
            actor,
          ),
        });
      }
    }
    return events;
  }
}

// One list, start to finish (docs/flock.md §4). Items are worked concurrently up to a limit, each
// through stored stages (src/flock/stages.ts), so a restart picks every item up where it stood:
//   pending -> awaiting_triage -> working -> awaiting_output -> done
//   (or skipped, with reason rejected | timeout | budget | failure, from any stage before done)
// list.finished follows once every item is done or skipped and banter has landed (or waited out).
// The work stage's crew picking and fan-out live in crow-work.ts, and the early endings of an
// item's run in item-endings.ts: split out when this file passed the ~400-line bar.
import { toolFlightConfig } from "../base/tool-flight-config.ts";
import type { Item, TodoList } from "../generated/prisma/client.ts";
import type { FlockContext } from "./context.ts";
import type { ListOwner } from "./list-owner.ts";
import type { EventDraft, StateTx } from "../log/event-log.ts";
import { StaleEpochError } from "../storage/fence.ts";
import { landLostFlights } from "./lost-flights.ts";
import { listEventPayload, type SkipReason } from "./events.ts";
import { listStream } from "../base/streams.ts";
import { BudgetSpentError, Flights, type ListBudget } from "./flights.ts";
import { ToolFlights } from "./tool-flight.ts";
import { listCallOwner } from "./call-owner.ts";
import { StoppedError, approvalSubject } from "./approvals.ts";
import { classifierHints, readTriage, type Triage } from "./triage.ts";
import { Banter } from "./banter.ts";
import { describeError } from "../base/describe-error.ts";
import { TERMINAL_STAGES, type ItemStage } from "./stages.ts";
import pLimit from "p-limit";
import { ListCancel, ListCancelledError, actorOfStored } from "./cancel.ts";
import { withActor } from "../base/actor.ts";
import type { ApprovalSubject, Decision } from "./approvals.ts";
import { readReworkNote } from "./rework.ts";
import { windowFor } from "../base/settings/windows.ts";
import { CrowWork } from "./crow-work.ts";
import { ItemMovedOn, SkipItem } from "./item-endings.ts";

export class ListRun {
  private readonly budget: ListBudget;
  private readonly flights: Flights;
  private readonly crowWork: CrowWork;
  private readonly banter: Banter;
  private readonly stream: string;

  constructor(
    private readonly ctx: FlockContext,
    private readonly list: TodoList,
    private readonly owner: ListOwner,
    /** The list's cancel (docs/rules.md "Cancelling a list"): set, every open item ends at once. */
    private readonly cancel: ListCancel = new ListCancel(),
  ) {
    this.budget = { listId: list.id, tokenBudget: list.tokenBudget, tokensUsed: list.tokensUsed };
    this.flights = new Flights(
      ctx.log,
      ctx.model,
      ctx.signal,
      owner,
      { waits: ctx.providerWaits, ...(ctx.board ? { board: ctx.board } : {}) },
      ctx.tools
        ? new ToolFlights(
            ctx.tools,
            ctx.toolCalls,
            listCallOwner(list.id, owner),
            ctx.model,
            toolFlightConfig(ctx.config),
            ctx.signal,
            ctx.logLine,
          )
        : undefined,
      cancel.signal,
    );
    this.crowWork = new CrowWork(ctx, list, this.budget, this.flights);
    this.stream = listStream(list.id);
    this.banter = new Banter(ctx, list, this.budget, owner);
  }

  async run(): Promise<void> {
    try {
      await this.runOwned();
    } catch (error) {
      if (error instanceof StoppedError && this.ctx.signal.aborted) return; // stepped down, or stopping
      throw error;
    }
  }

  private async runOwned(): Promise<void> {
    // A claim after the first (a takeover, or this instance's restart): the flights the last owner
    // left in the air land first, as lost, so every crow.flying has its crow.landed before the
    // items fly again (docs/rules.md "One owner's story").
    if (this.owner.fence.epoch > 1) await landLostFlights(this.ctx.log, this.list.id, (build) => this.write(build));
    const items = await this.ctx.prisma.item.findMany({ where: { listId: this.list.id }, orderBy: { n: "asc" } });
    const open = items.filter((item) => !TERMINAL_STAGES.has(item.stage));
    await this.ctx.providerWaits.load(open.map((item) => item.id)); // waits stored before a restart keep their deadline
    // At most CROWS_ITEM_CONCURRENCY items of the list at once.
    await pLimit(this.ctx.config.itemConcurrency).map(open, (item) => this.runItem(item));
    if (this.ctx.signal.aborted) return;
    // A cancelled list waits for no banter: a line still in the air is dropped.
    await this.banter.settle(this.cancel.cancelled ? 0 : this.ctx.config.banterWaitMs);
    if (this.ctx.signal.aborted) return;
    await this.write(async (tx) => {
      const list = await tx.finishList(this.list.id, new Date());
      // Finished already: an instance that took the list over while this one stalled (a database
      // pause outlasting the lease) finished it first. A list finishes once, so nothing is appended.
      if (!list) return [];
      const finished = listEventPayload<"list.finished">(this.list.id, {
        tokens_used: list.tokensUsed,
        token_budget: list.tokenBudget,
      });
      // A cancelled list (the row says so, even if this run never heard) says it, and who, last.
      const payload =
        list.cancelledBy === null
          ? finished
          : withActor({ ...finished, cancelled: true }, actorOfStored(list.cancelledBy));
      return [{ name: "list.finished", payload }];
    });
  }

  private async runItem(start: Item): Promise<void> {
    let item = start;
    try {
      while (!TERMINAL_STAGES.has(item.stage)) {
        // Cancelled: an item not waiting on the owner ends here; one waiting has its approval rejected (decide).
        if (this.cancel.cancelled && (item.stage === "pending" || item.stage === "working"))
          throw new ListCancelledError(this.list.id);
        item = await this.step(item);
      }
    } catch (error) {
      await this.itemEnded(item, error).catch((ending: unknown) => {
        // Stepped down (a refused write) or stopping while it skipped the item: the next owner carries it on.
        if (!(ending instanceof StoppedError)) throw ending;
      });
    }
  }

  private async itemEnded(item: Item, error: unknown): Promise<void> {
    if (error instanceof StoppedError || this.ctx.signal.aborted) return; // resumes on the next start
    if (error instanceof ListCancelledError) return this.skip(item, "rejected");
    if (error instanceof ItemMovedOn) {
      this.ctx.logLine(
        `flock: item ${item.id} left ${error.from} under this run (the list was taken over, or the item skipped); this run lets it go`,
      );
      return;
    }
    if (error instanceof SkipItem) return this.skip(item, error.reason);
    if (error instanceof BudgetSpentError) return this.skip(item, "budget");
    this.ctx.logLine(`flock: item ${item.id} failed unexpectedly: ${describeError(error)}`);
    await this.skip(item, "failure").catch((skipError: unknown) => {
      if (skipError instanceof StoppedError) throw skipError;
      // The item stays where it was and resumes on the next start; say why it could not be skipped.
      this.ctx.logLine(`flock: item ${item.id} could not be skipped: ${describeError(skipError)}`);
    });
  }

  private async step(item: Item): Promise<Item> {
    switch (item.stage) {
      case "pending":
        return this.triage(item);
      case "awaiting_triage": {
        const decision = await this.decide(approvalSubject(item, "triage"));
        if (decision === "rejected" || decision === "timeout") {
          // A rejection that asked for another try sent the item back to pending in its own transaction.
          const after = await this.reload(item);
          if (after.stage === "pending") return after;
          throw new SkipItem(decision);
        }
        return this.setStage(item, "working");
      }
      case "working":
        return this.work(item);
      case "awaiting_output": {
        await this.decide(approvalSubject(item, "output"));
        const after = await this.reload(item);
        if (after.stage === "working") return after; // sent back for another try (rework.ts)
        return this.setStage(item, "done");
      }
      default:
        throw new Error(`item ${item.id} is in an unknown stage ${item.stage}`);
    }
  }

  /**
   * The owner's decision on `subject`; once the list is cancelled (before or while waiting) a
   * pending approval is rejected by the canceller, as the owner's own no would be.
   */
  private async decide(subject: ApprovalSubject): Promise<Decision> {
    const reject = () => {
      void this.ctx.approvals.rejectForCancel(subject, this.cancel.actor).catch((error: unknown) => {
        this.ctx.logLine(
          `flock: cancelling ${subject.itemId}'s ${subject.target} approval failed: ${describeError(error)}`,
        );
      });
    };
    if (this.cancel.cancelled) reject();
    else this.cancel.signal.addEventListener("abort", reject, { once: true });
    try {
      return await this.ctx.approvals.waitFor({ ...subject, owner: this.owner });
    } finally {
      this.cancel.signal.removeEventListener("abort", reject);
    }
  }

  // --- triage -------------------------------------------------------------------------------

  private async triage(item: Item): Promise<Item> {
    const hints = await classifierHints(this.ctx.classifier, item.id, item.text, this.ctx.config.jevThreshold);
    const note = readReworkNote(item.rework);
    const rework = note?.target === "triage" ? { previous: note.previous, reason: note.reason } : undefined;
    const flight = await this.flights.fly({
      list: this.budget,
      itemId: item.id,
      crow: "Sentry",
      persona: "Sentry",
      borrowed: false,
      work: { role: "sentry", input: { item: item.text, hints, ...(rework ? { rework } : {}) } },
    });
    if (!flight.ok && flight.provider) throw new SkipItem("failure"); // the provider's trouble, not the Sentry's: no fallback
    const triage: Triage = readTriage(flight, hints);
    const needsApproval = !(await this.ctx.trust.isTrusted(["flock"], triage.taskType));
    await this.write(async (tx) => {
      const triaged = await tx.moveItem(item.id, "pending", {
        stage: "awaiting_triage",
        mode: triage.mode,
        taskType: triage.taskType,
        subtasks: JSON.stringify(triage.subtasks),
        reason: triage.reason,
        rework: null, // the rework, if this was one, has flown
      });
      if (!triaged) throw new ItemMovedOn(item.id, "pending");
      const announcement = listEventPayload<"item.triaged">(this.list.id, {
        item_id: item.id,
        mode: triage.mode,
        task_type: triage.taskType,
        subtasks: triage.subtasks,
        reason: triage.reason,
        needs_approval: needsApproval,
      });
      const subject = approvalSubject(triaged, "triage");
      const verdict = await this.ctx.approvals.openIn(tx, subject, needsApproval, this.windowOf(subject.taskType));
      return [{ name: "item.triaged", payload: announcement }, ...verdict];
    });
    return this.reload(item);
  }

  // --- work ---------------------------------------------------------------------------------

  private async work(item: Item): Promise<Item> {
    const { answer, crows } = await this.crowWork.answer(item);
    const needsApproval = !(await this.ctx.trust.isTrusted(crows, item.taskType ?? "other"));
    await this.write(async (tx) => {
      const updated = await tx.moveItem(item.id, "working", {
        stage: "awaiting_output",
        answer,
        crows: JSON.stringify(crows),
        rework: null, // the rework, if this was one, has flown
      });
      if (!updated) throw new ItemMovedOn(item.id, "working");
      const announcement = listEventPayload<"item.answered">(this.list.id, {
        item_id: item.id,
        answer,
        crows,
        needs_approval: needsApproval,
      });
      const subject = approvalSubject(updated, "output");
      const verdict = await this.ctx.approvals.openIn(tx, subject, needsApproval, this.windowOf(subject.taskType));
      return [{ name: "item.answered", payload: announcement }, ...verdict];
    });
    this.banter.after(item.id, crows);
    return this.reload(item);
  }

  /** How long the owner has to decide an approval of this list's (docs/rules.md "Windows"). */
  private windowOf(taskType: string): number {
    return windowFor(this.ctx.config.approvalWindows, this.ctx.config.approvalWindowMs, this.list.nestId, taskType);
  }

  // --- bookkeeping --------------------------------------------------------------------------

  // A stage move with no event of its own; it still takes the list stream's turn, like every write.
  private async setStage(item: Item, stage: ItemStage): Promise<Item> {
    let moved: Item | null = null;
    await this.write(async (tx) => {
      moved = await tx.moveItem(item.id, item.stage, { stage });
      return [];
    });
    if (!moved) throw new ItemMovedOn(item.id, item.stage);
    return moved;
  }

  /**
   * Every write the run makes to its list: fenced by the epoch its instance claimed, so the
   * database refuses it once another instance took the list over. Refused, the instance steps
   * down (one line, the run stops) and the write's caller ends with StoppedError.
   */
  private async write(build: (tx: StateTx) => Promise<EventDraft[]>): Promise<void> {
    try {
      await this.ctx.log.fencedAppend(this.stream, this.owner.fence, build);
    } catch (error) {
      if (!(error instanceof StaleEpochError)) throw error;
      this.owner.fencedOut(error);
      throw new StoppedError();
    }
  }

  private async reload(item: Item): Promise<Item> {
    const row = await this.ctx.log.state.item(item.id);
    if (!row) throw new Error(`item ${item.id} is gone`);
    return row;
  }

  private async skip(item: Item, reason: SkipReason): Promise<void> {
    await this.write(async (tx) => {
      const skipped = await tx.skipItem(item.id, reason);
      return skipped
        ? [
            {
              name: "item.skipped",
              payload: listEventPayload<"item.skipped">(this.list.id, { item_id: item.id, reason }),
            },
          ]
        : [];
    });
    await this.ctx.providerWaits.clear(item.id); // a skipped item waits for nothing
  }
}

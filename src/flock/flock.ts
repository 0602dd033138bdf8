// The flock engine's front: what the compat API and GraphQL call. It knows nothing of HTTP; it
// refuses with the domain errors of src/base/errors.ts and appends everything it does to the log.
import { randomBytes } from "node:crypto";
import { BadInputError, ConflictError, NotFoundError, RateLimitedError } from "../base/errors.ts";
import { ApprovalDesk, approvalSubject, type DecidedApproval } from "./approvals.ts";
import { CrewPicker, DEFAULT_NEST } from "./crew.ts";
import { listEventPayload, type Target } from "./events.ts";
import { listStream } from "../base/streams.ts";
import { ListRun } from "./list-run.ts";
import { RateLimiter, requesterKey } from "./rate-limit.ts";
import { parseRequester, parseTodoText } from "./todo-text.ts";
import { ITEM_ID_REQUIRED, NEST_ID_BLANK, REWORK_WITH_APPROVAL } from "./refusals.ts";
import { TrustLedger } from "./trust.ts";
import { instanceIdOf } from "../storage/instance.ts";
import { describeError } from "../base/describe-error.ts";
import { LeaseKeeper, type LeaseTable } from "../engine/lease.ts";
import type { FlockContext, FlockDeps } from "./context.ts";
import { OWNER, type Actor } from "../base/actor.ts";
import { readReason } from "./reason.ts";
import { readEdit } from "./edit.ts";
import { ProviderWaits } from "./flight-watch.ts";
import { ToolCallDesk } from "./tool-calls.ts";
import type { Tx } from "../storage/events/types.ts";
import { listFence, type StaleEpochError } from "../storage/fence.ts";

/**
 * A list this instance holds: the epoch its claim won (every write of the run carries it), and the
 * controller that stops the run. `steppedDown` keeps the step-down to one, whichever notices first:
 * a refused write or the lease sweep.
 */
interface ListHold {
  epoch: number;
  lost: AbortController;
  steppedDown: boolean;
}
import { ListCancel, storedActor } from "./cancel.ts";
import { NUDGE, topicOf, type BusEvent } from "../log/bus.ts";

export class Flock {
  readonly trust: TrustLedger;
  readonly approvals: ApprovalDesk;
  readonly picker: CrewPicker;
  readonly limiter: RateLimiter;
  readonly toolCalls: ToolCallDesk;
  private readonly ctx: FlockContext;
  private readonly stopping = new AbortController();
  private readonly runs = new Map<string, Promise<void>>();
  /** The cancel of each list running here (docs/rules.md "Cancelling a list"). */
  private readonly cancels = new Map<string, ListCancel>();
  // Several instances may share one database: a running list is run by the one instance holding
  // its lease (TodoList.ownerId/leaseUntil, docs/architecture.md "Scaling out"); a finished list's
  // lease is cleared. Each held list's AbortController stops its run if the lease is lost, and its
  // epoch fences every write the run makes (storage/fence.ts, docs/rules.md "One owner's story").
  readonly instanceId: string;
  private readonly leases: LeaseKeeper<ListHold>;

  constructor(private readonly deps: FlockDeps) {
    const now = deps.now ?? Date.now;
    this.instanceId = instanceIdOf(deps.config);
    this.trust = new TrustLedger(deps.trustReads, deps.log.state);
    this.approvals = new ApprovalDesk(
      deps.log,
      this.trust,
      deps.config.approvalWindowMs,
      now,
      deps.bus,
      deps.config.reworkTries,
      deps.config.approvalReminderMs,
    );
    this.picker = new CrewPicker(deps.crew);
    this.limiter = new RateLimiter(deps.prisma, now);
    this.toolCalls = new ToolCallDesk(deps.prisma, deps.log, deps.config.approvalWindowMs, now, deps.bus);
    this.ctx = {
      ...deps,
      trust: this.trust,
      approvals: this.approvals,
      picker: this.picker,
      signal: this.stopping.signal,
      providerWaits: new ProviderWaits(deps.prisma),
      toolCalls: this.toolCalls,
    };
    this.leases = new LeaseKeeper(this.listLeases(), {
      instanceId: this.instanceId,
      leaseMs: deps.config.leaseMs,
      now,
      signal: this.stopping.signal,
      onSweepError: (error) => deps.logLine(`flock: lease sweep failed: ${describeError(error)}`),
    });
  }

  /** Accepts a todo list (POST /api/lists): validates, rate-limits, stores it and starts it. */
  /** `signal`: the submitter gave up (its client went away); a list not yet written is then never written. */
  /** `alsoWrite`: more rows to commit with the list, in its transaction (an idempotent answer). */
  async submitList(input: {
    text: string;
    requester: string;
    nestId?: string;
    actor?: Actor;
    signal?: AbortSignal;
    alsoWrite?: (tx: Tx, listId: string) => Promise<void>;
  }): Promise<{ listId: string }> {
    const items = parseTodoText(input.text);
    const requester = parseRequester(input.requester);
    const nestId = await this.nestFor(input.nestId);
    const admission = await this.limiter.admit(requester);
    if (!admission.admitted) {
      if (admission.pranked) await this.prank(requester, admission.message, admission.cooldownS, input.actor ?? OWNER);
      throw new RateLimitedError(admission.message, admission.cooldownS);
    }
    if (this.stopping.signal.aborted) throw new BadInputError("The flock is shutting down; try again in a moment.");
    // The waits above can be long when the database stalls: a submitter that has gone is not
    // answered, so its list must not start behind its back (a retry would make it twice).
    input.signal?.throwIfAborted();
    const listId = `lst${randomBytes(5).toString("hex")}`;
    const itemRows = items.map((text, i) => ({ id: `${listId}-${i + 1}`, n: i + 1, text }));
    const started = listEventPayload<"list.started">(
      listId,
      { items: itemRows.map((i) => ({ item_id: i.id, text: i.text })), requester, nest_id: nestId },
      new Date(),
      input.actor ?? OWNER,
    );
    await this.deps.log.appendWith(listStream(listId), async (tx) => {
      await tx.todoList.create({
        data: {
          id: listId,
          requester,
          nestId,
          text: input.text,
          tokenBudget: this.deps.config.tokenBudget,
          ownerId: this.instanceId,
          leaseUntil: this.leases.leaseEnd(),
          items: { create: itemRows },
        },
      });
      await input.alsoWrite?.(tx, listId);
      return [{ name: "list.started", payload: started }];
    });
    this.start(listId);
    return { listId };
  }

  /** The owner's verdict (POST /api/verdicts). NotFoundError when nothing waits for it. */
  /**
   * Typed input: the REST route (compat/verdicts.ts) and GraphQL check the types; a blank id, a
   * reason too long, rework with a yes and a bad edit are refused here for both.
   */
  async postVerdict(input: {
    itemId: string;
    target: Target;
    approve: boolean;
    reason?: string | null;
    rework?: boolean | null;
    edit?: unknown;
    actor?: Actor;
  }): Promise<DecidedApproval> {
    if (input.itemId.trim() === "") throw new BadInputError(ITEM_ID_REQUIRED);
    const { target } = input;
    const reason = readReason(input.reason);
    const rework = input.rework === true;
    if (rework && input.approve) throw new BadInputError(REWORK_WITH_APPROVAL);
    const edit = readEdit(input.edit, target, input.approve);
    const item = await this.deps.log.state.item(input.itemId);
    if (!item) throw new NotFoundError(`No item ${input.itemId} is waiting for a verdict.`);
    return this.approvals.answer(approvalSubject(item, target), input.approve, input.actor ?? OWNER, {
      reason,
      rework,
      ...(edit ? { edit } : {}),
    });
  }

  /**
   * Cancels a running list (POST /api/lists/{list_id}/cancel): recorded once in the list's row by
   * whichever instance is asked; the instance running the list ends its items (docs/rules.md
   * "Cancelling a list"). A list already cancelling answers the same; a finished one is a
   * ConflictError; an unknown one a NotFoundError.
   */
  async cancelList(input: { listId: unknown; actor?: Actor }): Promise<{ listId: string; cancelledAt: Date }> {
    if (typeof input.listId !== "string" || input.listId.trim() === "")
      throw new BadInputError('"list_id" must be a non-empty string.');
    const listId = input.listId;
    const now = new Date();
    await this.deps.prisma.todoList.updateMany({
      where: { id: listId, status: "running", cancelledAt: null },
      data: { cancelledAt: now, cancelledBy: storedActor(input.actor ?? OWNER) },
    });
    const list = await this.deps.prisma.todoList.findUnique({
      where: { id: listId },
      select: { status: true, cancelledAt: true, cancelledBy: true },
    });
    if (!list) throw new NotFoundError(`No list ${listId}.`);
    if (list.status === "finished") {
      throw new ConflictError(
        list.cancelledAt
          ? `List ${listId} was cancelled and has finished; there is nothing left to cancel.`
          : `List ${listId} has finished; there is nothing left to cancel.`,
      );
    }
    if (!list.cancelledAt) throw new Error(`list ${listId} is running and was not marked cancelled`); // cannot be: the update above
    // Running here: end it now. Elsewhere: nudge its stream, and its owner reads the row (its lease
    // sweep reads it too, should the nudge be lost).
    this.cancels.get(listId)?.cancelFromRow(list.cancelledBy);
    this.deps.bus?.dispatchEvent(new CustomEvent(topicOf(listStream(listId)), { detail: NUDGE }) as BusEvent);
    return { listId, cancelledAt: list.cancelledAt };
  }

  async listExists(listId: string): Promise<boolean> {
    return (await this.deps.prisma.todoList.count({ where: { id: listId } })) > 0;
  }

  /**
   * Picks up every running list this instance holds or whose lease lapsed (all of them after a
   * single server's restart), then keeps sweeping: renewing held leases, taking over lapsed ones.
   */
  resume(): Promise<void> {
    return this.leases.resume();
  }

  /** Stops starting work; in-flight model calls are aborted, stored state stays for resume. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.leases.stop();
    this.approvals.stop();
    this.toolCalls.stop();
    await Promise.allSettled([...this.runs.values()]);
  }

  /** The TodoList table's side of the lease: its queries, and what holding a list means here. */
  private listLeases(): LeaseTable<ListHold> {
    const { prisma } = this.deps;
    // The epoch each list let go of was found at, for the step-down's line (lost -> letGo).
    const foundAt = new Map<string, number | null>();
    return {
      renew: async (ids, owner, until) => {
        await prisma.todoList.updateMany({ where: { id: { in: ids }, ownerId: owner }, data: { leaseUntil: until } });
        // A cancel whose nudge was lost is heard here at the latest; beside the sweep, not in its way.
        void this.readCancels(ids).catch(() => {});
      },
      lost: async (ids, held) => {
        const rows = new Map(
          (
            await prisma.todoList.findMany({
              where: { id: { in: ids } },
              select: { id: true, ownerId: true, epoch: true },
            })
          ).map((l) => [l.id, l]),
        );
        return ids.filter((id) => {
          const row = rows.get(id);
          if (row?.ownerId === this.instanceId && row.epoch === held(id)?.epoch) return false;
          foundAt.set(id, row?.epoch ?? null);
          return true;
        });
      },
      letGo: (id, hold) => {
        const current = foundAt.get(id) ?? null;
        foundAt.delete(id);
        if (!hold) return;
        // Still at our epoch: the run finished the list and cleared its lease; nobody took it.
        if (current === hold.epoch) return hold.lost.abort();
        this.stepDown(id, hold, current);
      },
      claimable: async (where) =>
        (await prisma.todoList.findMany({ where: { status: "running", ...where }, select: { id: true } })).map(
          (l) => l.id,
        ),
      take: (id) => this.start(id),
      claim: async (id, where, owner, until) => {
        // The claim grows the epoch in the same statement, and hands back the one it won.
        const won = await prisma.todoList.updateManyAndReturn({
          where: { id, status: "running", ...where },
          data: { ownerId: owner, leaseUntil: until, epoch: { increment: 1 } },
          select: { epoch: true },
        });
        return won[0]?.epoch ?? null;
      },
    };
  }

  /**
   * This instance no longer owns the list (another claimed it while this one stalled past its
   * lease): it drops the list at once, once. Its run stops, its flights in the air are abandoned
   * (what they return is dropped) and its approval waits end; nothing is retried.
   */
  private stepDown(listId: string, hold: ListHold, current: number | null): void {
    if (hold.steppedDown) return;
    hold.steppedDown = true;
    if (this.leases.heldValue(listId) === hold) this.leases.release(listId);
    this.deps.logLine(
      `flock: stepped down from list ${listId}: this instance held epoch ${hold.epoch}, the list is at epoch ${current ?? "(gone)"} (another instance took it over); its flights in the air are abandoned`,
    );
    hold.lost.abort();
    this.approvals.release(listId);
    this.toolCalls.release(listId);
  }

  /** The lists whose lease this instance holds and runs now (tests, diagnostics). */
  heldLists(): string[] {
    return this.leases.heldIds();
  }

  /** Lease sweeps over running lists finished here (tests: a sweep begun after a moment proves it passed). */
  leaseSweepsDone(): number {
    return this.leases.sweepsDone;
  }

  /** Resolves when the list's run ends (finished, or stopped). For tests and benchmarks. */
  async settled(listId: string): Promise<void> {
    await this.runs.get(listId);
  }

  /** Cancels the runs here of those `listIds` whose rows say they were cancelled. */
  private async readCancels(listIds: string[]): Promise<void> {
    const open = listIds.filter((id) => this.cancels.get(id)?.cancelled === false);
    if (open.length === 0) return;
    const cancelled = await this.deps.prisma.todoList.findMany({
      where: { id: { in: open }, cancelledAt: { not: null } },
      select: { id: true, cancelledBy: true },
    });
    for (const list of cancelled) this.cancels.get(list.id)?.cancelFromRow(list.cancelledBy);
  }

  private start(listId: string): void {
    if (this.runs.has(listId) || this.stopping.signal.aborted) return;
    let hold: ListHold | undefined;
    const cancel = new ListCancel();
    // Another instance cancelling nudges the list's stream: read the row then (a nudge only).
    const topic = topicOf(listStream(listId));
    const onNudge = (event: BusEvent) => {
      if (event.detail.seq === 0 && !cancel.cancelled) void this.readCancels([listId]).catch(() => {});
    };
    const run = (async () => {
      const epoch = await this.leases.claim(listId);
      if (epoch === null) return; // another instance runs it
      hold = { epoch, lost: new AbortController(), steppedDown: false };
      this.leases.hold(listId, hold);
      const owned = hold;
      this.cancels.set(listId, cancel);
      this.deps.bus?.addEventListener(topic, onNudge);
      const list = await this.deps.prisma.todoList.findUniqueOrThrow({ where: { id: listId } });
      if (list.cancelledAt) cancel.cancelFromRow(list.cancelledBy);
      const owner = {
        fence: listFence(listId, epoch),
        fencedOut: (error: StaleEpochError) => this.stepDown(listId, owned, error.current),
      };
      await new ListRun(
        { ...this.ctx, signal: AbortSignal.any([this.stopping.signal, owned.lost.signal]) },
        list,
        owner,
        cancel,
      ).run();
      // Finished: nobody needs to hold it any more. (Stopped: the lease lapses, or this instance
      // reclaims it on restart.)
      await this.deps.prisma.todoList.updateMany({
        where: { id: listId, ownerId: this.instanceId, epoch, status: "finished" },
        data: { ownerId: null, leaseUntil: null },
      });
    })()
      .catch((error: unknown) =>
        this.deps.logLine(`flock: list ${listId} stopped on an error: ${describeError(error)}`),
      )
      .finally(() => {
        this.runs.delete(listId);
        this.deps.bus?.removeEventListener(topic, onNudge);
        if (this.cancels.get(listId) === cancel) this.cancels.delete(listId);
        if (hold && this.leases.heldValue(listId) === hold) this.leases.release(listId);
      });
    this.runs.set(listId, run);
  }

  private async nestFor(nestId: string | undefined): Promise<string> {
    if (nestId === undefined) return DEFAULT_NEST;
    if (nestId.trim() === "") throw new BadInputError(NEST_ID_BLANK);
    const core = await this.deps.crew.core(nestId);
    if (core === null) throw new NotFoundError(`No nest ${nestId}.`);
    return nestId;
  }

  /** requester.pranked goes to every list of the requester still flying. */
  private async prank(requester: string, message: string, cooldownS: number, actor: Actor): Promise<void> {
    // The same requester under any spelling the rate limit treats as one (requesterKey).
    const key = requesterKey(requester);
    const running = await this.deps.prisma.todoList.findMany({
      where: { status: "running" },
      select: { id: true, requester: true },
    });
    const flying = running.filter((list) => requesterKey(list.requester) === key);
    await Promise.all(
      flying.map(({ id }) =>
        this.deps.log.append(
          listStream(id),
          "requester.pranked",
          listEventPayload<"requester.pranked">(id, { message, cooldown_s: cooldownS }, new Date(), actor),
        ),
      ),
    );
  }
}

// The flock engine's front: what the compat API and GraphQL call. It knows nothing of HTTP; it
// refuses with the domain errors of src/base/errors.ts and appends everything it does to the log.
import { randomBytes } from "node:crypto";
import { BadInputError, NotFoundError, RateLimitedError } from "../base/errors.ts";
import { ApprovalDesk, approvalSubject } from "./approvals.ts";
import { CrewPicker, DEFAULT_NEST } from "./crew.ts";
import { listEventPayload, type Target } from "./events.ts";
import { listStream } from "../base/streams.ts";
import { ListRun } from "./list-run.ts";
import { RateLimiter, requesterKey } from "./rate-limit.ts";
import { parseRequester, parseTodoText } from "./todo-text.ts";
import { TrustLedger } from "./trust.ts";
import { instanceIdOf } from "../storage/instance.ts";
import { describeError } from "../base/describe-error.ts";
import { LeaseKeeper, type LeaseTable } from "../engine/lease.ts";
import type { FlockContext, FlockDeps } from "./context.ts";
import { OWNER, type Actor } from "../base/actor.ts";
import { readReason } from "./reason.ts";
import { readEdit } from "./edit.ts";
import { ProviderWaits } from "./flight-watch.ts";
import type { Tx } from "../storage/events/types.ts";

export class Flock {
  readonly trust: TrustLedger;
  readonly approvals: ApprovalDesk;
  readonly picker: CrewPicker;
  readonly limiter: RateLimiter;
  private readonly ctx: FlockContext;
  private readonly stopping = new AbortController();
  private readonly runs = new Map<string, Promise<void>>();
  // Several instances may share one database: a running list is run by the one instance holding
  // its lease (TodoList.ownerId/leaseUntil, docs/architecture.md "Scaling out"); a finished list's
  // lease is cleared. Each held list's AbortController stops its run if the lease is lost.
  readonly instanceId: string;
  private readonly leases: LeaseKeeper<AbortController>;

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
      deps.config.owner.reworkTries,
    );
    this.picker = new CrewPicker(deps.crew);
    this.limiter = new RateLimiter(deps.prisma, now);
    this.ctx = {
      ...deps,
      trust: this.trust,
      approvals: this.approvals,
      picker: this.picker,
      signal: this.stopping.signal,
      providerWaits: new ProviderWaits(deps.prisma),
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
    text: unknown;
    requester: unknown;
    nestId?: unknown;
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
          text: input.text as string,
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
  async postVerdict(input: {
    itemId: unknown;
    target: unknown;
    approve: unknown;
    reason?: unknown;
    rework?: unknown;
    edit?: unknown;
    actor?: Actor;
  }): Promise<void> {
    if (typeof input.itemId !== "string" || input.itemId.trim() === "")
      throw new BadInputError('"item_id" must be a non-empty string.');
    if (input.target !== "triage" && input.target !== "output")
      throw new BadInputError('"target" must be "triage" or "output".');
    if (typeof input.approve !== "boolean") {
      throw new BadInputError(
        '"approve" is required and must be true or false; a missing answer is never read as a no.',
      );
    }
    const reason = readReason(input.reason);
    if (input.rework !== undefined && input.rework !== null && typeof input.rework !== "boolean")
      throw new BadInputError('"rework" must be true or false (or left out).');
    const rework = input.rework === true;
    if (rework && input.approve) throw new BadInputError('"rework" goes with a rejection ("approve": false) only.');
    const target: Target = input.target;
    const edit = readEdit(input.edit, target, input.approve);
    const item = await this.deps.log.state.item(input.itemId);
    if (!item) throw new NotFoundError(`No item ${input.itemId} is waiting for a verdict.`);
    await this.approvals.answer(approvalSubject(item, target), input.approve, input.actor ?? OWNER, {
      reason,
      rework,
      ...(edit ? { edit } : {}),
    });
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
    await Promise.allSettled([...this.runs.values()]);
  }

  /** The TodoList table's side of the lease: its queries, and what holding a list means here. */
  private listLeases(): LeaseTable<AbortController> {
    const { prisma } = this.deps;
    return {
      renew: async (ids, owner, until) => {
        await prisma.todoList.updateMany({ where: { id: { in: ids }, ownerId: owner }, data: { leaseUntil: until } });
      },
      lost: async (ids) => {
        const still = new Set(
          (
            await prisma.todoList.findMany({
              where: { id: { in: ids }, ownerId: this.instanceId },
              select: { id: true },
            })
          ).map((l) => l.id),
        );
        return ids.filter((id) => !still.has(id));
      },
      letGo: (id, lost) => {
        // This instance stalled past its lease and another took the list over: stop running it.
        this.deps.logLine(`flock: list ${id} was taken over by another instance; stopping here`);
        lost?.abort();
        this.approvals.release(id);
      },
      claimable: async (where) =>
        (await prisma.todoList.findMany({ where: { status: "running", ...where }, select: { id: true } })).map(
          (l) => l.id,
        ),
      take: (id) => this.start(id),
      claim: async (id, where, owner, until) => {
        const { count } = await prisma.todoList.updateMany({
          where: { id, status: "running", ...where },
          data: { ownerId: owner, leaseUntil: until },
        });
        return count === 1;
      },
    };
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

  private start(listId: string): void {
    if (this.runs.has(listId) || this.stopping.signal.aborted) return;
    const lost = new AbortController();
    const run = (async () => {
      if (!(await this.leases.claim(listId))) return; // another instance runs it
      this.leases.hold(listId, lost);
      const list = await this.deps.prisma.todoList.findUniqueOrThrow({ where: { id: listId } });
      await new ListRun({ ...this.ctx, signal: AbortSignal.any([this.stopping.signal, lost.signal]) }, list).run();
      // Finished: nobody needs to hold it any more. (Stopped: the lease lapses, or this instance
      // reclaims it on restart.)
      await this.deps.prisma.todoList.updateMany({
        where: { id: listId, ownerId: this.instanceId, status: "finished" },
        data: { ownerId: null, leaseUntil: null },
      });
    })()
      .catch((error: unknown) =>
        this.deps.logLine(`flock: list ${listId} stopped on an error: ${describeError(error)}`),
      )
      .finally(() => {
        this.runs.delete(listId);
        if (this.leases.heldValue(listId) === lost) this.leases.release(listId);
      });
    this.runs.set(listId, run);
  }

  private async nestFor(nestId: unknown): Promise<string> {
    if (nestId === undefined || nestId === null) return DEFAULT_NEST;
    if (typeof nestId !== "string" || nestId.trim() === "")
      throw new BadInputError('"nest_id" must be a non-empty string when given.');
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

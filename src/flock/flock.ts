// The flock engine's front: what the compat API and GraphQL call. It knows nothing of HTTP; it
// refuses with the domain errors of src/errors.ts and appends everything it does to the log.
import { randomBytes } from "node:crypto";
import type { Config } from "../config.ts";
import type { PrismaClient } from "../generated/prisma/client.ts";
import type { EventLog } from "../log/event-log.ts";
import type { Bus } from "../log/bus.ts";
import type { Model } from "../models/model.ts";
import type { Classifier } from "../classifier/jev.ts";
import { BadInputError, NotFoundError, RateLimitedError } from "../errors.ts";
import { ApprovalDesk, approvalSubject } from "./approvals.ts";
import { CrewPicker, DEFAULT_NEST, type CrewDirectory } from "./crew.ts";
import { listStream, wirePayload, type Target } from "./events.ts";
import { ListRun } from "./list-run.ts";
import { RateLimiter, requesterKey } from "./rate-limit.ts";
import { parseRequester, parseTodoText } from "./todo-text.ts";
import { TrustLedger } from "./trust.ts";
import { instanceIdOf } from "../storage/instance.ts";
import { describeError } from "../ops/describe-error.ts";
import type { FlightBoard } from "./flight-board.ts";
import { ProviderWaits } from "./flight-watch.ts";

export interface FlockDeps {
  config: Config;
  prisma: PrismaClient;
  log: EventLog;
  /** The log's bus: lets a waiting approval hear a verdict recorded by another instance. */
  bus?: Bus;
  model: Model;
  classifier: Classifier;
  crew: CrewDirectory;
  logLine: (line: string) => void;
  now?: () => number;
  /** Where flights waiting on the provider, and their streamed text, are shown. */
  board?: FlightBoard;
}

/** What a list run needs from the flock. */
export interface FlockContext extends FlockDeps {
  trust: TrustLedger;
  approvals: ApprovalDesk;
  picker: CrewPicker;
  signal: AbortSignal;
  /** Stored patience deadlines of flights waiting on the provider. */
  providerWaits: ProviderWaits;
}

export class Flock {
  readonly trust: TrustLedger;
  readonly approvals: ApprovalDesk;
  readonly picker: CrewPicker;
  readonly limiter: RateLimiter;
  private readonly ctx: FlockContext;
  private readonly stopping = new AbortController();
  private readonly runs = new Map<string, Promise<void>>();
  // Several instances may share one database: a running list is run by the one instance holding
  // its lease (TodoList.ownerId/leaseUntil). Held leases are renewed by a periodic sweep, which also
  // takes over lists whose lease lapsed (their instance died); a finished list's lease is cleared.
  readonly instanceId: string;
  private readonly now: () => number;
  private readonly held = new Map<string, AbortController>(); // list id -> aborts its run if the lease is lost
  private sweeper: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;

  constructor(private readonly deps: FlockDeps) {
    const now = deps.now ?? Date.now;
    this.now = now;
    this.instanceId = instanceIdOf(deps.config);
    this.trust = new TrustLedger(deps.prisma, deps.log.state);
    this.approvals = new ApprovalDesk(deps.log, this.trust, deps.config.approvalWindowMs, now, deps.bus);
    this.picker = new CrewPicker(deps.crew);
    this.limiter = new RateLimiter(deps.prisma, now);
    this.ctx = { ...deps, trust: this.trust, approvals: this.approvals, picker: this.picker, signal: this.stopping.signal, providerWaits: new ProviderWaits(deps.prisma) };
  }

  /** Accepts a todo list (POST /api/lists): validates, rate-limits, stores it and starts it. */
  async submitList(input: { text: unknown; requester: unknown; nestId?: unknown }): Promise<{ listId: string }> {
    const items = parseTodoText(input.text);
    const requester = parseRequester(input.requester);
    const nestId = await this.nestFor(input.nestId);
    const admission = await this.limiter.admit(requester);
    if (!admission.admitted) {
      if (admission.pranked) await this.prank(requester, admission.message, admission.cooldownS);
      throw new RateLimitedError(admission.message, admission.cooldownS);
    }
    if (this.stopping.signal.aborted) throw new BadInputError("The flock is shutting down; try again in a moment.");
    const listId = `lst${randomBytes(5).toString("hex")}`;
    const itemRows = items.map((text, i) => ({ id: `${listId}-${i + 1}`, n: i + 1, text }));
    await this.deps.log.append(
      listStream(listId),
      "list.started",
      wirePayload<"list.started">(listId, { items: itemRows.map((i) => ({ item_id: i.id, text: i.text })), requester, nest_id: nestId }),
      async (tx) => {
        await tx.todoList.create({
          data: {
            id: listId,
            requester,
            nestId,
            text: input.text as string,
            tokenBudget: this.deps.config.tokenBudget,
            ownerId: this.instanceId,
            leaseUntil: new Date(this.now() + this.deps.config.leaseMs),
            items: { create: itemRows },
          },
        });
      },
    );
    this.start(listId);
    return { listId };
  }

  /** The owner's verdict (POST /api/verdicts). NotFoundError when nothing waits for it. */
  async postVerdict(input: { itemId: unknown; target: unknown; approve: unknown }): Promise<void> {
    if (typeof input.itemId !== "string" || input.itemId.trim() === "") throw new BadInputError('"item_id" must be a non-empty string.');
    if (input.target !== "triage" && input.target !== "output") throw new BadInputError('"target" must be "triage" or "output".');
    if (typeof input.approve !== "boolean") {
      throw new BadInputError('"approve" is required and must be true or false; a missing answer is never read as a no.');
    }
    const target: Target = input.target;
    const item = await this.deps.log.state.item(input.itemId);
    if (!item) throw new NotFoundError(`No item ${input.itemId} is waiting for a verdict.`);
    await this.approvals.answer(approvalSubject(item, target), input.approve);
  }

  async listExists(listId: string): Promise<boolean> {
    return (await this.deps.prisma.todoList.count({ where: { id: listId } })) > 0;
  }

  /**
   * Picks up every running list this instance holds or whose lease lapsed (all of them after a
   * single server's restart), then keeps sweeping: renewing held leases, taking over lapsed ones.
   */
  async resume(): Promise<void> {
    await this.sweep();
    const every = Math.max(50, Math.floor(this.deps.config.leaseMs / 3));
    this.sweeper ??= setInterval(() => void this.sweep(), every);
    this.sweeper.unref?.();
  }

  /** Stops starting work; in-flight model calls are aborted, stored state stays for resume. */
  async stop(): Promise<void> {
    this.stopping.abort();
    clearInterval(this.sweeper);
    await this.sweeping;
    this.approvals.stop();
    await Promise.allSettled([...this.runs.values()]);
  }

  /** One pass of lease upkeep; never two at once. */
  private sweep(): Promise<void> {
    this.sweeping ??= this.renewAndTakeOver()
      .catch((error: unknown) => this.deps.logLine(`flock: lease sweep failed: ${describeError(error)}`))
      .finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  private async renewAndTakeOver(): Promise<void> {
    if (this.stopping.signal.aborted) return;
    const { prisma, config } = this.deps;
    const mine = [...this.held.keys()];
    if (mine.length > 0) {
      await prisma.todoList.updateMany({ where: { id: { in: mine }, ownerId: this.instanceId }, data: { leaseUntil: new Date(this.now() + config.leaseMs) } });
      const still = new Set((await prisma.todoList.findMany({ where: { id: { in: mine }, ownerId: this.instanceId }, select: { id: true } })).map((l) => l.id));
      for (const id of mine) {
        if (still.has(id)) continue;
        // This instance stalled past its lease and another took the list over: stop running it.
        this.deps.logLine(`flock: list ${id} was taken over by another instance; stopping here`);
        this.held.get(id)?.abort();
        this.held.delete(id);
        this.approvals.release(id);
      }
    }
    const claimable = await prisma.todoList.findMany({ where: { status: "running", ...this.claimableWhere() }, select: { id: true } });
    for (const { id } of claimable) this.start(id);
  }

  /** Lists this instance may run: its own, unowned, or with a lapsed lease. */
  private claimableWhere() {
    return { OR: [{ ownerId: this.instanceId }, { ownerId: null }, { leaseUntil: null }, { leaseUntil: { lt: new Date(this.now()) } }] };
  }

  /** Takes the list's lease if nobody else holds it: one conditional update, so one winner. */
  private async claim(listId: string): Promise<boolean> {
    const { count } = await this.deps.prisma.todoList.updateMany({
      where: { id: listId, status: "running", ...this.claimableWhere() },
      data: { ownerId: this.instanceId, leaseUntil: new Date(this.now() + this.deps.config.leaseMs) },
    });
    return count === 1;
  }

  /** The lists whose lease this instance holds and runs now (tests, diagnostics). */
  heldLists(): string[] {
    return [...this.held.keys()];
  }

  /** Resolves when the list's run ends (finished, or stopped). For tests and benchmarks. */
  async settled(listId: string): Promise<void> {
    await this.runs.get(listId);
  }

  private start(listId: string): void {
    if (this.runs.has(listId) || this.stopping.signal.aborted) return;
    const lost = new AbortController();
    const run = (async () => {
      if (!(await this.claim(listId))) return; // another instance runs it
      this.held.set(listId, lost);
      const list = await this.deps.prisma.todoList.findUniqueOrThrow({ where: { id: listId } });
      await new ListRun({ ...this.ctx, signal: AbortSignal.any([this.stopping.signal, lost.signal]) }, list).run();
      // Finished: nobody needs to hold it any more. (Stopped: the lease lapses, or this instance
      // reclaims it on restart.)
      await this.deps.prisma.todoList.updateMany({ where: { id: listId, ownerId: this.instanceId, status: "finished" }, data: { ownerId: null, leaseUntil: null } });
    })()
      .catch((error: unknown) => this.deps.logLine(`flock: list ${listId} stopped on an error: ${describeError(error)}`))
      .finally(() => {
        this.runs.delete(listId);
        if (this.held.get(listId) === lost) this.held.delete(listId);
      });
    this.runs.set(listId, run);
  }

  private async nestFor(nestId: unknown): Promise<string> {
    if (nestId === undefined || nestId === null) return DEFAULT_NEST;
    if (typeof nestId !== "string" || nestId.trim() === "") throw new BadInputError('"nest_id" must be a non-empty string when given.');
    const core = await this.deps.crew.core(nestId);
    if (core === null) throw new NotFoundError(`No nest ${nestId}.`);
    return nestId;
  }

  /** requester.pranked goes to every list of the requester still flying. */
  private async prank(requester: string, message: string, cooldownS: number): Promise<void> {
    // The same requester under any spelling the rate limit treats as one (requesterKey).
    const key = requesterKey(requester);
    const running = await this.deps.prisma.todoList.findMany({ where: { status: "running" }, select: { id: true, requester: true } });
    const flying = running.filter((list) => requesterKey(list.requester) === key);
    await Promise.all(
      flying.map(({ id }) => this.deps.log.append(listStream(id), "requester.pranked", wirePayload<"requester.pranked">(id, { message, cooldown_s: cooldownS }))),
    );
  }
}

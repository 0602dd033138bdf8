// Who drives an open obligation: the instance holding its lease (engine/lease.ts). A taken-over
// or restarted obligation is carried on from its stored stage: awaiting_claim answers from the
// start, claimed means a missed expectation, so the crow is nudged (docs/nests-chat.md
// "Obligations", "Who owns what"). An ask's obligation only has its deadline re-armed.
import { LeaseKeeper, type LeaseTable } from "../../engine/lease.ts";
import { describeError } from "../../base/describe-error.ts";
import type { NestChat } from "../chat.ts";
import type { MessageRecord } from "../message.ts";
import type { NestRecord } from "../store.ts";
import type { Deadlines } from "./deadlines.ts";
import { isAskObligation } from "./ask-expiry.ts";
import { OPEN_STAGES, watchObligationId, type ObligationRow, type ObligationsDeps } from "./stages.ts";
import { ObligationFences } from "./fencing.ts";
import type { StaleEpochError } from "../../storage/fence.ts";

/** An obligation driven here: when this instance took it, and the epoch its claim won. */
export interface HeldObligation {
  takenAt: number;
  epoch: number;
}

/** What the watchdog does for an inspection it resumes (Watchdog implements it). */
export interface WatchResumer {
  /** stage awaiting_claim: inspect from the start; claimed: the breach was judged, post what is missing of flag and ask. */
  resumeWatch(nest: NestRecord, message: MessageRecord, judged: boolean): Promise<void>;
}

/** What the loop does for an obligation it resumes (Responders implements it). */
export interface ObligationRunner {
  /** Answers the request from the start, exactly as for a fresh post. */
  respond(nest: NestRecord, request: MessageRecord): Promise<void>;
  /** The crow that claimed the request proceeds: it delivers, or declines with a reason. */
  proceed(nest: NestRecord, crow: string, request: MessageRecord): Promise<void>;
}

export class Ownership {
  // Obligations this instance drives, with when it took them. An id enters before its creating
  // transaction commits, so a sweep that can see the row also sees it is already running here.
  readonly lease: LeaseKeeper<HeldObligation>;
  readonly fences: ObligationFences;
  runner: ObligationRunner | undefined;
  watcher: WatchResumer | undefined;
  // What runs under an obligation here (a crow's tool turn), told when this instance steps down from it.
  private readonly onStepDown = new Map<string, Set<() => void>>();

  constructor(
    private readonly chat: NestChat,
    private readonly deps: ObligationsDeps,
    private readonly deadlines: Deadlines,
    private readonly closeWithoutPost: (requestId: string, respondent: string, why: string) => Promise<void>,
    private readonly now: () => number,
  ) {
    this.fences = new ObligationFences((id) => this.lease.heldValue(id)?.epoch);
    this.lease = new LeaseKeeper(this.obligationLeases(), {
      instanceId: deps.instanceId,
      leaseMs: deps.config.leaseMs,
      now,
      signal: chat.signal,
      onSweepError: (error) => {
        if (!chat.signal.aborted) deps.logLine(`nests: obligation sweep failed: ${describeError(error)}`);
      },
    });
  }

  /** The Obligation table's side of the lease: its queries, and what holding one means here. */
  private obligationLeases(): LeaseTable<HeldObligation> {
    const { prisma } = this.deps;
    const open = (stage: string) => (OPEN_STAGES as readonly string[]).includes(stage);
    return {
      renew: async (ids, owner, until) => {
        await prisma.obligation.updateMany({
          where: { id: { in: ids }, ownerId: owner, stage: { in: [...OPEN_STAGES] } },
          data: { leaseUntil: until },
        });
      },
      lost: async (ids, heldValue) => {
        const rows = new Map(
          (
            await prisma.obligation.findMany({
              where: { id: { in: ids } },
              select: { id: true, ownerId: true, stage: true, epoch: true },
            })
          ).map((r) => [r.id, r]),
        );
        const lost: string[] = [];
        for (const id of ids) {
          const row = rows.get(id);
          const held = heldValue(id)!;
          // Not committed yet (or rolled back): keep it a while, its transaction may still be running.
          if (!row && this.now() - held.takenAt < this.deps.config.leaseMs) continue;
          if (row && row.ownerId === this.deps.instanceId && row.epoch === held.epoch && open(row.stage)) continue;
          if (row && row.epoch !== held.epoch) this.steppedDown(id, held.epoch, row.epoch);
          lost.push(id);
        }
        return lost;
      },
      letGo: (id, held) => {
        if (held) this.fences.retire(id, held.epoch);
        this.deadlines.clearTimer(id);
      },
      claimable: async (where) =>
        (
          await prisma.obligation.findMany({
            where: { stage: { in: [...OPEN_STAGES] }, ...where },
            orderBy: { createdAt: "asc" },
          })
        ).map((r) => r.id),
      take: (id) => this.take(id),
      claim: async (id, where, owner, until) => {
        // The claim grows the epoch in the same statement, and hands back the one it won.
        const won = await prisma.obligation.updateManyAndReturn({
          where: { id, stage: { in: [...OPEN_STAGES] }, ...where },
          data: { ownerId: owner, leaseUntil: until, epoch: { increment: 1 } },
          select: { epoch: true },
        });
        return won[0]?.epoch ?? null;
      },
    };
  }

  /** One conditional update takes the lease, so exactly one instance wins; the winner drives it. */
  private async take(id: string): Promise<void> {
    if (this.chat.signal.aborted || this.lease.holds(id)) return;
    const epoch = await this.lease.claim(id);
    if (epoch === null || this.lease.holds(id)) return;
    this.lease.hold(id, { takenAt: this.now(), epoch });
    const row = await this.deps.prisma.obligation.findUniqueOrThrow({ where: { id } });
    this.deps.logLine(`nests: resuming obligation ${id} (${row.stage}${row.respondent ? `, ${row.respondent}` : ""})`);
    this.chat.spawn(`obligation ${id}`, () => this.drive(row));
  }

  /**
   * A move of this instance's was refused by the fence: another instance claimed the obligation
   * while this one stalled past its lease. It lets the obligation go at once (no retry, no timer),
   * with one line.
   */
  fencedOut(error: StaleEpochError): void {
    const id = error.fence.id;
    const held = this.lease.heldValue(id);
    if (held?.epoch !== error.fence.epoch) return; // let go already (the sweep, or an earlier refusal)
    this.lease.release(id);
    this.fences.retire(id, held.epoch);
    this.deadlines.clearTimer(id);
    this.steppedDown(id, held.epoch, error.current);
  }

  /** Calls `stop` once this instance steps down from `id`; the function returned forgets it. */
  whenSteppedDown(id: string, stop: () => void): () => void {
    const stops = this.onStepDown.get(id) ?? new Set();
    stops.add(stop);
    this.onStepDown.set(id, stops);
    return () => {
      stops.delete(stop);
      if (stops.size === 0 && this.onStepDown.get(id) === stops) this.onStepDown.delete(id);
    };
  }

  private steppedDown(id: string, held: number, current: number | null): void {
    this.deps.logLine(
      `nests: stepped down from obligation ${id}: this instance held epoch ${held}, it is at epoch ${current ?? "(gone)"} (another instance took it over); a late answer from here is refused`,
    );
    for (const stop of [...(this.onStepDown.get(id) ?? [])]) stop();
  }

  /** Carries a resumed obligation on from its stored stage. */
  private async drive(row: ObligationRow): Promise<void> {
    // An ask waits only on its deadline: the timer reads the ask and expires it, or waits out the rest.
    if (isAskObligation(row.id)) return this.deadlines.armAt(row.id, this.now());
    const request = await this.chat.get(row.requestId);
    const nest = await this.deps.nests.get(row.nestId);
    if (!request || !nest || !this.runner || (row.id === watchObligationId(row.requestId) && !this.watcher)) {
      await this.closeWithoutPost(row.requestId, row.respondent, "its request or nest is gone");
      return;
    }
    if (row.id === watchObligationId(row.requestId)) {
      await this.watcher!.resumeWatch(nest, request, row.stage === "claimed");
      return;
    }
    if (row.stage === "awaiting_claim") {
      // Nobody answered yet: the loop starts over, exactly as for a fresh post.
      await this.runner.respond(nest, request);
      return;
    }
    // Claimed, and the instance running its crow is gone: a missed expectation.
    if (row.nudgeId === "") {
      await this.deadlines.nudge(row, "its responder's instance stopped before it answered");
      return;
    }
    // Already nudged once: the crow proceeds again, and declines at the nudge's deadline at the latest.
    this.deadlines.armAt(row.id, (row.nudgedAt?.getTime() ?? this.now()) + this.deps.config.nudgeAfterMs);
    await this.runner.proceed(nest, row.respondent, request);
  }
}

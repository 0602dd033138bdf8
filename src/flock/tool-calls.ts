// The tool calls of flights (docs/tools.md): each one's durable row (ToolCall), its approval when
// its policy asks, and the records that make it run at most once. A row moves:
//   ask:   asked -> approved | refused | timeout        (tool.asked, then tool.decided)
//   allow: ready (a call allowed by its policy or a standing permission, never seen by anyone)
//   then   ready | approved -> started -> returned       (tool.called, then tool.returned)
//   or     started -> unknown                            (its end was never recorded: never sent again)
// Every move is a conditional update committed with its event, so a second decision, a decision
// after the deadline, or a second start moves nothing. `recordStarted` is the one place a call's
// "started" record is written: a call goes out only after it committed. Every write here is fenced
// by its writer's lease (`write`, call-owner.ts): a list flight's by its list's epoch, a nest crow's
// by the epoch of the obligation it answers. A writer that lost its lease moves no row and writes
// no event, so it never sends a call (docs/tools.md "At most once"). The approval itself
// is tool-approvals.ts's, standing permissions tool-permissions.ts's; the desk is the flock's one front.
import { randomBytes } from "node:crypto";
import type { PrismaClient, ToolCall, ToolPermission } from "../generated/prisma/client.ts";
import type { EventDraft, EventLog, StateTx, Tx } from "../log/event-log.ts";
import type { Bus } from "../log/bus.ts";
import { actorOfColumns, type Actor } from "../base/actor.ts";
import {
  summary,
  toolCallFacts,
  toolEventPayload,
  toolStreamOf,
  type ToolAllowance,
  type ToolDecision,
} from "./tool-events.ts";
import { ToolApprovals } from "./tool-approvals.ts";
import { grantorOf, ToolPermissions } from "./tool-permissions.ts";
import { fencedPrisma, StaleEpochError } from "../storage/fence.ts";
import { StoppedError } from "./approvals.ts";
import type { CallOwner } from "./call-owner.ts";
import type { NewToolCall } from "../storage/state-shapes.ts";

/**
 * A call about to be recorded: what the model asked, resolved to a server's tool. Its columns are
 * the row's as storage inserts it (state-shapes.ts NewToolCall), less what recording adds.
 */
export type CallDraft = Omit<NewToolCall, "id" | "status" | "createdAt" | "policy"> & { policy: "allow" | "ask" };

export type CallEnd = { ok: true; result: string } | { ok: false; result: string; error: string };

export class ToolCallDesk {
  readonly approvals: ToolApprovals;
  readonly permissions: ToolPermissions;

  constructor(
    private readonly prisma: PrismaClient,
    private readonly log: EventLog,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
    bus?: Bus,
  ) {
    this.approvals = new ToolApprovals(prisma, log, now, bus);
    this.permissions = new ToolPermissions(prisma, log, now);
  }

  // --- reads ----------------------------------------------------------------------------------

  // Most items have no call at all: one indexed read around Prisma (flock-state.ts) says so, and
  // their flights skip the Prisma reads below.

  /** A flight's calls so far, in order (a restarted flight resumes from them). */
  async flightCalls(itemId: string, flightKey: string): Promise<ToolCall[]> {
    if (!(await this.log.state.hasToolCalls(itemId))) return [];
    return this.prisma.toolCall.findMany({ where: { flightKey }, orderBy: { n: "asc" } });
  }

  /** The crow of an unlanded flight with calls in this slot of the item (a restart flies it again). */
  async resumableCrow(itemId: string, slot: string): Promise<string | null> {
    if (!(await this.log.state.hasToolCalls(itemId))) return null;
    const row = await this.prisma.toolCall.findFirst({
      where: { itemId, landed: false, flightKey: { startsWith: `${itemId}/${slot}/` } },
      orderBy: { createdAt: "desc" },
      select: { crow: true },
    });
    return row?.crow ?? null;
  }

  /**
   * The flight landed: a later run of the item starts its own. A list flight's calls land in its
   * crow.landed's own transaction instead (flights.ts); this is a nest crow's turn's landing.
   */
  async landed(flightKey: string, owner: CallOwner): Promise<void> {
    await this.writeState(owner, async (tx) => {
      await tx.landToolCalls(flightKey);
      return [];
    });
  }

  /** Calls waiting for the owner, oldest first. */
  pending(): Promise<ToolCall[]> {
    return this.prisma.toolCall.findMany({ where: { status: "asked" }, orderBy: { createdAt: "asc" } });
  }

  call(callId: string): Promise<ToolCall | null> {
    return this.prisma.toolCall.findUnique({ where: { id: callId } });
  }

  /** A standing permission covering this crow, task type and tool, if one stands. */
  permissionFor(crow: string, taskType: string, serverId: string, tool: string): Promise<ToolPermission | null> {
    return this.permissions.permissionFor(crow, taskType, serverId, tool);
  }

  /** The owner's decision on an asked call (tool-approvals.ts). */
  decide(
    callId: unknown,
    input: { approve: unknown; reason?: unknown; always?: unknown },
    actor: Actor,
  ): Promise<ToolDecision> {
    return this.approvals.decide(callId, input, actor);
  }

  /** The decision on an asked call, once made or at its deadline (tool-approvals.ts; the timeout is the owner's, fenced). */
  waitFor(call: ToolCall, owner: CallOwner): Promise<ToolDecision> {
    return this.approvals.waitFor(call, owner);
  }

  stop(): void {
    this.approvals.stop();
  }

  release(listId: string): void {
    this.approvals.release(listId);
  }

  // --- writes ---------------------------------------------------------------------------------

  /** An `ask` call parks with its deadline (tool.asked); the row and the event commit together. */
  async openAsked(draft: CallDraft, owner: CallOwner): Promise<ToolCall> {
    const id = newCallId();
    const deadline = new Date(this.now() + this.windowMs);
    await this.write(owner, async (tx) => {
      await tx.toolCall.create({ data: { id, ...draft, status: "asked", deadline } });
      return [
        {
          name: "tool.asked",
          payload: toolEventPayload<"tool.asked">(draft, {
            ...toolCallFacts(draft, id),
            args: summary(draft.args),
            deadline: deadline.toISOString(),
          }),
        },
      ];
    });
    return (await this.call(id))!;
  }

  /** A call its policy (or a standing permission) allows: recorded ready and started in one transaction. */
  async openAllowed(
    draft: CallDraft,
    owner: CallOwner,
    allowance: ToolAllowance,
    permission?: ToolPermission,
  ): Promise<ToolCall | null> {
    const id = newCallId();
    let row: ToolCall | null = null;
    await this.writeState(owner, async (tx) => {
      const createdAt = new Date(this.now());
      await tx.insertToolCall({ id, ...draft, status: "ready", createdAt });
      const approvedBy = permission ? grantorOf(permission) : null;
      const { events, at } = await this.recordStarted(tx, { ...draft, id }, allowance, approvedBy);
      // The row as these two statements left it, without reading it back.
      row = events.length > 0 ? startedRow(id, draft, createdAt, at) : null;
      return events;
    });
    return row;
  }

  /** An approved call goes out: false when it was not approved and unstarted (it must not run). */
  async start(call: ToolCall, owner: CallOwner): Promise<boolean> {
    let started = false;
    await this.writeState(owner, async (tx) => {
      const { events } = await this.recordStarted(tx, call, "approved", actorOfColumns(call));
      started = events.length > 0;
      return events;
    });
    return started;
  }

  /**
   * THE place a call's "started" record is written, in the transaction of its tool.called. A call
   * goes out only when this moved its row (ready or approved -> started); otherwise it never runs.
   * Its transaction is always its writer's fenced one (`writeState`): a writer that lost its lease moves nothing.
   * It runs through the log's own statements (src/storage/flock-state.ts), not a Prisma transaction.
   */
  private async recordStarted(
    tx: StateTx,
    call: Pick<ToolCall, "id" | "listId" | "nestId" | "itemId" | "crow" | "serverName" | "tool" | "args">,
    allowance: ToolAllowance,
    approvedBy: Actor | null,
  ): Promise<{ events: EventDraft[]; at: Date }> {
    const at = new Date(this.now());
    if (!(await tx.startToolCall(call.id, at))) return { events: [], at };
    const events = [
      {
        name: "tool.called",
        payload: toolEventPayload<"tool.called">(
          call,
          { ...toolCallFacts(call, call.id), args: summary(call.args), allowed_by: allowance, approved_by: approvedBy },
          at,
        ),
      },
    ];
    return { events, at };
  }

  /** A read-only call found started after a restart goes out again (docs/tools.md "At most once"). */
  async restartReadOnly(call: ToolCall, owner: CallOwner): Promise<void> {
    const at = new Date(this.now());
    await this.write(owner, async (tx) => {
      const { count } = await tx.toolCall.updateMany({
        where: { id: call.id, status: "started", readOnly: true, policy: "allow" },
        data: { startedAt: at },
      });
      if (count === 0) return [];
      return [
        {
          name: "tool.called",
          payload: toolEventPayload<"tool.called">(
            call,
            { ...toolCallFacts(call, call.id), args: summary(call.args), allowed_by: "allow", approved_by: null },
            at,
          ),
        },
      ];
    });
  }

  /** The call's end (tool.returned): `unknown` when it was started and its end was never recorded. */
  async recordEnd(
    call: ToolCall,
    owner: CallOwner,
    end: CallEnd,
    status: "returned" | "unknown" = "returned",
  ): Promise<void> {
    const at = new Date(this.now());
    const durationMs =
      call.startedAt && status === "returned" ? Math.max(0, at.getTime() - call.startedAt.getTime()) : 0;
    await this.writeState(owner, async (tx) => {
      const ended = await tx.endToolCall(call.id, {
        status,
        at,
        result: end.result,
        errorCode: end.ok ? null : end.error,
      });
      if (!ended) return [];
      return [
        {
          name: "tool.returned",
          payload: toolEventPayload<"tool.returned">(
            call,
            {
              ...toolCallFacts(call, call.id),
              ok: end.ok,
              result: summary(end.result),
              error: end.ok ? null : end.error,
              duration_ms: durationMs,
            },
            at,
          ),
        },
      ];
    });
  }

  /**
   * A call's write, on its place's stream (its list's, or its nest's side log) under its writer's
   * fence (call-owner.ts; the fence through Prisma, as EventLog.fencedAppendWith): refused once
   * another instance took the lease over, and then the writer steps down and the caller ends with
   * StoppedError, so nothing it would have done next (sending the call) happens.
   */
  private async write(owner: CallOwner, build: (tx: Tx) => Promise<EventDraft[]>): Promise<void> {
    const { fence } = owner;
    await refusedStops(owner, () =>
      this.log.appendWith(toolStreamOf(owner), async (tx) => {
        if (fence) await fencedPrisma(tx, fence);
        return build(tx);
      }),
    );
  }

  /**
   * `write` through the log's own statements (src/storage/flock-state.ts) instead of a Prisma
   * interactive transaction: the same fence first (EventLog.appendState's, as fencedAppend), the
   * same moves and events in one commit, in a fraction of the round trips. The hot path of every call.
   */
  private async writeState(owner: CallOwner, build: (tx: StateTx) => Promise<EventDraft[]>): Promise<void> {
    await refusedStops(owner, () => this.log.appendState(toolStreamOf(owner), build, owner.fence ?? undefined));
  }
}

/** A write its fence refused: the writer steps down, and its caller stops (StoppedError). */
async function refusedStops(owner: CallOwner, write: () => Promise<unknown>): Promise<void> {
  try {
    await write();
  } catch (error) {
    if (!(error instanceof StaleEpochError)) throw error;
    owner.fencedOut(error);
    throw new StoppedError();
  }
}

/** An allowed call's row just after openAllowed inserted and started it (every other column its default). */
function startedRow(id: string, draft: CallDraft, createdAt: Date, startedAt: Date): ToolCall {
  return {
    ...draft,
    id,
    status: "started",
    deadline: null,
    reason: null,
    always: false,
    decidedAt: null,
    decidedBy: "",
    decidedByTokenId: null,
    decidedByTokenName: null,
    decidedByWebhookId: null,
    startedAt,
    endedAt: null,
    result: null,
    errorCode: null,
    landed: false,
    createdAt,
  };
}

function newCallId(): string {
  return `tc${randomBytes(6).toString("hex")}`;
}

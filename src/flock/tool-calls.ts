// The tool calls of flights (docs/tools.md): each one's durable row (ToolCall), its approval when
// its policy asks, and the records that make it run at most once. A row moves:
//   ask:   asked -> approved | refused | timeout        (tool.asked, then tool.decided)
//   allow: ready (a call allowed by its policy or a standing permission, never seen by anyone)
//   then   ready | approved -> started -> returned       (tool.called, then tool.returned)
//   or     started -> unknown                            (its end was never recorded: never sent again)
// Every move is a conditional update committed with its event, so a second decision, a decision
// after the deadline, or a second start moves nothing. `recordStarted` is the one place a call's
// "started" record is written: a call goes out only after it committed.
import { randomBytes } from "node:crypto";
import type { PrismaClient, ToolCall, ToolPermission } from "../generated/prisma/client.ts";
import type { EventLog, Tx } from "../log/event-log.ts";
import { topicOf, type Bus, type BusEvent } from "../log/bus.ts";
import { BadInputError, NotFoundError } from "../base/errors.ts";
import { listStream } from "../base/streams.ts";
import { deciderColumns, actorOfColumns, SYSTEM, type Actor } from "../base/actor.ts";
import { StoppedError } from "./approvals.ts";
import { summary, toolEventPayload, type ToolAllowance, type ToolDecision } from "./tool-events.ts";

/** Where standing permissions' revocations are logged (audited, like every actor's write). */
export const TOOL_PERMISSIONS_STREAM = "tool-permissions";
/** The longest reason a refusal may carry (characters). */
export const MAX_REASON_CHARS = 1_000;
const TIMEOUT_RETRY_MS = 1_000;

/** A call about to be recorded: what the model asked, resolved to a server's tool. */
export interface CallDraft {
  listId: string;
  itemId: string;
  flightKey: string;
  crow: string;
  taskType: string;
  step: number;
  n: number;
  modelCallId: string;
  offeredName: string;
  serverId: string;
  serverName: string;
  tool: string;
  args: string;
  policy: "allow" | "ask";
  readOnly: boolean;
}

export type CallEnd = { ok: true; result: string } | { ok: false; result: string; error: string };

export class ToolCallDesk {
  private readonly waiters = new Map<string, Set<(decision: ToolDecision) => void>>();
  private readonly failers = new Map<(error: Error) => void, string>(); // -> its list id
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private stopped = false;

  constructor(
    private readonly prisma: PrismaClient,
    private readonly log: EventLog,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
    private readonly bus?: Bus,
  ) {}

  // --- reads ----------------------------------------------------------------------------------

  /** A flight's calls so far, in order (a restarted flight resumes from them). */
  flightCalls(flightKey: string): Promise<ToolCall[]> {
    return this.prisma.toolCall.findMany({ where: { flightKey }, orderBy: { n: "asc" } });
  }

  /** The crow of an unlanded flight with calls in this slot of the item (a restart flies it again). */
  async resumableCrow(itemId: string, slot: string): Promise<string | null> {
    const row = await this.prisma.toolCall.findFirst({
      where: { itemId, landed: false, flightKey: { startsWith: `${itemId}/${slot}/` } },
      orderBy: { createdAt: "desc" },
      select: { crow: true },
    });
    return row?.crow ?? null;
  }

  /** The flight landed: a later run of the item starts its own. */
  async landed(flightKey: string): Promise<void> {
    await this.prisma.toolCall.updateMany({ where: { flightKey, landed: false }, data: { landed: true } });
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
    return this.prisma.toolPermission.findFirst({ where: { crow, taskType, serverId, tool, revokedAt: null } });
  }

  /** Standing permissions, newest first; revoked ones too when asked (the audit). */
  permissions(includeRevoked = false): Promise<ToolPermission[]> {
    return this.prisma.toolPermission.findMany({
      where: includeRevoked ? {} : { revokedAt: null },
      orderBy: { grantedAt: "desc" },
    });
  }

  // --- writes ---------------------------------------------------------------------------------

  /** An `ask` call parks with its deadline (tool.asked); the row and the event commit together. */
  async openAsked(draft: CallDraft): Promise<ToolCall> {
    const id = newCallId();
    const deadline = new Date(this.now() + this.windowMs);
    await this.log.appendWith(listStream(draft.listId), async (tx) => {
      await tx.toolCall.create({ data: { id, ...draft, status: "asked", deadline } });
      return [
        {
          name: "tool.asked",
          payload: toolEventPayload<"tool.asked">(draft.listId, {
            ...facts(draft, id),
            args: summary(draft.args),
            deadline: deadline.toISOString(),
          }),
        },
      ];
    });
    return (await this.call(id))!;
  }

  /** A call its policy (or a standing permission) allows: recorded ready and started in one transaction. */
  async openAllowed(draft: CallDraft, allowance: ToolAllowance, permission?: ToolPermission): Promise<ToolCall | null> {
    const id = newCallId();
    let started = false;
    await this.log.appendWith(listStream(draft.listId), async (tx) => {
      await tx.toolCall.create({ data: { id, ...draft, status: "ready" } });
      const approvedBy = permission ? actorOfColumns(grantorColumns(permission)) : null;
      const events = await this.recordStarted(tx, { ...draft, id }, allowance, approvedBy);
      started = events.length > 0;
      return events;
    });
    return started ? this.call(id) : null;
  }

  /** An approved call goes out: false when it was not approved and unstarted (it must not run). */
  async start(call: ToolCall): Promise<boolean> {
    let started = false;
    await this.log.appendWith(listStream(call.listId), async (tx) => {
      const events = await this.recordStarted(tx, call, "approved", actorOfColumns(call));
      started = events.length > 0;
      return events;
    });
    return started;
  }

  /**
   * THE place a call's "started" record is written, in the transaction of its tool.called. A call
   * goes out only when this moved its row (ready or approved -> started); otherwise it never runs.
   * Fencing (list ownership epochs) adds its check here: a writer that lost the list moves nothing.
   */
  private async recordStarted(
    tx: Tx,
    call: Pick<ToolCall, "id" | "listId" | "itemId" | "crow" | "serverName" | "tool" | "args">,
    allowance: ToolAllowance,
    approvedBy: Actor | null,
  ): Promise<Array<{ name: string; payload: object }>> {
    const at = new Date(this.now());
    const { count } = await tx.toolCall.updateMany({
      where: { id: call.id, status: { in: ["ready", "approved"] } },
      data: { status: "started", startedAt: at },
    });
    if (count === 0) return [];
    return [
      {
        name: "tool.called",
        payload: toolEventPayload<"tool.called">(
          call.listId,
          { ...facts(call, call.id), args: summary(call.args), allowed_by: allowance, approved_by: approvedBy },
          at,
        ),
      },
    ];
  }

  /** A read-only call found started after a restart goes out again (docs/tools.md "At most once"). */
  async restartReadOnly(call: ToolCall): Promise<void> {
    const at = new Date(this.now());
    await this.log.appendWith(listStream(call.listId), async (tx) => {
      const { count } = await tx.toolCall.updateMany({
        where: { id: call.id, status: "started", readOnly: true, policy: "allow" },
        data: { startedAt: at },
      });
      if (count === 0) return [];
      return [
        {
          name: "tool.called",
          payload: toolEventPayload<"tool.called">(
            call.listId,
            { ...facts(call, call.id), args: summary(call.args), allowed_by: "allow", approved_by: null },
            at,
          ),
        },
      ];
    });
  }

  /** The call's end (tool.returned): `unknown` when it was started and its end was never recorded. */
  async recordEnd(call: ToolCall, end: CallEnd, status: "returned" | "unknown" = "returned"): Promise<void> {
    const at = new Date(this.now());
    const durationMs =
      call.startedAt && status === "returned" ? Math.max(0, at.getTime() - call.startedAt.getTime()) : 0;
    await this.log.appendWith(listStream(call.listId), async (tx) => {
      const { count } = await tx.toolCall.updateMany({
        where: { id: call.id, status: "started" },
        data: { status, endedAt: at, result: end.result, errorCode: end.ok ? null : end.error },
      });
      if (count === 0) return [];
      return [
        {
          name: "tool.returned",
          payload: toolEventPayload<"tool.returned">(
            call.listId,
            {
              ...facts(call, call.id),
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

  // --- the owner's decision -------------------------------------------------------------------

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

  /** Revokes a standing permission (an event on the tool-permissions stream, with its actor). */
  async revoke(permissionId: string, actor: Actor): Promise<void> {
    const at = new Date(this.now());
    let revoked = false;
    await this.log.appendWith(TOOL_PERMISSIONS_STREAM, async (tx) => {
      const row = await tx.toolPermission.findUnique({ where: { id: permissionId } });
      if (!row || row.revokedAt !== null) return [];
      await tx.toolPermission.update({
        where: { id: permissionId },
        data: { revokedAt: at, revokedBy: JSON.stringify(actor) },
      });
      revoked = true;
      const payload = {
        permission_id: row.id,
        crow: row.crow,
        task_type: row.taskType,
        server_id: row.serverId,
        tool: row.tool,
        ts: at.toISOString(),
        actor,
      };
      return [{ name: "tool.permission_revoked", payload }];
    });
    if (!revoked) throw new NotFoundError(`No standing permission ${permissionId}.`);
  }

  /**
   * The decision on an asked call: at once when recorded, else when the owner decides or its
   * stored deadline passes (then `timeout`, a refusal). The waiter is registered before the row is
   * read, so a decision landing in between is not missed; another instance's decision wakes it by
   * the list stream's bus signal.
   */
  async waitFor(call: ToolCall): Promise<ToolDecision> {
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
    const topic = topicOf(listStream(call.listId));
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
      else this.arm(row);
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
    for (const [fail, list] of [...this.failers]) if (list === listId) fail(new StoppedError());
  }

  private arm(call: ToolCall): void {
    if (this.stopped || this.timers.has(call.id) || !call.deadline) return;
    const deadline = call.deadline;
    const timer = setTimeout(
      () => {
        this.timers.delete(call.id);
        if (deadline.getTime() > this.now()) return this.arm(call);
        void this.record(call, "timeout", SYSTEM, { reason: null, always: false })
          .then((moved) => (moved ? undefined : this.settleFromRow(call.id)))
          .catch(() => {
            if (this.stopped || this.timers.has(call.id)) return;
            const retry = setTimeout(() => {
              this.timers.delete(call.id);
              this.arm(call);
            }, TIMEOUT_RETRY_MS);
            retry.unref?.();
            this.timers.set(call.id, retry);
          });
      },
      Math.max(0, deadline.getTime() - this.now()),
    );
    timer.unref?.();
    this.timers.set(call.id, timer);
  }

  private async settleFromRow(callId: string): Promise<void> {
    if (!this.waiters.has(callId)) return;
    const row = await this.call(callId);
    const decision = row ? decisionOf(row.status) : null;
    if (!decision) return;
    clearTimeout(this.timers.get(callId));
    this.timers.delete(callId);
    for (const settle of [...(this.waiters.get(callId) ?? [])]) settle(decision);
  }

  /**
   * Moves an asked call to `decision` with its tool.decided (and, for "always", the standing
   * permission it grants) in one transaction; false when it was not asked or its deadline passed.
   * A tool decision never moves trust (docs/tools.md "Tool approvals and trust").
   */
  private async record(
    call: ToolCall,
    decision: ToolDecision,
    actor: Actor,
    extra: { reason: string | null; always: boolean },
  ): Promise<boolean> {
    const at = new Date(this.now());
    let moved = false;
    await this.log.appendWith(listStream(call.listId), async (tx) => {
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
      if (extra.always) {
        await tx.toolPermission.create({
          data: {
            id: `perm${randomBytes(5).toString("hex")}`,
            crow: call.crow,
            taskType: call.taskType,
            serverId: call.serverId,
            tool: call.tool,
            grantedAt: at,
            callId: call.id,
            ...grantorFromActor(actor),
          },
        });
      }
      return [
        {
          name: "tool.decided",
          payload: toolEventPayload<"tool.decided">(
            call.listId,
            { ...facts(call, call.id), decision, reason: extra.reason, always: extra.always },
            at,
            actor,
          ),
        },
      ];
    });
    if (!moved) return false;
    clearTimeout(this.timers.get(call.id));
    this.timers.delete(call.id);
    for (const settle of [...(this.waiters.get(call.id) ?? [])]) settle(decision);
    return true;
  }
}

function newCallId(): string {
  return `tc${randomBytes(6).toString("hex")}`;
}

function facts(call: Pick<ToolCall, "itemId" | "crow" | "serverName" | "tool">, id: string) {
  return { item_id: call.itemId, call_id: id, crow: call.crow, server: call.serverName, tool: call.tool };
}

export function decisionOf(status: string): ToolDecision | null {
  if (status === "asked") return null;
  if (status === "refused" || status === "timeout") return status;
  return "approved"; // approved, started, returned, unknown: it was approved once
}

function grantorFromActor(actor: Actor) {
  const columns = deciderColumns(actor);
  return {
    grantedBy: columns.decidedBy,
    grantedByTokenId: columns.decidedByTokenId,
    grantedByTokenName: columns.decidedByTokenName,
    grantedByWebhookId: columns.decidedByWebhookId,
  };
}

function grantorColumns(permission: ToolPermission) {
  return {
    decidedBy: permission.grantedBy,
    decidedByTokenId: permission.grantedByTokenId,
    decidedByTokenName: permission.grantedByTokenName,
    decidedByWebhookId: permission.grantedByWebhookId,
  };
}

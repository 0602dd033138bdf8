// A crow's flight with tools (docs/tools.md "A flight with tools"): the model is offered the tools
// its item's nest may use and runs a bounded loop of steps. Each step is one model call (through
// the provider's gate and retry policy, like any flight's) that answers in words or asks for
// calls; each call runs by its policy (allow: at once; ask: after the owner's approval, or under a
// standing permission), at most once, and its result (cut to CROWS_TOOL_OUTPUT_BYTES) goes to the
// next step. Bounds: CROWS_TOOL_STEPS model calls (the last may not call tools), the token budget
// checked before every model call, CROWS_TOOL_TIMEOUT_MS per call. A restarted flight resumes
// from its stored calls (ToolCall rows): it never asks the model again for a step already run.
// Every record it writes is its owner's, fenced by the owner's lease (call-owner.ts, tool-calls.ts):
// a list's run, or a nest crow's turn at a request under its obligation. A writer that lost its
// lease stops at its next record and sends nothing more.
import type { ToolCall } from "../generated/prisma/client.ts";
import type { Model, ModelRequest, ToolCallRequest, ToolOffer, ToolStepRecord } from "../models/model.ts";
import { totalTokens } from "../models/model.ts";
import { isProviderTrouble } from "../models/provider-errors.ts";
import type { ToolCatalog, ToolCallOutcome, ToolDescriptor } from "../tools/types.ts";
import type { ToolFlightConfig } from "../base/tool-flight-config.ts";
import { describeError } from "../base/describe-error.ts";
import { StoppedError } from "./approvals.ts";
import type { CallDraft, ToolCallDesk } from "./tool-calls.ts";
import type { CallOwner } from "./call-owner.ts";
import { endOf, OUTCOME_UNKNOWN, refusalText } from "./tool-results.ts";

export interface ToolFlightPlan {
  /** The item; for a nest crow's answer, the request's msg_id. */
  itemId: string;
  crow: string;
  taskType: string;
  /** The nest whose tools are offered (the item's, or the request's). */
  nestId: string;
  /** Which flight of the item: solo, split-<i>, murder-<i>. */
  slot: string;
  budget: { tokenBudget: number; tokensUsed: number };
  /** The flight's rendered request (prompt, lane, watch, signal). */
  request: ModelRequest;
}

export interface ToolFlightOutcome {
  ok: boolean;
  text: string;
  tokens: number;
  error?: string;
  provider?: boolean;
  /** The budget ran out between steps: the item is skipped with `budget` once the flight has landed. */
  budgetSpent?: boolean;
}

interface Offered {
  offer: ToolOffer;
  tool: ToolDescriptor;
}

export interface PreparedToolFlight {
  flightKey: string;
  offered: Map<string, Offered>;
  stored: ToolCall[];
}

export const flightKeyOf = (itemId: string, slot: string, crow: string) => `${itemId}/${slot}/${crow}`;

export class ToolFlights {
  constructor(
    private readonly catalog: ToolCatalog,
    readonly desk: ToolCallDesk,
    /** Where its calls are and who writes them: every call record is written under its fence. */
    readonly owner: CallOwner,
    private readonly model: Model,
    private readonly config: ToolFlightConfig,
    private readonly signal: AbortSignal,
    private readonly logLine: (line: string) => void,
  ) {}

  /** The tools to offer and the calls stored for this flight; null: fly without tools, as ever. */
  async prepare(plan: Pick<ToolFlightPlan, "itemId" | "slot" | "crow" | "nestId">): Promise<PreparedToolFlight | null> {
    const flightKey = flightKeyOf(plan.itemId, plan.slot, plan.crow);
    let tools: ToolDescriptor[] = [];
    try {
      tools = (await this.catalog.toolsFor({ nestId: plan.nestId })).filter((t) => t.policy !== "deny");
    } catch (error) {
      this.logLine(
        `tools: the tool list for nest ${plan.nestId} failed; flying without tools: ${describeError(error)}`,
      );
    }
    const stored = await this.desk.flightCalls(plan.itemId, flightKey);
    if (tools.length === 0 && stored.length === 0) return null;
    return { flightKey, offered: offerNames(tools), stored };
  }

  async run(plan: ToolFlightPlan, prepared: PreparedToolFlight): Promise<ToolFlightOutcome> {
    const offers = [...prepared.offered.values()].map((o) => o.offer);
    let tokens = 0;
    let n = prepared.stored.length;
    const steps = await this.resume(prepared);
    let step = prepared.stored.reduce((max, row) => Math.max(max, row.step), 0);
    try {
      for (;;) {
        if (this.signal.aborted) throw new StoppedError();
        // The contract's budget rule, before every model call of the loop.
        if (plan.budget.tokensUsed + tokens >= plan.budget.tokenBudget)
          return {
            ok: false,
            text: "",
            tokens,
            error: "the token budget ran out during the tool loop",
            budgetSpent: true,
          };
        step++;
        const final = step >= this.config.steps;
        const reply = await this.model.generate({ ...plan.request, tools: { offered: offers, steps, final } });
        tokens += totalTokens(reply.usage);
        const calls = final ? [] : (reply.toolCalls ?? []);
        if (calls.length === 0) {
          if (reply.text.trim() !== "") return { ok: true, text: reply.text, tokens };
          return { ok: false, text: "", tokens, error: final ? "the tool step limit was reached" : "empty answer" };
        }
        const record: ToolStepRecord = { text: reply.text, calls: [] };
        for (const call of calls) {
          n++;
          record.calls.push({ ...call, result: await this.runCall(plan, prepared, step, n, call) });
        }
        steps.push(record);
      }
    } catch (error) {
      if (error instanceof StoppedError || this.signal.aborted) throw new StoppedError();
      return {
        ok: false,
        text: "",
        tokens,
        error: oneLine(error),
        ...(isProviderTrouble(error) ? { provider: true } : {}),
      };
    }
  }

  /** The stored calls of a restarted flight, settled and grouped into the steps the model made. */
  private async resume(prepared: PreparedToolFlight): Promise<ToolStepRecord[]> {
    const steps = new Map<number, ToolStepRecord>();
    for (const row of prepared.stored) {
      const result = await this.settleStored(row);
      const record = steps.get(row.step) ?? { text: "", calls: [] };
      record.calls.push({ id: row.modelCallId, name: row.offeredName, args: parseArgs(row.args), result });
      steps.set(row.step, record);
    }
    return [...steps.entries()].sort(([a], [b]) => a - b).map(([, record]) => record);
  }

  private async settleStored(row: ToolCall): Promise<string> {
    switch (row.status) {
      case "returned":
      case "unknown":
        return row.result ?? "";
      case "refused":
      case "timeout":
        return refusalText(row.status, row.reason);
      case "asked":
        return this.afterApproval(row);
      case "ready":
      case "approved":
        return (await this.desk.start(row, this.owner))
          ? this.execute((await this.desk.call(row.id))!)
          : this.describeNow(row.id);
      case "started":
        // In the air when the server stopped. Read-only calls may be asked again; any other never is.
        if (row.readOnly && row.policy === "allow") {
          await this.desk.restartReadOnly(row, this.owner);
          return this.execute((await this.desk.call(row.id))!);
        }
        await this.desk.recordEnd(
          row,
          this.owner,
          { ok: false, result: OUTCOME_UNKNOWN, error: "tool_outcome_unknown" },
          "unknown",
        );
        return OUTCOME_UNKNOWN;
      default:
        return `error tool_outcome_unknown: the call is in an unknown state (${row.status}).`;
    }
  }

  private async runCall(
    plan: ToolFlightPlan,
    prepared: PreparedToolFlight,
    step: number,
    n: number,
    call: ToolCallRequest,
  ): Promise<string> {
    const offered = prepared.offered.get(call.name);
    if (!offered) return `error tool_not_found: no tool named ${JSON.stringify(call.name)} is offered to this flight.`;
    const args = JSON.stringify(call.args);
    if (Buffer.byteLength(args) > this.config.argsBytes)
      return `error tool_denied: the arguments are larger than ${this.config.argsBytes} bytes; the call was not made.`;
    const { tool } = offered;
    const draft: CallDraft = {
      listId: this.owner.listId,
      itemId: plan.itemId,
      nestId: this.owner.nestId,
      flightKey: prepared.flightKey,
      crow: plan.crow,
      taskType: plan.taskType,
      step,
      n,
      modelCallId: call.id,
      offeredName: call.name,
      serverId: tool.serverId,
      serverName: tool.serverName,
      tool: tool.name,
      args,
      policy: tool.policy === "allow" ? "allow" : "ask",
      readOnly: tool.annotations.readOnlyHint === true,
    };
    if (draft.policy === "allow") {
      const row = await this.desk.openAllowed(draft, this.owner, "allow");
      return row ? this.execute(row) : "error tool_outcome_unknown: the call could not be recorded as started.";
    }
    // A standing permission (this crow, this task type, this tool) answers for the owner.
    const permission = await this.desk.permissionFor(plan.crow, plan.taskType, tool.serverId, tool.name);
    if (permission) {
      const row = await this.desk.openAllowed(draft, this.owner, "permission", permission);
      return row ? this.execute(row) : "error tool_outcome_unknown: the call could not be recorded as started.";
    }
    return this.afterApproval(await this.desk.openAsked(draft, this.owner));
  }

  /** Waits for the owner's decision (or the deadline), then runs the call only once it is approved. */
  private async afterApproval(row: ToolCall): Promise<string> {
    // A stop ends the wait here (the row still waits, to its stored deadline, for the next start).
    const decision = await untilStopped(this.desk.waitFor(row, this.owner), this.signal);
    if (decision !== "approved") return this.describeNow(row.id);
    const now = (await this.desk.call(row.id))!;
    if (now.status !== "approved") return this.settleStored(now);
    return (await this.desk.start(now, this.owner))
      ? this.execute((await this.desk.call(row.id))!)
      : this.describeNow(row.id);
  }

  /** What a call's row says now, as the model reads it. */
  private async describeNow(callId: string): Promise<string> {
    const row = await this.desk.call(callId);
    if (!row) return "error tool_outcome_unknown: the call's record is gone.";
    if (row.status === "refused" || row.status === "timeout") return refusalText(row.status, row.reason);
    return row.result ?? OUTCOME_UNKNOWN;
  }

  /** Sends a started call once, with its timeout, and records its end. */
  private async execute(row: ToolCall): Promise<string> {
    const timeoutMs = this.config.callTimeoutMs;
    const timeout = AbortSignal.timeout(timeoutMs);
    let outcome: ToolCallOutcome;
    try {
      outcome = await new Promise<ToolCallOutcome>((resolve, reject) => {
        const onTimeout = () =>
          resolve({ ok: false, error: { code: "tool_timeout", message: `no answer within ${timeoutMs} ms` } });
        timeout.addEventListener("abort", onTimeout, { once: true });
        this.catalog
          .call(row.serverId, row.tool, parseArgs(row.args), {
            signal: AbortSignal.any([this.signal, timeout]),
            timeoutMs,
          })
          .then(resolve, reject)
          .finally(() => timeout.removeEventListener("abort", onTimeout));
      });
    } catch (error) {
      outcome = { ok: false, error: { code: "tool_protocol_error", message: oneLine(error) } };
    }
    // Stopping while it was in the air: its end is not recorded here; a restart finds it started.
    if (this.signal.aborted) throw new StoppedError();
    const end = endOf(outcome, this.config.outputBytes);
    await this.desk.recordEnd(row, this.owner, end);
    return end.result;
  }
}

/** Unique names the model calls tools by: the server's name and the tool's, [A-Za-z0-9_-], at most 64. */
function offerNames(tools: ToolDescriptor[]): Map<string, Offered> {
  const offered = new Map<string, Offered>();
  for (const tool of tools) {
    const base = `${tool.serverName}__${tool.name}`.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 60);
    let name = base;
    for (let i = 2; offered.has(name); i++) name = `${base}_${i}`;
    offered.set(name, {
      tool,
      offer: {
        name,
        tool: tool.name,
        description: tool.description,
        inputSchema: tool.inputSchema,
        readOnly: tool.annotations.readOnlyHint === true,
      },
    });
  }
  return offered;
}

/** The promise, or a StoppedError as soon as `signal` aborts (a nest's stop waits for its crows). */
function untilStopped<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new StoppedError());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new StoppedError());
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

function parseArgs(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === "object" && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

function oneLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const line = text.split("\n")[0] ?? "error";
  return line.length > 200 ? `${line.slice(0, 197)}...` : line || "error";
}

// What the agent doors (MCP, A2A) show of a list and of what waits on the owner: plain reads of
// the rows GraphQL reads, shaped for a model to read. No flock rule is decided here.
import type { App } from "../../app.ts";
import { NotFoundError } from "../../base/errors.ts";
import { stringArray } from "../../base/util/json-column.ts";
import type { StoredEvent } from "../../log/event-log.ts";
import { parsedPayload } from "../../log/parsed-payload.ts";

export interface ItemView {
  item_id: string;
  text: string;
  stage: string;
  mode: string | null;
  task_type: string | null;
  subtasks: string[];
  answer: string | null;
  crows: string[];
  skip_reason: string | null;
  verdicts: Record<string, string>;
}

export interface ListView {
  list_id: string;
  requester: string;
  nest_id: string;
  status: string;
  cancelled: boolean;
  tokens_used: number;
  token_budget: number;
  items: ItemView[];
}

export interface WaitingApproval {
  item_id: string;
  list_id: string;
  target: string;
  item_text: string;
  /** What the owner is asked to judge: the triage's call, or the answer. */
  subject: string;
  deadline: string;
}

/**
 * The approval an event of a list leaves waiting on the owner, if any: an item.triaged or
 * item.answered that needs approval (both doors say so to their callers: MCP's progress, A2A's status).
 */
export function approvalAsked(
  name: string,
  payload: Record<string, unknown>,
): { item_id: string; target: "triage" | "output" } | undefined {
  if (payload.needs_approval !== true) return undefined;
  if (name === "item.triaged") return { item_id: payload.item_id as string, target: "triage" };
  if (name === "item.answered") return { item_id: payload.item_id as string, target: "output" };
  return undefined;
}

export async function readList(app: App, listId: string): Promise<ListView> {
  const list = await app.prisma.todoList.findUnique({
    where: { id: listId },
    include: { items: { orderBy: { n: "asc" }, include: { approvals: true } } },
  });
  if (!list) throw new NotFoundError(`No list ${listId}.`);
  return {
    list_id: list.id,
    requester: list.requester,
    nest_id: list.nestId,
    status: list.status,
    cancelled: list.cancelledAt !== null,
    tokens_used: list.tokensUsed,
    token_budget: list.tokenBudget,
    items: list.items.map((item) => ({
      item_id: item.id,
      text: item.text,
      stage: item.stage,
      mode: item.mode,
      task_type: item.taskType,
      subtasks: stringArray(item.subtasks),
      answer: item.answer,
      crows: stringArray(item.crows),
      skip_reason: item.skipReason,
      verdicts: Object.fromEntries(item.approvals.map((a) => [a.target, a.status])),
    })),
  };
}

/** Approvals waiting on the owner, oldest first (at most `limit`), optionally of one list. */
export async function waitingApprovals(app: App, listId?: string, limit = 100): Promise<WaitingApproval[]> {
  const rows = await app.prisma.approval.findMany({
    where: { status: "pending", ...(listId ? { item: { listId } } : {}) },
    include: { item: true },
    orderBy: { id: "asc" },
    take: limit,
  });
  return rows.map((a) => ({
    item_id: a.itemId,
    list_id: a.item.listId,
    target: a.target,
    item_text: a.item.text,
    subject:
      a.target === "triage"
        ? `${a.item.mode ?? "solo"} / ${a.item.taskType ?? "other"}: ${a.item.reason ?? ""}`
        : (a.item.answer ?? ""),
    deadline: a.deadline.toISOString(),
  }));
}

/** The most event lines one update holds (a batch caught up after a drop may hold hundreds of events). */
export const LINES_AT_ONCE = 20;

/** A batch's event lines as one update says them: the newest LINES_AT_ONCE, saying how many came before. */
export function linesOf(lines: readonly string[], separator: string): string {
  if (lines.length <= LINES_AT_ONCE) return lines.join(separator);
  const left = lines.length - LINES_AT_ONCE;
  return [`(${left} earlier event${left === 1 ? "" : "s"} not shown)`, ...lines.slice(-LINES_AT_ONCE)].join(separator);
}

/** Whether a stored event of a list leaves an approval waiting on the owner. */
export function asksApproval(event: StoredEvent): boolean {
  if (event.name !== "item.triaged" && event.name !== "item.answered") return false;
  return approvalAsked(event.name, parsedPayload<Record<string, unknown>>(event)) !== undefined;
}

/** Whether the agent doors send an event's batch at once: the list's end, or an approval it asks. */
export function mustSendNow(event: StoredEvent): boolean {
  return event.name === "list.finished" || asksApproval(event);
}

/** How far a list has come, from its events so far: for progress messages. */
export class ListProgress {
  private readonly ended = new Set<string>();
  finished = false;

  constructor(readonly total: number) {}

  /** Takes one event of the list; returns a one-line description of it. */
  take(name: string, payload: Record<string, any>): string {
    const item = payload.item_id as string | undefined;
    switch (name) {
      case "item.skipped":
        if (item) this.ended.add(item);
        return `${item} skipped (${payload.reason})`;
      case "verdict":
        if (payload.target === "output" && item) this.ended.add(item);
        return `${item} ${payload.target} verdict: ${payload.verdict}`;
      case "item.triaged":
        return `${item} triaged ${payload.mode}/${payload.task_type}${payload.needs_approval ? ": waits for a triage verdict" : ""}`;
      case "item.answered":
        return `${item} answered by ${(payload.crows as string[]).join(", ")}${payload.needs_approval ? ": waits for an output verdict" : ""}`;
      case "crow.flying":
        return `${payload.crow} flies on ${item}`;
      case "crow.landed":
        return `${payload.crow} landed on ${item}${payload.ok ? "" : ` (failed: ${payload.error})`}`;
      case "list.finished":
        this.finished = true;
        return payload.cancelled ? "list cancelled and finished" : "list finished";
      default:
        return name;
    }
  }

  get done(): number {
    return this.ended.size;
  }
}

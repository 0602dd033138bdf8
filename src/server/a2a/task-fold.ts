// A task as its list's events make it (docs/integrations.md "A2A"): the list's events, taken in
// order a batch at a time, give the updates a caller streams (an answer becomes an artifact, every
// event a line of its batch's status update) and leaves the task's status and artifacts where those updates put them. The executor folds
// the events it follows; the task store folds the same events to answer for a task on any instance,
// and after a restart. Nothing here decides a flock rule: it reads the events the engine wrote.
import { TaskState, type Artifact, type TaskStatus } from "@a2a-js/sdk";
import { AgentEvent, type AgentExecutionEvent } from "@a2a-js/sdk/server";
import type { App } from "../../app.ts";
import type { StoredEvent } from "../../log/event-log.ts";
import { parsedPayload } from "../../log/parsed-payload.ts";
import { approvalAsked, linesOf, ListProgress, readList, type WaitingApproval } from "../agents/list-view.ts";
import { MAX_ITEMS } from "../../flock/todo-text.ts";
import { agentMessage, textPart } from "./parts.ts";

/** What names a task: the id the SDK gave it, its list, its conversation. */
export interface TaskRecord {
  taskId: string;
  listId: string;
  contextId: string;
}

/** How many waiting approvals one input-required names at most (a list's every item, each waiting once). */
export const ASKED_AT_ONCE = MAX_ITEMS;

export const TERMINAL = new Set([TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_CANCELED]);

export class TaskFold {
  /** The seq of the last event taken. */
  cursor = 0;
  finished = false;
  status: TaskStatus;
  /**
   * The approvals the task's input-required names, oldest first: a text reply decides the first, a
   * batch reply any of them (empty while the task does not wait on its caller).
   */
  asked: WaitingApproval[] = [];
  private readonly answers = new Map<string, Artifact>();
  /** Only its one-line descriptions are used, which read the event alone. */
  private readonly progress = new ListProgress(0);

  constructor(
    readonly record: TaskRecord,
    readonly app: App,
  ) {
    this.status = this.statusOf(TaskState.TASK_STATE_SUBMITTED, undefined);
  }

  get artifacts(): Artifact[] {
    return [...this.answers.values()];
  }

  /** A copy that folds on by itself (an executor's stream, started from what the store rebuilt). */
  clone(): TaskFold {
    const copy = new TaskFold(this.record, this.app);
    copy.cursor = this.cursor;
    copy.finished = this.finished;
    copy.status = this.status;
    copy.asked = this.asked;
    for (const [id, artifact] of this.answers) copy.answers.set(id, artifact);
    return copy;
  }

  /**
   * Takes a batch of events (those already taken give nothing); returns the updates they make: an
   * artifact per answer, then one status update whose lines are the batch's events, or the task's
   * end when the list finished (the lines before it are then not said: a stream hands the end
   * over in a batch of its own, src/server/a2a/executor.ts).
   */
  async take(events: readonly StoredEvent[]): Promise<AgentExecutionEvent[]> {
    const updates: AgentExecutionEvent[] = [];
    const lines: string[] = [];
    for (const event of events) {
      if (event.seq <= this.cursor || this.finished) continue;
      this.cursor = event.seq;
      const payload = parsedPayload<Record<string, any>>(event);
      const line = this.progress.take(event.name, payload);
      if (event.name === "item.answered") updates.push(this.answer(payload));
      if (event.name === "list.finished") {
        updates.push(await this.end(payload.cancelled === true));
        return updates;
      }
      const waits = approvalAsked(event.name, payload) !== undefined;
      lines.push(waits ? `${line} (waits on the owner)` : line);
    }
    if (lines.length > 0) updates.push(this.setStatus(TaskState.TASK_STATE_WORKING, linesOf(lines, "\n")));
    return updates;
  }

  /** The list finished: the task completes (or is cancelled), saying how much was answered. */
  private async end(cancelled: boolean): Promise<AgentExecutionEvent> {
    const list = await readList(this.app, this.record.listId);
    const done = list.items.filter((i) => i.stage === "done").length;
    const summary = `${done} of ${list.items.length} items answered; ${list.tokens_used} tokens used.`;
    this.finished = true;
    this.asked = [];
    return cancelled
      ? this.setStatus(TaskState.TASK_STATE_CANCELED, `Cancelled. ${summary}`)
      : this.setStatus(TaskState.TASK_STATE_COMPLETED, summary);
  }

  /**
   * The task waits on its caller's verdicts on `waiting` (oldest first, never empty): input-required,
   * naming each (in its text, and in its message's metadata as `approvals`). `why` comes first when
   * a reply could not be recorded (the task asks again, saying why).
   */
  ask(waiting: WaitingApproval[], why?: string): AgentExecutionEvent {
    const update = this.setStatus(
      TaskState.TASK_STATE_INPUT_REQUIRED,
      [why, question(waiting)].filter(Boolean).join("\n"),
    );
    this.asked = waiting;
    this.status.message!.metadata = {
      approvals: waiting.map((w) => ({
        item_id: w.item_id,
        target: w.target,
        item_text: w.item_text,
        subject: w.subject,
        deadline: w.deadline,
      })),
    };
    return update;
  }

  get terminal(): boolean {
    return TERMINAL.has(this.status.state);
  }

  private answer(payload: Record<string, any>): AgentExecutionEvent {
    const artifact: Artifact = {
      artifactId: payload.item_id as string,
      name: `answer to ${payload.item_id}`,
      description: `by ${(payload.crows as string[]).join(", ")}`,
      parts: [textPart(payload.answer as string)],
      metadata: { item_id: payload.item_id, crows: payload.crows },
      extensions: [],
    };
    this.answers.set(artifact.artifactId, artifact);
    const { taskId, contextId } = this.record;
    return AgentEvent.artifactUpdate({
      taskId,
      contextId,
      artifact,
      append: false,
      lastChunk: true,
      metadata: undefined,
    });
  }

  private statusOf(state: TaskState, text: string | undefined): TaskStatus {
    const { taskId, contextId } = this.record;
    return {
      state,
      message: text === undefined ? undefined : agentMessage(taskId, contextId, text),
      timestamp: new Date().toISOString(),
    };
  }

  private setStatus(state: TaskState, text: string): AgentExecutionEvent {
    this.asked = [];
    this.status = this.statusOf(state, text);
    return this.statusUpdate();
  }

  /** The task's status as an update (a stream that starts on a finished task ends with it). */
  statusUpdate(): AgentExecutionEvent {
    const { taskId, contextId, listId } = this.record;
    return AgentEvent.statusUpdate({ taskId, contextId, status: this.status, metadata: { list_id: listId } });
  }
}

const REASON_HINT = 'optionally followed by your reason (e.g. "reject: too costly")';

/**
 * What an input-required says: the first (oldest) approval waiting and how to decide it, as it
 * always has; then, when more wait, each of them and how to decide several in one reply.
 */
function question(waiting: WaitingApproval[]): string {
  const line = (w: WaitingApproval) =>
    `${w.item_id} ("${w.item_text}") waits for your ${w.target} verdict on: ${w.subject}`;
  const first = `${line(waiting[0]!)}\nReply "approve" or "reject", ${REASON_HINT}.`;
  if (waiting.length === 1) return first;
  const more = waiting.length - 1;
  return [
    first,
    `${more} more wait${more === 1 ? "s" : ""} for your verdict as well:`,
    ...waiting.slice(1).map((w) => `- ${line(w)}`),
    'Decide several at once in one reply with a data part {"decisions": [{"item_id", "target", "approve", "reason"?}, ...]}.',
  ].join("\n");
}

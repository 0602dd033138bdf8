// A task as its list's events make it (docs/integrations.md "A2A"): each event of the list, taken in
// order, gives the updates a caller streams (an answer becomes an artifact, every event a status
// line) and leaves the task's status and artifacts where those updates put them. The executor folds
// the events it follows; the task store folds the same events to answer for a task on any instance,
// and after a restart. Nothing here decides a flock rule: it reads the events the engine wrote.
import { TaskState, type Artifact, type TaskStatus } from "@a2a-js/sdk";
import { AgentEvent, type AgentExecutionEvent } from "@a2a-js/sdk/server";
import type { App } from "../../app.ts";
import type { StoredEvent } from "../../log/event-log.ts";
import { ListProgress, readList, type WaitingApproval } from "../agents/list-view.ts";
import { agentMessage, textPart } from "./parts.ts";

/** What names a task: the id the SDK gave it, its list, its conversation. */
export interface TaskRecord {
  taskId: string;
  listId: string;
  contextId: string;
}

/** The approval an input-required asked about: the caller's reply decides it. */
export interface Asked {
  itemId: string;
  target: "triage" | "output";
}

export const TERMINAL = new Set([TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_CANCELED]);

export class TaskFold {
  /** The seq of the last event taken. */
  cursor = 0;
  finished = false;
  status: TaskStatus;
  asked: Asked | undefined;
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

  /** Whether the last event taken left an approval waiting on the owner. */
  waits = false;

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

  /** Takes one event (an event already taken gives nothing); returns the updates it makes. */
  async take(event: StoredEvent): Promise<AgentExecutionEvent[]> {
    if (event.seq <= this.cursor || this.finished) return [];
    this.cursor = event.seq;
    const payload = JSON.parse(event.payload) as Record<string, any>;
    const line = this.progress.take(event.name, payload);
    const updates: AgentExecutionEvent[] = [];
    if (event.name === "item.answered") updates.push(this.answer(payload));
    if (event.name === "list.finished") {
      const list = await readList(this.app, this.record.listId);
      const done = list.items.filter((i) => i.stage === "done").length;
      const summary = `${done} of ${list.items.length} items answered; ${list.tokens_used} tokens used.`;
      this.finished = true;
      this.asked = undefined;
      updates.push(
        payload.cancelled
          ? this.setStatus(TaskState.TASK_STATE_CANCELED, `Cancelled. ${summary}`)
          : this.setStatus(TaskState.TASK_STATE_COMPLETED, summary),
      );
      return updates;
    }
    this.waits = (event.name === "item.triaged" || event.name === "item.answered") && payload.needs_approval === true;
    updates.push(this.setStatus(TaskState.TASK_STATE_WORKING, this.waits ? `${line} (waits on the owner)` : line));
    return updates;
  }

  /** The task waits on its caller's verdict on `waiting`: input-required, naming it. */
  ask(waiting: WaitingApproval): AgentExecutionEvent {
    this.asked = { itemId: waiting.item_id, target: waiting.target as Asked["target"] };
    return this.setStatus(
      TaskState.TASK_STATE_INPUT_REQUIRED,
      `${waiting.item_id} ("${waiting.item_text}") waits for your ${waiting.target} verdict on: ${waiting.subject}\nReply "approve" or "reject", optionally followed by your reason (e.g. "reject: too costly").`,
    );
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
    if (state !== TaskState.TASK_STATE_INPUT_REQUIRED) this.asked = undefined;
    this.status = this.statusOf(state, text);
    return this.statusUpdate();
  }

  /** The task's status as an update (a stream that starts on a finished task ends with it). */
  statusUpdate(): AgentExecutionEvent {
    const { taskId, contextId, listId } = this.record;
    return AgentEvent.statusUpdate({ taskId, contextId, status: this.status, metadata: { list_id: listId } });
  }
}

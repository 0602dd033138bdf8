// The A2A SDK's TaskStore over crows's own lists (docs/integrations.md "A2A"): a task is a list. The
// database keeps only what names it (A2aTask: the task id, its list, its context); its status and
// artifacts are folded from the list's events (task-fold.ts), so `tasks/get`, `tasks/resubscribe`
// and `tasks/cancel` answer on any instance sharing the database, and after a restart. While this
// instance's executor streams a task, the store answers from that stream's fold (what the caller
// was just sent, with no read of the log per event); otherwise from its own fold, brought up to the
// list's newest event on each load. A task's history holds its caller's messages (this instance's);
// the flock's progress is its status and its list's events.
import { Role, TaskState, type ListTasksRequest, type ListTasksResponse, type Message, type Task } from "@a2a-js/sdk";
import type { ServerCallContext, TaskStore } from "@a2a-js/sdk/server";
import type { App } from "../../app.ts";
import { listStream } from "../../base/streams.ts";
import { waitingApprovals } from "../agents/list-view.ts";
import { mayDecideIn } from "./caller.ts";
import { ASKED_AT_ONCE, TaskFold, type TaskRecord } from "./task-fold.ts";

/** Folds kept in memory (least recently used dropped first): a dropped one is rebuilt from the log. */
const KEPT = 500;
const PAGE = 1000;

export class ListTaskStore implements TaskStore {
  private readonly folds = new Map<string, TaskFold>();
  private readonly streaming = new Map<string, TaskFold>();
  private readonly histories = new Map<string, Message[]>();
  /** One refresh of a fold at a time. */
  private readonly refreshing = new Map<string, Promise<void>>();

  constructor(private readonly app: App) {}

  /** Records a new task (the list it became); its fold starts empty. */
  async create(record: TaskRecord): Promise<TaskFold> {
    await this.app.prisma.a2aTask.create({
      data: { id: record.taskId, listId: record.listId, contextId: record.contextId },
    });
    const fold = new TaskFold(record, this.app);
    this.keep(fold);
    return fold;
  }

  /** What names the task, or undefined for a task that is not crows's. */
  async record(taskId: string): Promise<TaskRecord | undefined> {
    const known = this.streaming.get(taskId) ?? this.folds.get(taskId);
    if (known) return known.record;
    const row = await this.app.prisma.a2aTask.findUnique({ where: { id: taskId } });
    return row ? { taskId: row.id, listId: row.listId, contextId: row.contextId } : undefined;
  }

  /**
   * The task's fold up to its list's newest event (the stream's fold while one runs here); for a
   * caller who `mayDecide`, asking about the approvals waiting.
   */
  async fold(taskId: string, mayDecide: boolean): Promise<TaskFold | undefined> {
    const streamed = this.streaming.get(taskId);
    if (streamed) return streamed;
    let fold = this.folds.get(taskId);
    if (!fold) {
      const record = await this.record(taskId);
      if (!record) return undefined;
      fold = this.folds.get(taskId) ?? new TaskFold(record, this.app);
    }
    this.keep(fold);
    await this.refresh(fold, mayDecide);
    return fold;
  }

  /** `fold` is the task's stream here until `end()`: loads answer from it. */
  stream(fold: TaskFold): { end(): void } {
    const taskId = fold.record.taskId;
    this.streaming.set(taskId, fold);
    return {
      end: () => {
        if (this.streaming.get(taskId) !== fold) return;
        this.streaming.delete(taskId);
        // The store's own fold folds on from where the stream left it.
        this.keep(fold.clone());
      },
    };
  }

  /** Resolves once the task's list has finished (a cancel asked where no stream of it runs). */
  async finished(taskId: string, mayDecide: boolean): Promise<void> {
    const fold = await this.fold(taskId, mayDecide);
    if (!fold || fold.finished) return;
    for await (const event of this.app.log.follow(listStream(fold.record.listId), fold.cursor)) {
      if (event.name === "list.finished") break;
    }
    await this.fold(taskId, mayDecide);
  }

  async load(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    const fold = await this.fold(taskId, mayDecideIn(context));
    return fold ? this.taskOf(fold) : undefined;
  }

  /** The SDK saves the whole task after each update; only its caller's messages are not in the log. */
  async save(task: Task, _context: ServerCallContext): Promise<void> {
    const given = task.history ?? [];
    const history = this.histories.get(task.id) ?? [];
    const seen = new Set(history.map((m) => m.messageId));
    // New messages come last: look back only as far as the newest one already kept.
    const fresh: Message[] = [];
    for (let i = given.length - 1; i >= 0; i--) {
      const message = given[i]!;
      if (seen.has(message.messageId)) break;
      if (message.role === Role.ROLE_USER) fresh.unshift(message);
    }
    if (fresh.length === 0) return;
    history.push(...fresh);
    this.histories.set(task.id, history);
  }

  async list(params: ListTasksRequest, _context: ServerCallContext): Promise<ListTasksResponse> {
    const pageSize = params.pageSize ?? 50;
    const offset = Number(params.pageToken || 0) || 0;
    const rows = await this.app.prisma.a2aTask.findMany({
      where: params.contextId ? { contextId: params.contextId } : {},
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      select: { id: true },
    });
    const tasks: Task[] = [];
    for (const row of rows) {
      const task = await this.load(row.id, _context);
      if (!task) continue;
      if (params.status !== undefined && params.status !== TaskState.TASK_STATE_UNSPECIFIED) {
        if (task.status?.state !== params.status) continue;
      }
      if (!params.includeArtifacts) task.artifacts = [];
      tasks.push(task);
    }
    const page = tasks.slice(offset, offset + pageSize);
    const more = offset + pageSize < tasks.length;
    return { tasks: page, nextPageToken: more ? String(offset + pageSize) : "", pageSize, totalSize: tasks.length };
  }

  /** A fresh task object each time (the SDK edits what it loads): status, answers, history, list id. */
  private taskOf(fold: TaskFold): Task {
    const { taskId, contextId, listId } = fold.record;
    return {
      id: taskId,
      contextId,
      status: { ...fold.status },
      artifacts: fold.artifacts.map((a) => ({ ...a })),
      history: [...(this.histories.get(taskId) ?? [])],
      metadata: { list_id: listId },
    };
  }

  private keep(fold: TaskFold): void {
    const taskId = fold.record.taskId;
    this.folds.delete(taskId);
    this.folds.set(taskId, fold);
    while (this.folds.size > KEPT) {
      const oldest = this.folds.keys().next().value as string;
      this.folds.delete(oldest);
      this.histories.delete(oldest);
    }
  }

  private refresh(fold: TaskFold, mayDecide: boolean): Promise<void> {
    const taskId = fold.record.taskId;
    const next = (this.refreshing.get(taskId) ?? Promise.resolve()).then(() => this.foldNewEvents(fold, mayDecide));
    const settled = next.catch(() => {});
    this.refreshing.set(taskId, settled);
    void settled.then(() => {
      if (this.refreshing.get(taskId) === settled) this.refreshing.delete(taskId);
    });
    return next;
  }

  /** Takes the list's events after the fold's cursor; an unfinished task then asks as the executor would. */
  private async foldNewEvents(fold: TaskFold, mayDecide: boolean): Promise<void> {
    if (fold.finished) return;
    const stream = listStream(fold.record.listId);
    const from = fold.cursor;
    for (;;) {
      const page = await this.app.log.read(stream, fold.cursor, PAGE);
      await fold.take(page);
      if (page.length < PAGE) break;
    }
    if (fold.finished || !mayDecide) return;
    // Nothing new since it asked: the same approval still waits (a verdict is an event).
    if (fold.cursor === from && fold.asked.length > 0) return;
    const waiting = await waitingApprovals(this.app, fold.record.listId, ASKED_AT_ONCE);
    if (waiting.length > 0) fold.ask(waiting);
  }
}

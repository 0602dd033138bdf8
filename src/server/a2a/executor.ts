// The A2A agent's work (docs/integrations.md "A2A"): a message becomes a list (the task), the
// list's events become status and artifact updates (each answer an artifact), an approval waiting
// on the owner becomes input-required for a caller that may decide, and the caller's reply decides
// it. Every action is an engine call REST makes; no flock rule is decided here.
import { TaskState, type Message } from "@a2a-js/sdk";
import {
  AgentEvent,
  type AgentExecutionEvent,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from "@a2a-js/sdk/server";
import type { App } from "../../app.ts";
import { requireScope, type Principal } from "../../access/principal.ts";
import { requirePostScope } from "../../access/post-scope.ts";
import { CrowsError } from "../../base/errors.ts";
import { listStream } from "../../base/streams.ts";
import type { StoredEvent } from "../../log/event-log.ts";
import { eventBatches } from "../agents/event-batches.ts";
import { asksApproval, mustSendNow, waitingApprovals, type WaitingApproval } from "../agents/list-view.ts";
import { callerIn } from "./caller.ts";
import { agentMessage, textOf } from "./parts.ts";
import { readBatch, readReply, type BatchEntry } from "./reply.ts";
import type { Refusal } from "../agents/decide-each.ts";
import { decideAll } from "./decisions.ts";
import { ASKED_AT_ONCE, type TaskFold } from "./task-fold.ts";
import type { ListTaskStore } from "./task-store.ts";

export class CrowsExecutor implements AgentExecutor {
  /**
   * Each task's stream on this instance: what its callers were sent so far, so a reply here goes on
   * from there (the events that came while it waited included). Dropped once the task has ended.
   */
  private readonly streams = new Map<string, TaskFold>();
  /** Tasks whose follow loop runs now. */
  private readonly following = new Running();

  constructor(
    private readonly app: App,
    private readonly tasks: ListTaskStore,
  ) {}

  async execute(ctx: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const principal = callerIn(ctx.context);
    const record = ctx.task ? await this.tasks.record(ctx.taskId) : undefined;
    if (!(ctx.task && record) && typeof ctx.userMessage.metadata?.nest_id === "string") {
      // The nest skill: the message is a post in the nest (as POST /api/nests/{id}/messages); the
      // answer is a message holding the stored record, not a task.
      await this.postInNest(ctx, bus, principal, ctx.userMessage.metadata.nest_id);
      return;
    }
    let fold: TaskFold;
    if (ctx.task && record) {
      // A reply to input-required: it decides what was asked about (one approval, or a batch). From here the
      // store answers for the task from this stream (what its caller is sent).
      fold = this.streams.get(ctx.taskId) ?? (await this.streamFrom(ctx.taskId, principal.scopes.includes("decide")));
      const streaming = this.tasks.stream(fold);
      try {
        bus.publish(AgentEvent.task(ctx.task));
        requireScope(principal, "decide");
        // A text reply decides the approval this stream named first; a batch may leave out the target
        // of any approval waiting now (what the task names may have been read on another instance:
        // read afresh only when an entry needs it).
        const read = readBatch(ctx.userMessage);
        // A batch refused whole decides nothing; otherwise each decision stands or falls on its own.
        let why = read && "refused" in read ? `${read.refused} Nothing was decided; reply again.` : undefined;
        if (!why) {
          const batch = read && !("refused" in read) ? read : undefined;
          const named = (id: unknown) => fold.asked.some((a) => a.item_id === id);
          const asked =
            fold.asked.length > 0 && (!batch || batch.every((e) => e.target !== undefined || named(e.item_id)))
              ? fold.asked
              : await waitingApprovals(this.app, fold.record.listId, ASKED_AT_ONCE);
          const entries = batch ?? textDecision(ctx.userMessage, asked[0]);
          if (entries) {
            const refused = await decideAll(this.app, fold.record.listId, asked, entries, principal.actor);
            if (refused.length > 0) why = refusalText(refused, entries.length, batch !== undefined);
            fold.asked = [];
          }
        }
        if (why) {
          // Asked again, saying why, while anything waits (decided elsewhere meanwhile: the task goes on).
          const waiting = await waitingApprovals(this.app, fold.record.listId, ASKED_AT_ONCE);
          if (waiting.length > 0) {
            bus.publish(fold.ask(waiting, why));
            bus.finished();
            return;
          }
        }
        await this.follow(fold, bus, principal.scopes.includes("decide"));
      } finally {
        streaming.end();
      }
    } else {
      requireScope(principal, "write");
      // Who asks, as REST's requester (self-asserted; the rate limit keys on it): one bucket for
      // every A2A caller that names none.
      const requester = ctx.userMessage.metadata?.requester;
      let listId: string;
      try {
        ({ listId } = await this.app.flock.submitList({
          text: textOf(ctx.userMessage),
          requester: typeof requester === "string" ? requester : "a2a",
          actor: principal.actor,
        }));
      } catch (error) {
        if (!(error instanceof CrowsError)) throw error;
        // Refused before any task exists (a bad list or requester, a prank): the answer is a message
        // saying why, with the code REST's status stands for; nothing was stored.
        const refusal = agentMessage("", ctx.contextId, `Not accepted: ${error.message}`);
        refusal.metadata = { refused: error.code };
        bus.publish(AgentEvent.message(refusal));
        bus.finished();
        return;
      }
      fold = (await this.tasks.create({ taskId: ctx.taskId, listId, contextId: ctx.contextId })).clone();
      this.streams.set(ctx.taskId, fold);
      const streaming = this.tasks.stream(fold);
      try {
        bus.publish(
          AgentEvent.task({
            id: ctx.taskId,
            contextId: ctx.contextId,
            status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: new Date().toISOString() },
            artifacts: [],
            history: [ctx.userMessage],
            metadata: { list_id: listId },
          }),
        );
        await this.follow(fold, bus, principal.scopes.includes("decide"));
      } finally {
        streaming.end();
      }
    }
    bus.finished();
  }

  /** A task this instance has not streamed (sent elsewhere, or before a restart): from what the log says now. */
  private async streamFrom(taskId: string, mayDecide: boolean): Promise<TaskFold> {
    const rebuilt = await this.tasks.fold(taskId, mayDecide);
    if (!rebuilt) throw new Error(`task ${taskId} has no list`); // cannot be: the SDK loaded it
    const fold = rebuilt.clone();
    this.streams.set(taskId, fold);
    return fold;
  }

  private async postInNest(ctx: RequestContext, bus: ExecutionEventBus, principal: Principal, nestId: string) {
    const meta = ctx.userMessage.metadata ?? {};
    const author = typeof meta.author === "string" ? meta.author : "owner";
    await this.app.chat.requireNest(nestId);
    await requirePostScope(this.app.prisma, principal, nestId, { author, refers_to: meta.refers_to });
    const record = await this.app.chat.post(nestId, {
      author,
      text: textOf(ctx.userMessage),
      to: meta.to,
      refers_to: meta.refers_to,
      actor: principal.actor,
    });
    const reply = agentMessage("", ctx.contextId, `${record.msg_id} posted in ${nestId} (${record.kind}).`);
    reply.metadata = { record };
    bus.publish(AgentEvent.message(reply));
    bus.finished();
  }

  /**
   * The door's handler has cancelled the list already. A task whose follow loop runs ends there
   * (list.finished, cancelled); one waiting on its caller (input-required) is followed here to its end.
   */
  async cancelTask(taskId: string, bus: ExecutionEventBus): Promise<void> {
    if (this.following.has(taskId)) return;
    const fold = this.streams.get(taskId) ?? (await this.streamFrom(taskId, false).catch(() => undefined));
    if (!fold) return;
    // Its caller is answered with the cancelled task: the bus gets the answers and the last status only.
    const quiet: Pick<ExecutionEventBus, "publish"> = {
      publish: (update) => (update.kind === "artifactUpdate" || fold.finished) && bus.publish(update),
    };
    const streaming = this.tasks.stream(fold);
    try {
      await this.follow(fold, quiet, false);
    } finally {
      streaming.end();
    }
    bus.finished();
  }

  /** Turns the list's events after the fold's cursor into updates, until it finishes or waits on this caller. */
  private async follow(fold: TaskFold, bus: Pick<ExecutionEventBus, "publish">, mayDecide: boolean): Promise<void> {
    const taskId = fold.record.taskId;
    await this.following.run(taskId, () => this.foldOn(fold, (update) => bus.publish(update), mayDecide));
    if (fold.finished) this.streams.delete(taskId);
  }

  /**
   * A task followed where no stream of it runs (resubscribing on another instance, or after a
   * restart): its list's updates after `fold`, until it finishes, waits on this caller, or the
   * caller leaves.
   */
  async *updatesAfter(fold: TaskFold, mayDecide: boolean): AsyncGenerator<AgentExecutionEvent> {
    const queue: AgentExecutionEvent[] = [];
    let wake: (() => void) | undefined;
    let over = false;
    const leave = new AbortController();
    const run = this.foldOn(
      fold,
      (update) => {
        queue.push(update);
        wake?.();
      },
      mayDecide,
      leave.signal,
    ).finally(() => {
      over = true;
      wake?.();
    });
    try {
      for (;;) {
        while (queue.length > 0) yield queue.shift()!;
        if (over) break;
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
      await run;
    } finally {
      leave.abort();
      await run.catch(() => {});
    }
  }

  /**
   * A batch's updates, in order. The lines before the list's end go out before the fold is
   * finished: the SDK keeps no working update that reaches it after the task has ended.
   */
  private async say(fold: TaskFold, batch: StoredEvent[], publish: (update: AgentExecutionEvent) => void) {
    const end = batch.findIndex((e) => e.name === "list.finished");
    for (const part of end > 0 ? [batch.slice(0, end), batch.slice(end)] : [batch])
      for (const update of await fold.take(part)) publish(update);
  }

  /**
   * Says `unsaid` (events of the list not yet taken) and asks about `asking` (what waits, as just
   * read), once the caller has been told every event up to it: the log is read after what waits,
   * so it holds the event of each approval named. When that read brings more, what waits is read
   * again, until a read of the log brings nothing new; so the fold's cursor, where it asks, covers
   * every approval it names and none it leaves out (the store answers from there, task-store.ts).
   * All of it goes in one update before the question. False when nothing waits any more, or the
   * list finished meanwhile (said).
   */
  private async askOnceSaid(
    fold: TaskFold,
    publish: (update: AgentExecutionEvent) => void,
    unsaid: StoredEvent[],
    asking: WaitingApproval[],
    waiting: () => Promise<WaitingApproval[]>,
  ): Promise<boolean> {
    const stream = listStream(fold.record.listId);
    const events = [...unsaid];
    for (;;) {
      const after = events.length > 0 ? events[events.length - 1]!.seq : fold.cursor;
      const caught = await this.app.log.read(stream, after, CATCH_UP_PAGE);
      events.push(...caught);
      if (caught.length === 0 || caught.some((e) => e.name === "list.finished")) break;
      asking = await waiting();
      if (asking.length === 0) break;
    }
    await this.say(fold, events, publish);
    if (fold.finished || asking.length === 0) return false;
    publish(fold.ask(asking));
    return true;
  }

  private async foldOn(
    fold: TaskFold,
    publish: (update: AgentExecutionEvent) => void,
    mayDecide: boolean,
    signal?: AbortSignal,
  ): Promise<void> {
    const listId = fold.record.listId;
    const waiting = async () => (mayDecide ? await waitingApprovals(this.app, listId, ASKED_AT_ONCE) : []);
    if (fold.finished) return publish(fold.statusUpdate());
    const first = await waiting();
    if (first.length > 0 && (await this.askOnceSaid(fold, publish, [], first, waiting))) return;
    if (fold.finished) return;
    const batches = eventBatches(this.app.log, listStream(listId), fold.cursor, {
      everyMs: this.app.config.agentUpdateMs,
      urgent: mustSendNow,
      ...(signal ? { signal } : {}),
    });
    for await (const batch of batches) {
      // A batch that leaves an approval waiting goes out with the question (one update before it).
      const asking = batch.some(asksApproval) ? await waiting() : [];
      if (asking.length > 0) {
        if (await this.askOnceSaid(fold, publish, batch, asking, waiting)) return;
      } else await this.say(fold, batch, publish);
      if (fold.finished) return;
    }
  }
}

/** The most events one read of the log before a question takes (the log's own page; a list has fewer). */
const CATCH_UP_PAGE = 1000;

/** A text reply as a batch of one: its verdict on the first approval the task named (none for no verdict word). */
function textDecision(message: Message, first: WaitingApproval | undefined): BatchEntry[] | undefined {
  const reply = readReply(textOf(message), message.metadata);
  if (!first || !reply) return undefined;
  return [{ item_id: first.item_id, target: first.target, approve: reply.approve, reason: reply.reason }];
}

/** The most refusals an input-required asked again names one by one; the rest are counted. */
const NAMED_REFUSALS = 10;

/** What an input-required asked again says first: why each refused decision was not recorded (bounded). */
function refusalText(refused: Refusal[], of: number, batch: boolean): string {
  if (!batch) return `${refused[0]!.why} Nothing was decided; reply again.`;
  const named = refused
    .slice(0, NAMED_REFUSALS)
    .map((r) => `${r.name}: ${r.why.replace(/\.$/, "")}`)
    .join("; ");
  const more = refused.length > NAMED_REFUSALS ? `; and ${refused.length - NAMED_REFUSALS} more` : "";
  return `Not decided: ${named}${more} (${of - refused.length} of ${of} decided).`;
}

/** Which tasks have a follow loop running. */
class Running {
  private readonly ids = new Set<string>();
  has(id: string): boolean {
    return this.ids.has(id);
  }
  async run(id: string, work: () => Promise<void>): Promise<void> {
    this.ids.add(id);
    try {
      await work();
    } finally {
      this.ids.delete(id);
    }
  }
}

// The A2A agent's work (docs/integrations.md "A2A"): a message becomes a list (the task), the
// list's events become status and artifact updates (each answer an artifact), an approval waiting
// on the owner becomes input-required for a caller that may decide, and the caller's reply decides
// it. Every action is an engine call REST makes; no flock rule is decided here.
import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";
import { Role, TaskState, type Message, type Part } from "@a2a-js/sdk";
import { AgentEvent, type AgentExecutor, type ExecutionEventBus, type RequestContext } from "@a2a-js/sdk/server";
import type { App } from "../../app.ts";
import { requireScope, ROOT, type Principal } from "../../access/principal.ts";
import { requirePostScope } from "../../access/post-scope.ts";
import { listStream } from "../../base/streams.ts";
import { ListProgress, readList, waitingApprovals } from "../agents/list-view.ts";
import { BadInputError } from "../../base/errors.ts";
import { readReply } from "./reply.ts";

/** The principal of the request being served (set by the door's middleware around the SDK's handler). */
export const callerOf = new AsyncLocalStorage<Principal>();
const caller = () => callerOf.getStore() ?? ROOT;

/** A task's list and how far its stream has been turned into updates. */
interface TaskList {
  listId: string;
  cursor: number;
  /** The approval the last input-required asked about: the caller's reply decides it. */
  asked?: { itemId: string; target: "triage" | "output" };
}

const textPart = (text: string): Part => ({
  content: { $case: "text", value: text },
  metadata: undefined,
  filename: "",
  mediaType: "text/plain",
});

function agentMessage(taskId: string, contextId: string, text: string): Message {
  return {
    messageId: randomUUID(),
    contextId,
    taskId,
    role: Role.ROLE_AGENT,
    parts: [textPart(text)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

function textOf(message: Message): string {
  return message.parts
    .map((p) => (p.content?.$case === "text" ? p.content.value : ""))
    .join("\n")
    .trim();
}

export class CrowsExecutor implements AgentExecutor {
  private readonly lists = new Map<string, TaskList>();
  /** Tasks whose follow loop runs now, and each task's context id. */
  private readonly following = new Running();
  private readonly contexts = new Map<string, string>();

  private async contextOf(taskId: string): Promise<string | undefined> {
    return this.contexts.get(taskId);
  }

  constructor(private readonly app: App) {}

  listOf(taskId: string): string | undefined {
    return this.lists.get(taskId)?.listId;
  }

  async execute(ctx: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const principal = caller();
    const known = this.lists.get(ctx.taskId);
    let state: TaskList;
    if (ctx.task && known) {
      // A reply to input-required: it decides the approval that was asked about.
      state = known;
      bus.publish(AgentEvent.task(ctx.task));
      requireScope(principal, "decide");
      const reply = readReply(textOf(ctx.userMessage), ctx.userMessage.metadata);
      if (state.asked && reply) {
        try {
          await this.app.flock.postVerdict({ ...state.asked, ...reply, actor: principal.actor });
        } catch (error) {
          // A reason over the bound (the engine's 400): asked again, the task goes on waiting.
          if (!(error instanceof BadInputError)) throw error;
          this.askAgain(ctx, bus, error.message);
          return;
        }
        state.asked = undefined;
      }
    } else if (typeof ctx.userMessage.metadata?.nest_id === "string") {
      // The nest skill: the message is a post in the nest (as POST /api/nests/{id}/messages); the
      // answer is a message holding the stored record, not a task.
      await this.postInNest(ctx, bus, principal, ctx.userMessage.metadata.nest_id);
      return;
    } else {
      requireScope(principal, "write");
      const { listId } = await this.app.flock.submitList({
        text: textOf(ctx.userMessage),
        requester: "a2a",
        actor: principal.actor,
      });
      state = { listId, cursor: 0 };
      this.lists.set(ctx.taskId, state);
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
    }
    this.contexts.set(ctx.taskId, ctx.contextId);
    await this.following.run(ctx.taskId, () =>
      this.follow(ctx.taskId, ctx.contextId, state, bus, principal.scopes.includes("decide")),
    );
    bus.finished();
  }

  /** The reply could not be recorded: input-required again, saying why. */
  private askAgain(ctx: RequestContext, bus: ExecutionEventBus, why: string): void {
    bus.publish(
      AgentEvent.statusUpdate({
        taskId: ctx.taskId,
        contextId: ctx.contextId,
        status: {
          state: TaskState.TASK_STATE_INPUT_REQUIRED,
          message: agentMessage(ctx.taskId, ctx.contextId, `${why} Nothing was decided; reply again.`),
          timestamp: new Date().toISOString(),
        },
        metadata: undefined,
      }),
    );
    bus.finished();
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
    const state = this.lists.get(taskId);
    if (!state || this.following.has(taskId)) return;
    const contextId = (await this.contextOf(taskId)) ?? "";
    await this.following.run(taskId, () => this.follow(taskId, contextId, state, bus, false));
    bus.finished();
  }

  /** Turns the list's events after the cursor into updates, until it finishes or waits on this caller. */
  private async follow(
    taskId: string,
    contextId: string,
    state: TaskList,
    bus: ExecutionEventBus,
    mayDecide: boolean,
  ): Promise<void> {
    const status = (taskState: TaskState, text: string) =>
      bus.publish(
        AgentEvent.statusUpdate({
          taskId,
          contextId,
          status: {
            state: taskState,
            message: agentMessage(taskId, contextId, text),
            timestamp: new Date().toISOString(),
          },
          metadata: { list_id: state.listId },
        }),
      );
    const askIfWaiting = async (): Promise<boolean> => {
      if (!mayDecide) return false;
      const [waiting] = await waitingApprovals(this.app, state.listId, 1);
      if (!waiting) return false;
      state.asked = { itemId: waiting.item_id, target: waiting.target as "triage" | "output" };
      status(
        TaskState.TASK_STATE_INPUT_REQUIRED,
        `${waiting.item_id} ("${waiting.item_text}") waits for your ${waiting.target} verdict on: ${waiting.subject}\nReply "approve" or "reject", optionally followed by your reason (e.g. "reject: too costly").`,
      );
      return true;
    };
    if (await askIfWaiting()) return;
    const progress = new ListProgress(0);
    for await (const event of this.app.log.follow(listStream(state.listId), state.cursor)) {
      state.cursor = event.seq;
      const payload = JSON.parse(event.payload) as Record<string, any>;
      const line = progress.take(event.name, payload);
      if (event.name === "item.answered") {
        bus.publish(
          AgentEvent.artifactUpdate({
            taskId,
            contextId,
            artifact: {
              artifactId: payload.item_id as string,
              name: `answer to ${payload.item_id}`,
              description: `by ${(payload.crows as string[]).join(", ")}`,
              parts: [textPart(payload.answer as string)],
              metadata: { item_id: payload.item_id, crows: payload.crows },
              extensions: [],
            },
            append: false,
            lastChunk: true,
            metadata: undefined,
          }),
        );
      }
      if (event.name === "list.finished") {
        const list = await readList(this.app, state.listId);
        const done = list.items.filter((i) => i.stage === "done").length;
        const summary = `${done} of ${list.items.length} items answered; ${list.tokens_used} tokens used.`;
        status(
          payload.cancelled ? TaskState.TASK_STATE_CANCELED : TaskState.TASK_STATE_COMPLETED,
          payload.cancelled ? `Cancelled. ${summary}` : summary,
        );
        return;
      }
      if ((event.name === "item.triaged" || event.name === "item.answered") && payload.needs_approval) {
        if (await askIfWaiting()) return;
        status(TaskState.TASK_STATE_WORKING, `${line} (waits on the owner)`);
        continue;
      }
      status(TaskState.TASK_STATE_WORKING, line);
    }
  }
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

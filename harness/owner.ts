// A scripted owner: follows a list's SSE stream and answers every approval the moment it is asked,
// the way a person at the keyboard would (approve, or reject by a rule the test chooses).
import { openSse, type SseClient, type SseMessage } from "./sse.ts";

/** A verdict with more than yes or no: the owner's reason, a request for another try (docs/rules.md). */
export interface OwnerAnswer {
  approve: boolean;
  reason?: string;
  rework?: boolean;
  /** With an approval: the owner's changes (triage: mode, task_type, subtasks; output: answer). */
  edit?: Record<string, unknown>;
}

export interface OwnerScript {
  /** Decides each approval: true approves, false rejects, undefined leaves it to time out. */
  decide?: (target: "triage" | "output", message: SseMessage) => boolean | OwnerAnswer | undefined;
}

export interface OwnerRun {
  sse: SseClient;
  /** Resolves with every message up to and including list.finished. */
  finished: Promise<SseMessage[]>;
  /** The statuses of every verdict POST the owner sent. */
  answers: Array<{ item_id: string; target: string; approve: boolean; status: number }>;
}

export async function ownerFollows(
  baseUrl: string,
  listId: string,
  script: OwnerScript = {},
  timeoutMs = 20_000,
): Promise<OwnerRun> {
  const sse = await openSse(`${baseUrl}/api/events?list_id=${encodeURIComponent(listId)}`);
  const answers: OwnerRun["answers"] = [];
  const seen = new Set<string>();
  const decide = script.decide ?? (() => true);
  const finished = (async () => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      // Counted before answering: messages that arrive while a verdict is being POSTed are handled
      // on the next pass, not mistaken for already seen (the wait below returns at once for them).
      const count = sse.messages().length;
      const pending = sse
        .messages()
        .slice(0, count)
        .filter((m) => !seen.has(m.id ?? "") && m.event !== "");
      for (const message of pending) {
        seen.add(message.id ?? "");
        const target =
          message.event === "item.triaged" ? "triage" : message.event === "item.answered" ? "output" : undefined;
        if (target && message.data.needs_approval) {
          const decision = decide(target, message);
          if (decision === undefined) continue;
          const answer = typeof decision === "boolean" ? { approve: decision } : decision;
          const approve = answer.approve;
          const response = await fetch(`${baseUrl}/api/verdicts`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ item_id: message.data.item_id, target, ...answer }),
          });
          answers.push({ item_id: message.data.item_id, target, approve, status: response.status });
        }
        if (message.event === "list.finished") return sse.messages().slice(0, sse.messages().indexOf(message) + 1);
      }
      if (sse.messages().length > count) continue;
      const saw = () =>
        sse
          .messages()
          .map((m) => m.event)
          .join(", ");
      // A stream that ended before list.finished is a dead server or a dropped list: fail now, not
      // at the deadline (waiting again on an ended stream rejects at once, a spin that starves timers).
      if (sse.ended()) throw new Error(`the stream of list ${listId} ended before list.finished; saw ${saw()}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`list ${listId} did not finish; saw ${saw()}`);
      await sse
        .waitFor((_m) => sse.messages().length > count, left)
        .catch((error: unknown) => {
          if (sse.messages().length > count) return;
          if (sse.ended()) throw new Error(`the stream of list ${listId} ended before list.finished; saw ${saw()}`);
          throw new Error(`list ${listId} did not finish; saw ${saw()} (${(error as Error).message})`);
        });
    }
  })();
  return { sse, finished, answers };
}

// Shared setup for the nest-message tests: a crows server whose classifier is the loopback System
// One fake, scripted per test. By default Jev is unsure about every kind and mode (so a poster's
// header decides and the loop is predictable) and finds every watched claim/deliver clean; a test
// swaps in its own answers through `jev`.
import { startTestServer, type TestServer } from "./server.ts";
import { startFakeSystemOne, type FakeSystemOne, type FakeSystemOneCall } from "./fake-systemone.ts";
import { openSse, type SseClient, type SseMessage } from "./sse.ts";
import type { AppDeps } from "../../src/app.ts";

export type ChoiceAnswer = { choice: string; confidence: number } | "unsure";
export interface WatchScores {
  answers_request: number;
  states_fact_without_source: number;
  contradicts_earlier: number;
}

export interface JevPlan {
  /** The kind answer for a message state ({text, author, to, refers_to}). */
  kind?: (state: Record<string, any>) => ChoiceAnswer;
  mode?: (state: Record<string, any>) => ChoiceAnswer;
  /** The three noul scores for a watch state ({message, kind, author, request, earlier}); undefined: unsure. */
  watch?: (state: Record<string, any>) => WatchScores | undefined;
}

export const CLEAN: WatchScores = {
  answers_request: 0.95,
  states_fact_without_source: 0.05,
  contradicts_earlier: 0.05,
};
export const OFF_TOPIC: WatchScores = {
  answers_request: 0.05,
  states_fact_without_source: 0.05,
  contradicts_earlier: 0.05,
};

export interface Kit {
  /** Replace with the result of restart() to keep using the kit. */
  server: TestServer;
  jev: FakeSystemOne;
  plan: JevPlan;
  /** Messages (as seen by the fake) per question id, for counting classifier calls. */
  callsFor(questionId: string): FakeSystemOneCall[];
  post(nestId: string, body: Record<string, unknown>): Promise<{ status: number; body: any }>;
  messages(nestId: string): Promise<any[]>;
  stream(nestId: string, lastEventId?: string): Promise<SseClient>;
  /** Waits until every background responder and watchdog has finished. */
  idle(): Promise<void>;
  close(): Promise<void>;
}

export async function startKit(
  options: { env?: Record<string, string>; plan?: JevPlan; deps?: AppDeps } = {},
): Promise<Kit> {
  const jev = await startFakeSystemOne({ apiKey: "test-key" });
  const kit = {} as Kit;
  kit.plan = options.plan ?? {};
  jev.answer = (id, question, call) => {
    const state = (call.body.state ?? {}) as Record<string, any>;
    if (question.type === "choice") {
      const decide = id === "kind" ? kit.plan.kind : id === "mode" ? kit.plan.mode : undefined;
      const answer = decide ? decide(state) : "unsure";
      if (answer === "unsure") return { type: "unsure", reason: "the test's Jev is unsure" };
      const labels = Object.keys(question.criteria);
      const rest = (1 - answer.confidence) / Math.max(1, labels.length - 1);
      return {
        type: "choice",
        choice: answer.choice,
        confidence: answer.confidence,
        probabilities: Object.fromEntries(labels.map((l) => [l, l === answer.choice ? answer.confidence : rest])),
      };
    }
    if (question.type === "noul") {
      const scores = kit.plan.watch ? kit.plan.watch(state) : CLEAN;
      if (!scores) return { type: "unsure", reason: "the test's Jev is unsure" };
      return { type: "noul", noul: scores[id as keyof WatchScores] };
    }
    return undefined;
  };
  const server = await startTestServer({
    env: { CROWS_JEV: "systemone", CROWS_JEV_BASE_URL: jev.url, CROWS_JEV_API_KEY: "test-key", ...options.env },
    deps: options.deps,
  });
  Object.assign(kit, {
    server,
    jev,
    callsFor: (questionId: string) => jev.calls.filter((c) => Object.keys(c.body.questions ?? {}).includes(questionId)),
    post: (nestId: string, body: Record<string, unknown>) =>
      kit.server.post(`/api/nests/${encodeURIComponent(nestId)}/messages`, body),
    messages: async (nestId: string) =>
      (await kit.server.get(`/api/nests/${encodeURIComponent(nestId)}/messages`)).body,
    stream: (nestId: string, lastEventId?: string) =>
      openSse(
        `${kit.server.url}/api/events?nest_id=${encodeURIComponent(nestId)}`,
        lastEventId === undefined ? {} : { lastEventId },
      ),
    idle: () => kit.server.app.chat.idle(),
    close: async () => {
      await kit.server.close();
      await jev.close();
    },
  });
  return kit;
}

/** The stream messages in order, as records (nest_id, ts and a request's actor stripped). */
export function records(messages: SseMessage[]): any[] {
  return messages.map((m) => {
    const { nest_id: _n, ts: _t, actor: _a, ...record } = m.data;
    return record;
  });
}

/** Waits for the first stream message matching `where` and returns its record. */
export async function waitForRecord(sse: SseClient, where: (record: any) => boolean, timeoutMs = 10_000): Promise<any> {
  const message = await sse.waitFor((m) => m.event === "nest.message" && where(m.data), timeoutMs);
  return message.data;
}

export const RECORD_FIELDS = [
  "msg_id",
  "kind",
  "author",
  "text",
  "to",
  "refers_to",
  "tagged_by",
  "mode",
  "mode_tagged_by",
  "invited",
  "approval_phrase",
  "resolved",
];

/** Runs `fn` with a fresh kit and always closes it. */
export async function withKit(
  fn: (kit: Kit) => Promise<void>,
  options: Parameters<typeof startKit>[0] = {},
): Promise<void> {
  const kit = await startKit(options);
  try {
    await fn(kit);
  } finally {
    await kit.close();
  }
}

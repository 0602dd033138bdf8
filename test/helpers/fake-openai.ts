// A real HTTP server on 127.0.0.1 (ephemeral port) that speaks OpenAI chat completions, for tests
// of the provider path. Each test scripts the replies (status, content, usage, delay) and reads
// back every request the server saw. The default script answers each role in its format, sniffed
// from the system prompt, so a whole list can run against it.
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface FakeCall {
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The parsed JSON body (model, messages, response_format, ...). */
  body: any;
  system: string;
  prompt: string;
}

export interface FakeReply {
  status?: number;
  /** The assistant message content (status 200). */
  content?: string;
  /** Token usage to report; null leaves usage out of the response. */
  usage?: { prompt_tokens: number; completion_tokens: number } | null;
  /** Wait this long before answering (to exercise timeouts). */
  delayMs?: number;
  /** Send this exact body instead of a chat completion (to exercise malformed responses). */
  rawBody?: string;
  /** Extra response headers (Retry-After, x-ratelimit-*). */
  headers?: Record<string, string>;
  /** Drop the connection without an answer (a reset, as a crashing proxy does). */
  reset?: boolean;
  /** When streaming, wait this long between pieces (a model writing as it goes). */
  chunkDelayMs?: number;
  /** When streaming, drop the connection after this many pieces (a reset mid-answer). */
  resetAfterChunks?: number;
  /** Tool calls the assistant asks for (finish_reason tool_calls); arguments are JSON text. */
  toolCalls?: Array<{ id: string; name: string; arguments: string }>;
}

export type FakeScript = (call: FakeCall, index: number) => FakeReply | Promise<FakeReply>;

export interface FakeOpenAI {
  /** Base URL including /v1, for CROWS_MODEL_BASE_URL. */
  url: string;
  calls: FakeCall[];
  /** Replace the script mid-test. */
  script: FakeScript;
  /** Requests being answered now, and the most there ever were at once (the cap, seen from here). */
  inFlight: number;
  maxInFlight: number;
  /** Tokens reported in the usage of every completed 200 answer. */
  servedTokens: number;
  close(): Promise<void>;
}

function messageText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((part) => (typeof part?.text === "string" ? part.text : "")).join("");
  return "";
}

/** Which role a request is for, judged from the rendered system prompt (src/models/prompts.ts). */
export function roleOfSystemPrompt(
  system: string,
): "sentry" | "crow" | "elder" | "banter" | "quill" | "boss" | "unknown" {
  if (system.includes("Triage one todo item")) return "sentry";
  if (system.includes("Merge the crows' answers")) return "elder";
  if (system.includes("Write exactly one line")) return "banter";
  if (system.includes("RELAY {")) return "quill";
  if (system.includes("SPIN {")) return "boss";
  if (system.includes("Do the owner's task")) return "crow";
  return "unknown";
}

/** A well-formed answer in each role's format, with usage proportional to the text. */
export const defaultScript: FakeScript = (call) => {
  const role = roleOfSystemPrompt(call.system);
  const content =
    role === "sentry"
      ? JSON.stringify({ mode: "solo", task_type: "other", subtasks: [], reason: "fake provider: one action" })
      : role === "banter"
        ? "Fine flying today."
        : `fake ${role} answer`;
  return {
    content,
    usage: {
      prompt_tokens: Math.ceil((call.system.length + call.prompt.length) / 4),
      completion_tokens: Math.ceil(content.length / 4),
    },
  };
};

/** Chat-completion chunks over SSE, the way OpenAI streams: the content in a few pieces, usage last. */
async function streamCompletion(
  res: http.ServerResponse,
  index: number,
  model: string,
  reply: FakeReply,
  headers: Record<string, string>,
): Promise<void> {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", ...headers });
  const content = reply.content ?? "";
  const base = {
    id: `chatcmpl-fake-${index}`,
    object: "chat.completion.chunk",
    created: Math.floor(Date.now() / 1000),
    model,
  };
  const pieces = content.match(/[\s\S]{1,12}/g) ?? [];
  const send = (chunk: unknown) => res.write(`data: ${JSON.stringify(chunk)}\n\n`);
  send({ ...base, choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] });
  for (const [i, piece] of pieces.entries()) {
    if (reply.chunkDelayMs) await new Promise((resolve) => setTimeout(resolve, reply.chunkDelayMs));
    if (res.destroyed) return;
    if (reply.resetAfterChunks !== undefined && i >= reply.resetAfterChunks) {
      res.socket?.destroy();
      return;
    }
    send({ ...base, choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] });
  }
  for (const [i, call] of (reply.toolCalls ?? []).entries()) {
    // As OpenAI streams a call: its id and name first, then its arguments in pieces.
    send({
      ...base,
      choices: [
        {
          index: 0,
          delta: {
            tool_calls: [{ index: i, id: call.id, type: "function", function: { name: call.name, arguments: "" } }],
          },
          finish_reason: null,
        },
      ],
    });
    for (const piece of call.arguments.match(/[\s\S]{1,10}/g) ?? []) {
      send({
        ...base,
        choices: [
          { index: 0, delta: { tool_calls: [{ index: i, function: { arguments: piece } }] }, finish_reason: null },
        ],
      });
    }
  }
  const finish = reply.toolCalls?.length ? "tool_calls" : "stop";
  send({ ...base, choices: [{ index: 0, delta: {}, finish_reason: finish }] });
  if (reply.usage)
    send({
      ...base,
      choices: [],
      usage: { ...reply.usage, total_tokens: reply.usage.prompt_tokens + reply.usage.completion_tokens },
    });
  res.end("data: [DONE]\n\n");
}

export async function startFakeOpenAI(script: FakeScript = defaultScript): Promise<FakeOpenAI> {
  const calls: FakeCall[] = [];
  const fake: FakeOpenAI = {
    url: "",
    calls,
    script,
    inFlight: 0,
    maxInFlight: 0,
    servedTokens: 0,
    close: async () => {},
  };

  const server = http.createServer((req, res) => {
    fake.inFlight++;
    fake.maxInFlight = Math.max(fake.maxInFlight, fake.inFlight);
    res.once("close", () => fake.inFlight--);
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", async () => {
      let body: any = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}");
      } catch {
        body = {};
      }
      const messages: Array<{ role: string; content: unknown }> = Array.isArray(body.messages) ? body.messages : [];
      const call: FakeCall = {
        path: req.url ?? "",
        headers: req.headers,
        body,
        system: messages
          .filter((m) => m.role === "system")
          .map((m) => messageText(m.content))
          .join("\n"),
        prompt: messages
          .filter((m) => m.role === "user")
          .map((m) => messageText(m.content))
          .join("\n"),
      };
      const index = calls.length;
      calls.push(call);
      const reply = await fake.script(call, index);
      if (reply.delayMs) await new Promise((resolve) => setTimeout(resolve, reply.delayMs));
      if (res.destroyed || res.writableEnded) return;
      if (reply.reset) {
        req.socket.destroy();
        return;
      }
      const status = reply.status ?? 200;
      const headers = { "content-type": "application/json", ...(reply.headers ?? {}) };
      if (reply.rawBody !== undefined) {
        res.writeHead(status, headers).end(reply.rawBody);
        return;
      }
      if (status !== 200) {
        res
          .writeHead(status, headers)
          .end(JSON.stringify({ error: { message: `fake error ${status}`, type: "server_error" } }));
        return;
      }
      if (reply.usage) fake.servedTokens += reply.usage.prompt_tokens + reply.usage.completion_tokens;
      if (body.stream === true) {
        void streamCompletion(
          res,
          index,
          typeof body.model === "string" ? body.model : "fake",
          reply,
          reply.headers ?? {},
        );
        return;
      }
      const completion: Record<string, unknown> = {
        id: `chatcmpl-fake-${index}`,
        object: "chat.completion",
        created: Math.floor(Date.now() / 1000),
        model: typeof body.model === "string" ? body.model : "fake",
        choices: [
          reply.toolCalls?.length
            ? {
                index: 0,
                message: {
                  role: "assistant",
                  content: reply.content ?? null,
                  tool_calls: reply.toolCalls.map((c) => ({
                    id: c.id,
                    type: "function",
                    function: { name: c.name, arguments: c.arguments },
                  })),
                },
                finish_reason: "tool_calls",
              }
            : { index: 0, message: { role: "assistant", content: reply.content ?? "" }, finish_reason: "stop" },
        ],
      };
      if (reply.usage) {
        completion.usage = { ...reply.usage, total_tokens: reply.usage.prompt_tokens + reply.usage.completion_tokens };
      }
      res.writeHead(200, headers).end(JSON.stringify(completion));
    });
  });

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  fake.url = `http://127.0.0.1:${port}/v1`;
  fake.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return fake;
}

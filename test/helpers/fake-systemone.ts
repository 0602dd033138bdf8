// A real HTTP server on 127.0.0.1 (ephemeral port) that speaks TypeSafe's System One wire
// (docs/flock.md §7): POST /v1/systemone with a Bearer key, {model, state, questions} in,
// {model, answers, usage} out. Tests script replies per request (status, delay, raw body) and per
// question (the answer), and read back every request the server saw. Reusable by nest tests to
// drive tagging and the watchdog with chosen answers.
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Question } from "../../src/classifier/jev.ts";

export interface FakeSystemOneCall {
  path: string;
  method: string;
  headers: http.IncomingHttpHeaders;
  body: { model?: string; state?: unknown; questions?: Record<string, Question> } & Record<string, unknown>;
}

export interface FakeSystemOneReply {
  status?: number;
  /** Wait this long before answering (to exercise timeouts). */
  delayMs?: number;
  /** Send this exact body instead of answers (to exercise malformed responses). */
  rawBody?: string;
}

/** The wire answer for one question; undefined leaves it out of the response. */
export type AnswerScript = (
  id: string,
  question: Question,
  call: FakeSystemOneCall,
) => Record<string, unknown> | undefined;
export type ReplyScript = (call: FakeSystemOneCall, index: number) => FakeSystemOneReply | Promise<FakeSystemOneReply>;

export interface FakeSystemOne {
  /** Base URL without /v1, for CROWS_JEV_BASE_URL. */
  url: string;
  calls: FakeSystemOneCall[];
  reply: ReplyScript;
  answer: AnswerScript;
  /** Sockets still open, so close() can end stalled ones. */
  close(): Promise<void>;
}

/** A confident answer of the right type: the first choice label at 0.9, noul 0.1, score 0. */
export const defaultAnswer: AnswerScript = (_id, question) => {
  if (question.type === "choice") {
    const labels = Object.keys(question.criteria);
    const rest = labels.length > 1 ? 0.1 / (labels.length - 1) : 0;
    return {
      type: "choice",
      choice: labels[0],
      confidence: 0.9,
      probabilities: Object.fromEntries(labels.map((l, i) => [l, i === 0 ? 0.9 : rest])),
    };
  }
  if (question.type === "noul") return { type: "noul", noul: 0.1 };
  return {
    type: "score",
    score: 0,
    confidence: 0.9,
    probabilities: { "0": 0.9 },
    legend: { "0": question.criteria[0] ?? "" },
  };
};

/** Answers for chosen questions (a choice label or a noul value), the default for the rest. */
export function scripted(table: Record<string, string | number>): AnswerScript {
  return (id, question, call) => {
    const want = table[id];
    if (want === undefined) return defaultAnswer(id, question, call);
    if (question.type === "noul" && typeof want === "number") return { type: "noul", noul: want };
    if (question.type === "choice" && typeof want === "string") {
      const labels = Object.keys(question.criteria);
      const rest = labels.length > 1 ? 0.05 / (labels.length - 1) : 0;
      return {
        type: "choice",
        choice: want,
        confidence: 0.95,
        probabilities: Object.fromEntries(labels.map((l) => [l, l === want ? 0.95 : rest])),
      };
    }
    return defaultAnswer(id, question, call);
  };
}

export async function startFakeSystemOne(
  options: { apiKey?: string; reply?: ReplyScript; answer?: AnswerScript } = {},
): Promise<FakeSystemOne> {
  const calls: FakeSystemOneCall[] = [];
  const sockets = new Set<import("node:net").Socket>();
  const fake = {
    url: "",
    calls,
    reply: options.reply ?? (() => ({})),
    answer: options.answer ?? defaultAnswer,
  } as FakeSystemOne;
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    let body: FakeSystemOneCall["body"] = {};
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}");
    } catch {
      res.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ error: "bad json" }));
      return;
    }
    const call: FakeSystemOneCall = { path: req.url ?? "", method: req.method ?? "", headers: req.headers, body };
    calls.push(call);
    const reply = await fake.reply(call, calls.length - 1);
    if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
    if (res.destroyed) return;
    if (options.apiKey !== undefined && req.headers.authorization !== `Bearer ${options.apiKey}`) {
      res.writeHead(401, { "content-type": "application/json" }).end(JSON.stringify({ error: "unauthorized" }));
      return;
    }
    if (call.path !== "/v1/systemone" || call.method !== "POST") {
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: "not found" }));
      return;
    }
    const status = reply.status ?? 200;
    if (reply.rawBody !== undefined || status !== 200) {
      res
        .writeHead(status, { "content-type": "application/json" })
        .end(reply.rawBody ?? JSON.stringify({ error: `status ${status}` }));
      return;
    }
    const answers: Record<string, unknown> = {};
    for (const [id, question] of Object.entries(body.questions ?? {})) {
      const a = fake.answer(id, question, call);
      if (a !== undefined) answers[id] = a;
    }
    res.writeHead(200, { "content-type": "application/json" }).end(
      JSON.stringify({
        model: body.model,
        answers,
        usage: { input_tokens: 42, output_tokens: Object.keys(answers).length },
      }),
    );
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
  return fake;
}

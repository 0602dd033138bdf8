// One HTTP POST of a delivery: the Standard Webhooks headers, a whole-send timeout (connect,
// answer and body: a hanging receiver holds only this send), every address the name resolves to
// checked against the target rules at connect time (targets.ts), and the answer reduced to what an
// attempt records: status, Retry-After, and a short excerpt of the body with the secrets cut out.
import dns from "node:dns";
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { isIP } from "node:net";
import { classify, refusalOf } from "./targets.ts";

export interface SendResult {
  /** The HTTP status, or null when no answer came (refused, reset, timed out, refused target). */
  status: number | null;
  retryAfter: string | undefined;
  durationMs: number;
  /** What went wrong, short, with no secret and no request body; undefined on a 2xx. */
  error: string | undefined;
}

const EXCERPT_CHARS = 200;
const MAX_ANSWER_BYTES = 64 * 1024;

/** A lookup that refuses the addresses the target rules forbid, so a name cannot lead somewhere it may not. */
function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, "", 0);
      const list = addresses as dns.LookupAddress[];
      for (const entry of list) {
        const refusal = refusalOf(classify(entry.address), allowPrivate);
        if (refusal)
          return callback(Object.assign(new Error(`target refused: ${refusal}`), { code: "ECROWSTARGET" }), "", 0);
      }
      if ((options as { all?: boolean }).all)
        return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, list);
      callback(null, list[0]!.address, list[0]!.family);
    });
  };
}

/** The text with every secret cut out (a receiver could echo a header or a key back). */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret) out = out.split(secret).join("[redacted]");
    const key = secret.startsWith("whsec_") ? secret.slice(6) : "";
    if (key) out = out.split(key).join("[redacted]");
  }
  return out.replace(/[\u0000-\u001f\u007f]+/g, " ").slice(0, EXCERPT_CHARS);
}

/**
 * Keep-alive agents for one sender: a receiver's connection is reused across its deliveries (a
 * connection's address was checked when it was made). Free sockets do not hold the process open.
 */
export function sendAgents(): { http: http.Agent; https: https.Agent; destroy(): void } {
  const options = { keepAlive: true, maxSockets: 16, timeout: 60_000 };
  const agents = { http: new http.Agent(options), https: new https.Agent(options) };
  return { ...agents, destroy: () => (agents.http.destroy(), agents.https.destroy()) };
}

export function send(
  url: URL,
  headers: Record<string, string>,
  body: string,
  options: {
    timeoutMs: number;
    allowPrivate: boolean;
    secrets: readonly string[];
    agents: { http: http.Agent; https: https.Agent };
    /** The body's type: the endpoint's format's (formats.ts; JSON by default), or an A2A push's application/a2a+json. */
    contentType?: string;
  },
): Promise<SendResult> {
  const started = performance.now();
  const took = () => Math.round(performance.now() - started);
  const host = url.hostname.replace(/^\[|\]$/g, "");
  return new Promise<SendResult>((resolve) => {
    let settled = false;
    const finish = (result: Omit<SendResult, "durationMs">) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...result, durationMs: took() });
    };
    // An IP literal never goes through lookup: check it here.
    if (isIP(host)) {
      const refusal = refusalOf(classify(host), options.allowPrivate);
      if (refusal)
        return resolve({ status: null, retryAfter: undefined, durationMs: 0, error: `target refused: ${refusal}` });
    }
    const secure = url.protocol === "https:";
    const transport = secure ? https : http;
    const request = transport.request(
      url,
      {
        method: "POST",
        headers: {
          ...headers,
          "content-type": options.contentType ?? "application/json",
          "content-length": String(Buffer.byteLength(body)),
          "user-agent": "crows-webhooks",
        },
        lookup: guardedLookup(options.allowPrivate),
        agent: secure ? options.agents.https : options.agents.http,
      },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on("data", (chunk: Buffer) => {
          if (size < MAX_ANSWER_BYTES) chunks.push(chunk);
          size += chunk.length;
        });
        response.on("error", (error) =>
          finish({
            status: null,
            retryAfter: undefined,
            error: redact(`answer broke off: ${error.message}`, options.secrets),
          }),
        );
        response.on("end", () => {
          const status = response.statusCode ?? 0;
          const ok = status >= 200 && status < 300;
          const text = Buffer.concat(chunks).toString("utf8");
          const retryAfter = response.headers["retry-after"];
          finish({
            status,
            retryAfter: typeof retryAfter === "string" ? retryAfter : undefined,
            error: ok ? undefined : redact(`HTTP ${status}${text ? `: ${text}` : ""}`, options.secrets),
          });
        });
      },
    );
    const timer = setTimeout(() => {
      finish({ status: null, retryAfter: undefined, error: `no answer within ${options.timeoutMs / 1000} s` });
      request.destroy();
    }, options.timeoutMs);
    request.on("error", (error: NodeJS.ErrnoException) =>
      finish({
        status: null,
        retryAfter: undefined,
        error: redact(
          error.code === "ECROWSTARGET" ? error.message : `${error.code ?? "error"}: ${error.message}`,
          options.secrets,
        ),
      }),
    );
    request.end(body);
  });
}

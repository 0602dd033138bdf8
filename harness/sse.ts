// One small SSE client for tests: reads a text/event-stream over fetch and hands back parsed
// messages (id, event, data as JSON) and comments (heartbeats), waiting for the ones a test wants.
export interface SseMessage {
  id: string | undefined;
  event: string;
  /** The data line(s) as text, exactly as received. */
  raw: string;
  data: any;
}

export interface SseComment {
  comment: string;
}

export interface SseFields {
  /** A block that sets fields (retry:) and carries no data: not an event. */
  fields: string;
}

export type SseRecord = SseMessage | SseComment | SseFields;

export interface SseClient {
  status: number;
  headers: Headers;
  /** Every message and comment received so far, in order. */
  records: SseRecord[];
  /** Resolves with the first message (from the start of the stream) matching `where`. */
  waitFor(where: (m: SseMessage) => boolean, timeoutMs?: number): Promise<SseMessage>;
  /** Resolves once `count` messages have arrived. */
  waitForCount(count: number, timeoutMs?: number): Promise<SseMessage[]>;
  waitForComment(timeoutMs?: number): Promise<SseComment>;
  /** Resolves with the first comment (a heartbeat) received after this call, so a later one than any before. */
  waitForNextComment(timeoutMs?: number): Promise<SseComment>;
  messages(): SseMessage[];
  /** True once the server ended the stream (or close() was called). */
  ended(): boolean;
  /** The raw bytes received, for framing checks. */
  text(): string;
  close(): void;
}

export interface SseInit {
  lastEventId?: string;
  headers?: Record<string, string>;
  /** A JSON body makes it a POST (GraphQL subscriptions over SSE). */
  json?: unknown;
}

export async function openSse(url: string, init: SseInit = {}): Promise<SseClient> {
  const abort = new AbortController();
  const headers: Record<string, string> = { accept: "text/event-stream", ...init.headers };
  if (init.lastEventId !== undefined) headers["last-event-id"] = init.lastEventId;
  if (init.json !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(url, {
    method: init.json === undefined ? "GET" : "POST",
    headers,
    body: init.json === undefined ? undefined : JSON.stringify(init.json),
    signal: abort.signal,
  });
  const records: SseRecord[] = [];
  let rawText = "";
  const waiters = new Set<() => void>();
  const notify = () =>
    waiters.forEach((w) => {
      w();
    });
  let ended = false;

  if (response.body && (response.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
    void (async () => {
      const decoder = new TextDecoder();
      let buffer = "";
      try {
        for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
          const text = decoder.decode(chunk, { stream: true });
          rawText += text;
          buffer += text;
          let end: number;
          while ((end = buffer.indexOf("\n\n")) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            records.push(parseBlock(block));
          }
          notify();
        }
      } catch {
        // aborted by close()
      } finally {
        ended = true;
        notify();
      }
    })();
  }

  const messages = () => records.filter((r): r is SseMessage => "event" in r);
  function wait<T>(find: () => T | undefined, timeoutMs: number, what: string): Promise<T> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = find();
        if (found !== undefined) {
          cleanup();
          resolve(found);
        } else if (ended) {
          cleanup();
          reject(
            new Error(
              `stream ended before ${what}; got ${messages()
                .map((m) => m.event)
                .join(", ")}`,
            ),
          );
        }
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(
          new Error(
            `timed out waiting for ${what}; got ${messages()
              .map((m) => `${m.id}:${m.event}`)
              .join(", ")}`,
          ),
        );
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        waiters.delete(check);
      };
      waiters.add(check);
      check();
    });
  }

  return {
    status: response.status,
    headers: response.headers,
    records,
    messages,
    text: () => rawText,
    ended: () => ended,
    waitFor: (where, timeoutMs = 10_000) => wait(() => messages().find(where), timeoutMs, "a matching message"),
    waitForCount: (count, timeoutMs = 10_000) =>
      wait(() => (messages().length >= count ? messages().slice(0, count) : undefined), timeoutMs, `${count} messages`),
    waitForComment: (timeoutMs = 10_000) =>
      wait(() => records.find((r): r is SseComment => "comment" in r), timeoutMs, "a comment"),
    waitForNextComment: (timeoutMs = 10_000) => {
      const from = records.length;
      return wait(() => records.slice(from).find((r): r is SseComment => "comment" in r), timeoutMs, "a later comment");
    },
    close: () => abort.abort(),
  };
}

function parseBlock(block: string): SseRecord {
  let id: string | undefined;
  let event = "message";
  const data: string[] = [];
  const comments: string[] = [];
  for (const line of block.split("\n")) {
    if (line.startsWith(":")) comments.push(line.slice(1).trim());
    else if (line.startsWith("id:")) id = line.slice(3).trim();
    else if (line.startsWith("event:")) event = line.slice(6).trim();
    else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
  }
  if (data.length === 0 && comments.length > 0) return { comment: comments.join("\n") };
  // A block with no data is no event (a `retry:` field on its own): the browser dispatches nothing.
  if (data.length === 0) return { fields: block };
  const raw = data.join("\n");
  let parsed: unknown = raw === "" ? null : raw;
  try {
    parsed = JSON.parse(raw);
  } catch {
    // not JSON: leave the text
  }
  return { id, event, raw, data: parsed };
}

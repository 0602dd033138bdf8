// The SSE core, transport-agnostic: it turns a stream of the durable log into `[body, init]`, where
// body is an async iterable of wire chunks and init the status and headers. Adapters (node:http in
// src/server/http.ts, or a fetch Response) only copy them out. The wire rules are in SSE-PROTOCOL.md.
import type { EventLog, StoredEvent } from "../src/log/event-log.ts";

export interface SseInit {
  status: number;
  headers: Record<string, string>;
}

export interface SseOptions {
  log: EventLog;
  stream: string;
  afterSeq: number;
  heartbeatMs: number;
  signal: AbortSignal;
  /** The `id:` a stored event goes out with (a nest uses the msg number). */
  idOf?: (event: StoredEvent) => string;
}

export function frame(id: string, name: string, data: string): string {
  return `id: ${id}\nevent: ${name}\ndata: ${data}\n\n`;
}

export const HEARTBEAT = ": heartbeat\n\n";

/** How long a client waits before it reconnects after a dropped stream (SSE-PROTOCOL.md). */
export const RETRY_MS = 2000;

/** The first thing a stream sends: the reconnection delay, as its own field block (no event). */
export const OPENING = `retry: ${RETRY_MS}\n\n`;

export function eventStream(options: SseOptions): [AsyncIterable<string>, SseInit] {
  const init: SseInit = {
    status: 200,
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    },
  };
  return [merge(options), init];
}

// Interleaves log events with heartbeats until the client goes or the server closes.
async function* merge({ log, stream, afterSeq, heartbeatMs, signal, idOf }: SseOptions): AsyncGenerator<string> {
  const events = log.follow(stream, afterSeq, signal)[Symbol.asyncIterator]();
  let nextEvent = events.next();
  let timer: NodeJS.Timeout | undefined;
  try {
    yield OPENING;
    while (!signal.aborted) {
      const beat = new Promise<"beat">((resolve) => {
        timer = setTimeout(() => resolve("beat"), heartbeatMs);
      });
      const result = await Promise.race([nextEvent, beat]);
      clearTimeout(timer);
      if (result === "beat") {
        yield HEARTBEAT;
        continue;
      }
      if (result.done) return;
      const event = result.value;
      yield frame(idOf ? idOf(event) : String(event.seq), event.name, event.payload);
      nextEvent = events.next();
    }
  } finally {
    clearTimeout(timer);
    await events.return?.(undefined);
  }
}

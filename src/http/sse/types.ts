// What an SSE stream is to a transport: a status and headers (SseInit), and a body that writes onto a
// sink (SseBody, SseSink). The REST streams (compat/sse.ts) and GraphQL's SSE both produce them;
// node-writer.ts puts one onto a node:http response.
export interface SseInit {
  status: number;
  headers: Record<string, string>;
}

/** Where a stream's bytes go: a socket, or anything that says when it is full. */
export interface SseSink {
  /** false: the client is behind; wait for drained() before writing more. */
  write(chunk: Buffer): boolean;
  /** Resolves once the client has taken what was written, or has gone. */
  drained(): Promise<void>;
  end(): void;
  /** Cuts the response off unfinished, so a client cannot take a failed body for a whole one (a sink without it just ends). */
  abort?(): void;
  readonly closed: boolean;
}

export interface SseBody {
  /** Starts writing onto `sink`; the returned function stops (call it when the client goes). */
  start(sink: SseSink): () => void;
}

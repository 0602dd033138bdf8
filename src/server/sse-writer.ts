// The node:http adapter for compat/sse.ts: copies a stream's status, headers and chunks onto a
// ServerResponse. A slow client is waited for ('drain'), but a client that goes away while it is
// not reading ends the wait too ('close'): otherwise its follower would stay attached for good.
import type http from "node:http";
import type { SseInit } from "../../compat/sse.ts";

export async function writeSse(
  res: http.ServerResponse,
  stream: AsyncIterable<string | Buffer>,
  init: SseInit,
  logLine: (line: string) => void,
): Promise<void> {
  res.writeHead(init.status, init.headers);
  res.flushHeaders();
  try {
    for await (const chunk of stream) {
      if (res.destroyed) break;
      if (!res.write(chunk)) await drainedOrClosed(res);
      if (res.destroyed) break; // leaving the loop returns the stream, which detaches its follower
    }
  } catch (error) {
    logLine(`compat: stream ended with an error: ${(error as Error).message}`);
  } finally {
    res.end();
  }
}

function drainedOrClosed(res: http.ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
    if (res.destroyed) done();
  });
}

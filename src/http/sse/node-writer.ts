// The node:http adapter for an SSE stream (types.ts; compat/sse.ts and GraphQL make them): copies a stream's status and headers onto a
// ServerResponse and lets the stream write onto it. A slow client is waited for ('drain'), but a
// client that goes away while it is not reading ends the wait too ('close'), and its going stops
// the stream: otherwise its follower would stay attached for good.
import type http from "node:http";
import type { SseBody, SseInit, SseSink } from "./types.ts";

export function writeSse(res: http.ServerResponse, body: SseBody, init: SseInit): Promise<void> {
  res.writeHead(init.status, init.headers);
  const sink: SseSink = {
    write: (chunk) => (res.destroyed ? false : res.write(chunk)),
    drained: () => drainedOrClosed(res),
    end: () => res.end(),
    abort: () => res.destroy(),
    get closed() {
      return res.destroyed || res.writableEnded;
    },
  };
  return new Promise((resolve) => {
    const stop = body.start(sink);
    if (res.destroyed) {
      stop();
      resolve();
      return;
    }
    res.once("close", () => {
      stop();
      resolve();
    });
  });
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

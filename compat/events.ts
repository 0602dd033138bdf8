// GET /api/events?list_id=<id> (or ?nest_id=<id>): the SSE stream of a list's events or a nest's
// messages, replayed from the durable log after Last-Event-ID, then live. Wire rules: SSE-PROTOCOL.md.
// A Last-Event-ID the stream never sent (malformed, or past its end) is a 400 naming the last id.
import { HttpError } from "../src/http/http-error.ts";
import type { Route } from "./router.ts";
import type { App } from "../src/app.ts";
import { eventStream } from "./sse.ts";
import { resumePoint } from "../src/log/cursor.ts";
import { listStream, msgIdOf, msgIdPrefix, nestStream } from "../src/base/streams.ts";
import { describeError } from "../src/base/describe-error.ts";

const streamError = (app: App) => (error: unknown) =>
  app.logLine(`compat: stream ended with an error: ${describeError(error)}`);

export const eventRoutes: Route[] = [
  {
    method: "GET",
    path: "/api/events",
    async handle(app, request) {
      const listId = request.query.get("list_id");
      const nestId = request.query.get("nest_id");
      if (!listId && !nestId) throw new HttpError(400, "Give ?list_id=<id> or ?nest_id=<id>.");
      if (listId && nestId) throw new HttpError(400, "Give either list_id or nest_id, not both.");
      const rawLastId = request.headers["last-event-id"] ?? request.query.get("last_event_id");
      if (listId) {
        if (!(await app.flock.listExists(listId))) throw new HttpError(404, `No list ${listId}.`);
        const afterSeq = await resumePoint(
          rawLastId,
          { lastSeq: () => app.log.lastSeq(listStream(listId)) },
          "Last-Event-ID",
        );
        if (typeof afterSeq !== "number") throw new HttpError(400, afterSeq.refused);
        const [stream, init] = eventStream({
          log: app.log,
          stream: listStream(listId),
          afterSeq,
          heartbeatMs: app.config.heartbeatMs,
          signal: request.signal,
          onError: streamError(app),
        });
        return { stream, init };
      }
      const nest = nestId!;
      await app.nests.require(nest); // 404 for an unknown nest
      const afterSeq = await resumePoint(
        rawLastId,
        { lastSeq: () => app.log.lastSeq(nestStream(nest)), idOf: (seq) => msgIdOf(nest, seq), prefix: nest },
        "Last-Event-ID",
      );
      if (typeof afterSeq !== "number") throw new HttpError(400, afterSeq.refused);
      const [stream, init] = eventStream({
        log: app.log,
        stream: nestStream(nest),
        afterSeq,
        heartbeatMs: app.config.heartbeatMs,
        signal: request.signal,
        idPrefix: msgIdPrefix(nest),
        onError: streamError(app),
      });
      return { stream, init };
    },
  },
];

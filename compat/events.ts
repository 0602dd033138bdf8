// GET /api/events?list_id=<id> (or ?nest_id=<id>): the SSE stream of a list's events or a nest's
// messages, replayed from the durable log after Last-Event-ID, then live. Wire rules: SSE-PROTOCOL.md.
// A Last-Event-ID the stream never sent (malformed, or past its end) is a 400 naming the last id.
import { z } from "zod";
import { HttpError } from "../src/http/http-error.ts";
import { defineRoute } from "./route.ts";
import { refused } from "./responses.ts";
import { described } from "./query-params.ts";
import type { App } from "../src/app.ts";
import { eventStream } from "./sse.ts";
import { resumePoint } from "../src/log/cursor.ts";
import { listStream, msgIdOf, msgIdPrefix, nestStream } from "../src/base/streams.ts";
import { describeError } from "../src/base/describe-error.ts";

const streamError = (app: App) => (error: unknown) =>
  app.logLine(`compat: stream ended with an error: ${describeError(error)}`);

const sse = (description: string) => ({
  description,
  contentType: "text/event-stream",
  schema: z
    .string()
    .describe(
      "SSE frames: id: <seq or msg_id>, event: <name>, data: <payload JSON>; `: heartbeat` comments between (compat/SSE-PROTOCOL.md).",
    ),
});

export const eventRoutes = [
  defineRoute({
    method: "GET",
    path: "/api/events",
    scope: "read",
    operationId: "streamEvents",
    summary: "A list's events, or a nest's messages, as a resumable SSE stream",
    tags: ["streams"],
    // Read here with URLSearchParams.get (the first of repeats), as the stream always has.
    handlerQuery: {
      list_id: described(z.string(), "The list to follow (or nest_id, not both)."),
      nest_id: described(z.string(), "The nest to follow (or list_id, not both)."),
      last_event_id: described(z.string(), "Resume after this id (the Last-Event-ID header wins)."),
    },
    handlerHeaders: {
      "Last-Event-ID": z.string().describe("Resume after this id: a seq (lists) or a msg_id (nests)."),
    },
    responses: {
      "200": sse("Stored events after the resume point, then live ones; the stream stays open."),
      "400": refused("Neither or both of list_id and nest_id, or a resume point the stream never sent."),
      "404": refused("An unknown list or nest."),
    },
    async handle(app, _input, request) {
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
  }),
];

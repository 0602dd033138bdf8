// POST /api/lists, POST /api/verdicts, GET /api/events (a list's or a nest's SSE stream).
import { body, json, query, ref, refusal, type Paths } from "./types.ts";

const sse = (description: string) => ({
  description,
  content: {
    "text/event-stream": {
      schema: {
        type: "string",
        description:
          "SSE frames: id: <seq or msg_id>, event: <name>, data: <payload JSON>; `: heartbeat` comments between (compat/SSE-PROTOCOL.md).",
      },
    },
  },
});

export const listPaths: Paths = {
  "/api/lists": {
    post: {
      operationId: "postList",
      summary: "Hand a todo list to the flock",
      tags: ["lists"],
      requestBody: body(ref("ListInput")),
      responses: {
        "202": json("Accepted: follow it on /api/events?list_id=.", ref("ListAccepted")),
        "400": refusal("A bad body."),
        "404": refusal("An unknown nest."),
        "429": json("The requester is pranked: a cooldown.", ref("RateLimited")),
      },
    },
  },
  "/api/verdicts": {
    post: {
      operationId: "postVerdict",
      summary: "The owner's answer to a pending approval",
      tags: ["lists"],
      requestBody: body(ref("VerdictInput")),
      responses: {
        "204": { description: "Recorded." },
        "400": refusal("A bad body (approve is required)."),
        "404": refusal("Nothing is waiting (a second answer too)."),
      },
    },
  },
  "/api/events": {
    get: {
      operationId: "streamEvents",
      summary: "A list's events, or a nest's messages, as a resumable SSE stream",
      tags: ["streams"],
      parameters: [
        query("list_id", "The list to follow (or nest_id, not both).", { type: "string" }),
        query("nest_id", "The nest to follow (or list_id, not both).", { type: "string" }),
        query("last_event_id", "Resume after this id (the Last-Event-ID header wins).", { type: "string" }),
        {
          name: "Last-Event-ID",
          in: "header",
          required: false,
          description: "Resume after this id: a seq (lists) or a msg_id (nests).",
          schema: { type: "string" },
        },
      ],
      responses: {
        "200": sse("Stored events after the resume point, then live ones; the stream stays open."),
        "400": refusal("Neither or both of list_id and nest_id, or a resume point the stream never sent."),
        "404": refusal("An unknown list or nest."),
      },
    },
  },
};

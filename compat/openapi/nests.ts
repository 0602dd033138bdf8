// GET/POST /api/nests, GET/POST /api/nests/{nest_id}/messages.
import { body, json, query, ref, refusal, type Paths } from "./types.ts";

const nestId = {
  name: "nest_id",
  in: "path",
  required: true,
  description: "The nest's id (a slug of its name; todo is the default nest).",
  schema: { type: "string" },
};

export const nestPaths: Paths = {
  "/api/nests": {
    get: {
      operationId: "getNests",
      summary: "The roster and every nest, todo first",
      tags: ["nests"],
      responses: { "200": json("The nests.", ref("Nests")) },
    },
    post: {
      operationId: "postNest",
      summary: "Create a nest",
      tags: ["nests"],
      requestBody: body(ref("NestInput")),
      responses: {
        "201": json("The nest.", ref("Nest")),
        "400": refusal("A bad name or crew."),
        "409": refusal("The name is taken."),
      },
    },
  },
  "/api/nests/{nest_id}/messages": {
    get: {
      operationId: "getNestMessages",
      summary: "A nest's message records in msg_id order: every one, or a page of the newest",
      tags: ["nests"],
      parameters: [
        nestId,
        query("limit", "Only the newest N (still in msg_id order).", { type: "integer", minimum: 1, maximum: 100 }),
        query("before", "Only those before this msg_id (or its number); alone, pages 50.", { type: "string" }),
      ],
      responses: {
        "200": json("The records, with resolved as of the read.", { type: "array", items: ref("MessageRecord") }),
        "400": refusal("A bad limit or before."),
        "404": refusal("An unknown nest."),
      },
    },
    post: {
      operationId: "postNestMessage",
      summary: "Post a message",
      tags: ["nests"],
      parameters: [nestId],
      requestBody: body(ref("MessageInput")),
      responses: {
        "201": json("The stored record (server-assigned kind, tagged_by, msg_id).", ref("MessageRecord")),
        "400": refusal("Bad input."),
        "403": refusal("The crow author is quarantined."),
        "404": refusal("An unknown nest."),
        "429": json("The poster is rate-limited.", ref("RateLimited")),
      },
    },
  },
};

// GET /api/nests (the roster and every nest, todo first) and POST /api/nests (docs/contract.md "Nests").
// Guardrails live in the nest store; refusals leave through the one error handler.
import { z } from "zod";
import { ROSTER } from "../src/base/roster.ts";
import { checkCrowShape, checkNestName, type NestRecord } from "../src/nests/store.ts";
import { ref } from "./openapi/types.ts";
import { answer, refused } from "./responses.ts";
import { defineRoute, judgedBy } from "./route.ts";

export function nestWire(nest: NestRecord): { nest_id: string; name: string; crows: string[] } {
  return { nest_id: nest.id, name: nest.name, crows: [...nest.crows] };
}

/** Judged by the nest store's own checks (src/nests/store.ts), with their words and in their order. */
const NestInput = z.object({
  name: judgedBy(checkNestName, z.string()),
  crows: judgedBy(checkCrowShape, z.array(z.string())),
});

export const nestRoutes = [
  defineRoute({
    method: "GET",
    path: "/api/nests",
    scope: "read",
    operationId: "getNests",
    summary: "The roster and every nest, todo first",
    tags: ["nests"],
    responses: { "200": answer("The nests.", ref("Nests")) },
    async handle(app) {
      const nests = await app.nests.list();
      return { status: 200, json: { roster: [...ROSTER], nests: nests.map(nestWire) } };
    },
  }),
  defineRoute({
    method: "POST",
    path: "/api/nests",
    scope: "write",
    operationId: "postNest",
    summary: "Create a nest",
    tags: ["nests"],
    body: { schema: NestInput, name: "NestInput" },
    responses: {
      "201": answer("The nest.", ref("Nest")),
      "400": refused("A bad name or crew."),
      "409": refused("The name is taken."),
    },
    async handle(app, { body }) {
      const nest = await app.nests.create({ name: body.name, crows: body.crows });
      return { status: 201, json: nestWire(nest) };
    },
  }),
];

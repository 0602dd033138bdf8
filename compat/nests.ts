// GET /api/nests (the roster and every nest, todo first) and POST /api/nests (EVENTS.md "Nests").
// Guardrails live in the nest store; refusals leave through the one error handler.
import type { Route } from "./router.ts";
import { bodyObject } from "./router.ts";
import { ROSTER } from "../src/base/roster.ts";
import type { NestRecord } from "../src/nests/store.ts";

export function nestWire(nest: NestRecord): { nest_id: string; name: string; crows: string[] } {
  return { nest_id: nest.id, name: nest.name, crows: [...nest.crows] };
}

export const nestRoutes: Route[] = [
  {
    method: "GET",
    path: "/api/nests",
    async handle(app) {
      const nests = await app.nests.list();
      return { status: 200, json: { roster: [...ROSTER], nests: nests.map(nestWire) } };
    },
  },
  {
    method: "POST",
    path: "/api/nests",
    async handle(app, request) {
      const body = await bodyObject(request);
      const nest = await app.nests.create({ name: body.name, crows: body.crows });
      return { status: 201, json: nestWire(nest) };
    },
  },
];

// GET /api/crows: the spun-crow registry only, sorted by name (EVENTS.md "Personas and banter").
import type { Route } from "./router.ts";

export const crowRoutes: Route[] = [
  {
    method: "GET",
    path: "/api/crows",
    async handle(app) {
      const crows = await app.registry.list();
      return { status: 200, json: { crows: crows.map(({ name, persona, trust }) => ({ name, persona, trust })) } };
    },
  },
];

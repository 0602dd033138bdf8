// GET /api/trust: the whole ledger, each record with its counts and history (docs/api.md).
import type { Route } from "./router.ts";

export const trustRoutes: Route[] = [
  {
    method: "GET",
    path: "/api/trust",
    async handle(app) {
      return { status: 200, json: { ledger: await app.flock.trust.snapshot() } };
    },
  },
];

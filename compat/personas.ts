// GET /api/personas: every persona crow (the 8 workers, then Sentry, Elder, Quill, Boss) with
// exactly the four fields of the contract.
import { PERSONAS } from "../src/base/roster.ts";
import type { Route } from "./router.ts";

export const personaRoutes: Route[] = [
  {
    method: "GET",
    path: "/api/personas",
    async handle() {
      return {
        status: 200,
        json: PERSONAS.map(({ name, epithet, strength, backstory }) => ({ name, epithet, strength, backstory })),
      };
    },
  },
];

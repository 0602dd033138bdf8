// GET /api/crows: the spun-crow registry only, sorted by name (docs/contract.md "Personas and banter"), and
// GET /api/personas: every persona crow (the 8 workers, then Sentry, Elder, Quill, Boss) with
// exactly the four fields of the contract.
import { PERSONAS } from "../src/base/roster.ts";
import { ref } from "./openapi/types.ts";
import { answer } from "./responses.ts";
import { defineRoute } from "./route.ts";

export const personaRoutes = [
  defineRoute({
    method: "GET",
    path: "/api/personas",
    scope: "read",
    operationId: "getPersonas",
    summary: "Every persona crow: the 8 workers, then Sentry, Elder, Quill, Boss",
    tags: ["crows"],
    responses: { "200": answer("The personas.", { type: "array", items: ref("Persona") }) },
    async handle() {
      return {
        status: 200,
        json: PERSONAS.map(({ name, epithet, strength, backstory }) => ({ name, epithet, strength, backstory })),
      };
    },
  }),
];

export const crowRoutes = [
  defineRoute({
    method: "GET",
    path: "/api/crows",
    scope: "read",
    operationId: "getSpunCrows",
    summary: "The spun-crow registry, sorted by name",
    tags: ["crows"],
    responses: { "200": answer("The registry (never persona crows).", ref("SpunCrows")) },
    async handle(app) {
      const crows = await app.registry.list();
      return { status: 200, json: { crows: crows.map(({ name, persona, trust }) => ({ name, persona, trust })) } };
    },
  }),
];

// GET /api/personas and GET /api/crows.
import { json, ref, type Paths } from "./types.ts";

export const crowPaths: Paths = {
  "/api/personas": {
    get: {
      operationId: "getPersonas",
      summary: "Every persona crow: the 8 workers, then Sentry, Elder, Quill, Boss",
      tags: ["crows"],
      responses: { "200": json("The personas.", { type: "array", items: ref("Persona") }) },
    },
  },
  "/api/crows": {
    get: {
      operationId: "getSpunCrows",
      summary: "The spun-crow registry, sorted by name",
      tags: ["crows"],
      responses: { "200": json("The registry (never persona crows).", ref("SpunCrows")) },
    },
  },
};

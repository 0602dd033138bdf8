import path from "node:path";
import { defineConfig } from "prisma/config";

// Offline machines cannot download Prisma's native schema engine. `prisma generate` only checks that
// *a* schema-engine file exists (it never runs it), so point it at a stub that explains itself.
// Migrations go through scripts/migrate.mjs (the WebAssembly schema engine) instead.
process.env.PRISMA_SCHEMA_ENGINE_BINARY ??= path.join(import.meta.dirname, "scripts/no-schema-engine.sh");

export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  datasource: { url: process.env.DATABASE_URL ?? "file:./.crows/crows.db" },
});

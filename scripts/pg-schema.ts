// Writes prisma/postgres/schema.prisma from prisma/schema.prisma, the single source of truth.
// A generated Prisma client is provider-specific, so PostgreSQL needs its own schema file: the same
// models with provider "postgresql", a client generated into src/generated/prisma-pg, and no
// Pothos generator (its types are shared with the SQLite client).
//   tsx scripts/pg-schema.ts          write it
//   tsx scripts/pg-schema.ts --check  exit 1 when the committed file is stale (CI)
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const SOURCE = path.join(ROOT, "prisma/schema.prisma");
const TARGET = path.join(ROOT, "prisma/postgres/schema.prisma");

export function postgresVariant(sqlite: string): string {
  const blocks = sqlite.replace(/\r\n/g, "\n");
  const withoutPothos = blocks.replace(/generator\s+pothos\s*\{[^}]*\}\n*/, "");
  const client = withoutPothos.replace(
    /(generator\s+client\s*\{[^}]*output\s*=\s*)"[^"]*"/,
    '$1"../../src/generated/prisma-pg"',
  );
  const provider = client.replace(/(datasource\s+db\s*\{[^}]*provider\s*=\s*)"sqlite"/, '$1"postgresql"');
  for (const [changed, what] of [
    [withoutPothos !== blocks, "generator pothos"],
    [client !== withoutPothos, "generator client output"],
    [provider !== client, 'datasource provider "sqlite"'],
  ] as const) {
    if (!changed) throw new Error(`scripts/pg-schema.ts: could not find ${what} in prisma/schema.prisma`);
  }
  return `// GENERATED from prisma/schema.prisma by scripts/pg-schema.ts (npm run db:pg-schema). Do not edit:\n// change prisma/schema.prisma, then regenerate this file and add a migration for both providers.\n\n${provider}`;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const wanted = postgresVariant(readFileSync(SOURCE, "utf8"));
  if (process.argv.includes("--check")) {
    let current = "";
    try {
      current = readFileSync(TARGET, "utf8");
    } catch {}
    if (current !== wanted) {
      console.error("prisma/postgres/schema.prisma is stale: run `npm run db:pg-schema` and commit it.");
      process.exitCode = 1;
    } else console.log("prisma/postgres/schema.prisma matches prisma/schema.prisma.");
  } else {
    mkdirSync(path.dirname(TARGET), { recursive: true });
    writeFileSync(TARGET, wanted);
  }
}

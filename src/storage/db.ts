// Opens the database: SQLite through better-sqlite3 by default (a file in the data folder), with
// the committed migrations applied before anything reads it.
import { mkdirSync, chmodSync } from "node:fs";
import path from "node:path";
import { PrismaBetterSqlite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaClient } from "../generated/prisma/client.ts";
import type { Config } from "../config.ts";
import { ConfigError } from "../config.ts";
import { deployMigrations } from "./migrate.ts";

export type { PrismaClient };

export function ensureDataDir(dataDir: string): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  chmodSync(dataDir, 0o700);
}

export async function openDatabase(config: Config): Promise<PrismaClient> {
  const url = config.databaseUrl;
  if (!url.startsWith("file:")) {
    // The generated client is built for SQLite; PostgreSQL needs the pg schema variant (docs/scaling.md).
    throw new ConfigError(`DATABASE_URL must be a file: URL in this build, got ${url.split(":")[0]}:`);
  }
  const file = url.slice("file:".length);
  if (file !== ":memory:") mkdirSync(path.dirname(path.resolve(file)), { recursive: true, mode: 0o700 });
  await deployMigrations(url);
  const adapter = new PrismaBetterSqlite3({ url });
  const prisma = new PrismaClient({ adapter });
  // WAL lets SSE readers run while the engine writes; a busy timeout rides out short write locks.
  await prisma.$queryRawUnsafe("PRAGMA journal_mode = WAL");
  await prisma.$queryRawUnsafe("PRAGMA busy_timeout = 5000");
  return prisma;
}

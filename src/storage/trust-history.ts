// A page of the trust ledger's history, read with one windowed query around Prisma's query builder.
// Why: the ledger asks for the newest n entries of every record; findMany can only return every
// entry (Prisma has no per-group limit), and turning a few hundred rows into objects cost more than
// the GraphQL answer that showed five of them. ROW_NUMBER() OVER (PARTITION BY ...) reads only the
// page, on SQLite (3.25+) and PostgreSQL alike; Prisma.sql keeps the placeholders per provider.
// Prisma stays the schema: this names the TrustEntry table's columns only.
import { Prisma, type PrismaClient } from "../generated/prisma/client.ts";

export interface TrustHistoryRow {
  id: number;
  holder: string;
  taskType: string;
  verdict: string;
  subject: string;
  from: number;
  to: number;
  at: Date;
}

export interface TrustHistoryPage {
  holder?: string | null;
  taskType?: string | null;
  /** The newest `last` entries of each record (all of them when absent)... */
  last?: number | null;
  /** ...among those with an id below `before`. */
  before?: number | null;
}

/** Each matching record's page of history, oldest first, in one query. */
export async function readTrustHistory(prisma: PrismaClient, page: TrustHistoryPage): Promise<TrustHistoryRow[]> {
  const conditions: Prisma.Sql[] = [];
  if (page.holder != null) conditions.push(Prisma.sql`"holder" = ${page.holder}`);
  if (page.taskType != null) conditions.push(Prisma.sql`"taskType" = ${page.taskType}`);
  if (page.before != null) conditions.push(Prisma.sql`"id" < ${page.before}`);
  const where = conditions.length === 0 ? Prisma.empty : Prisma.sql`WHERE ${Prisma.join(conditions, " AND ")}`;
  const columns = Prisma.raw(`"id", "holder", "taskType", "verdict", "subject", "from", "to", "at"`);
  const rows =
    page.last == null
      ? await prisma.$queryRaw<TrustHistoryRow[]>`SELECT ${columns} FROM "TrustEntry" ${where} ORDER BY "id"`
      : await prisma.$queryRaw<TrustHistoryRow[]>`
          SELECT ${columns} FROM (
            SELECT ${columns}, ROW_NUMBER() OVER (PARTITION BY "holder", "taskType" ORDER BY "id" DESC) AS "newest"
            FROM "TrustEntry" ${where}
          ) AS "paged" WHERE "newest" <= ${page.last} ORDER BY "id"`;
  // PostgreSQL's int4 and SQLite's integer both arrive as numbers; `at` as a Date on both.
  return rows.map((r) => ({ ...r, id: Number(r.id), from: Number(r.from), to: Number(r.to), at: r.at instanceof Date ? r.at : new Date(r.at) }));
}

// How a DateTime is written to SQLite around Prisma: Prisma's better-sqlite3 adapter stores it as
// ISO 8601 text with +00:00, so the statements that go around Prisma write the same text.
export const sqliteTs = (date: Date): string => date.toISOString().replace("Z", "+00:00");

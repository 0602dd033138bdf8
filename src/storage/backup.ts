// Backup, restore checks and the log's own invariants, on a SQLite database file (docs/operations.md
// "Backup and restore"). The copy is SQLite's online backup: a consistent snapshot taken page by
// page while a server keeps writing (it restarts on a write, WAL readers never block it). On
// PostgreSQL the same job is pg_dump's; these functions refuse anything but a file.
import { existsSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";

const MIGRATIONS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../prisma/migrations");

export interface BackupReport {
  file: string;
  bytes: number;
  events: number;
  last_event_id: number;
}

/** The names of the migrations this build carries (SQLite), in order. */
export function committedMigrations(): string[] {
  return readdirSync(MIGRATIONS, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
}

/** Copies the live database `source` to `target` (refused if it exists), written whole then renamed. */
export async function backupDatabase(source: string, target: string): Promise<BackupReport> {
  if (!existsSync(source)) throw new Error(`there is no database at ${source}`);
  if (existsSync(target)) throw new Error(`${target} exists; choose a new file name (a backup never overwrites)`);
  const partial = `${target}.partial`;
  rmSync(partial, { force: true });
  const db = new Database(source, { fileMustExist: true });
  try {
    db.pragma("busy_timeout = 5000");
    await db.backup(partial);
  } finally {
    db.close();
  }
  const copy = new Database(partial, { fileMustExist: true });
  let counts: { events: number; last: number | null };
  try {
    copy.pragma("journal_mode = DELETE"); // one self-contained file, no -wal beside it
    counts = copy.prepare("SELECT COUNT(*) AS events, MAX(id) AS last FROM Event").get() as {
      events: number;
      last: number | null;
    };
  } finally {
    copy.close();
  }
  renameSync(partial, target);
  return { file: target, bytes: statSync(target).size, events: counts.events, last_event_id: counts.last ?? 0 };
}

export interface CheckReport {
  ok: boolean;
  integrity: string[];
  events: number;
  last_event_id: number;
  /** Streams whose seqs are not 1..n without a hole. */
  seq_gaps: Array<{ stream: string; count: number; first: number; last: number }>;
  /** Approval rows whose item is gone, or still pending on a finished list. */
  orphan_approvals: Array<{ id: number; item_id: string; why: string }>;
  migrations: { applied: string[]; failed: string[]; unknown: string[]; pending: string[] };
}

/** The integrity check, the log's invariants and the migration state of a database file. */
export function checkDatabase(file: string): CheckReport {
  if (!existsSync(file)) throw new Error(`there is no database at ${file}`);
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const integrity = (db.pragma("integrity_check") as Array<{ integrity_check: string }>).map(
      (r) => r.integrity_check,
    );
    const hasTable = (name: string) =>
      db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;
    const migrations = migrationState(db, hasTable("_prisma_migrations"));
    if (!hasTable("Event")) {
      return { ok: false, integrity, events: 0, last_event_id: 0, seq_gaps: [], orphan_approvals: [], migrations };
    }
    const totals = db.prepare("SELECT COUNT(*) AS events, MAX(id) AS last FROM Event").get() as {
      events: number;
      last: number | null;
    };
    const seq_gaps = db
      .prepare(
        "SELECT stream, COUNT(*) AS count, MIN(seq) AS first, MAX(seq) AS last FROM Event GROUP BY stream HAVING MIN(seq) <> 1 OR MAX(seq) <> COUNT(*) ORDER BY stream",
      )
      .all() as CheckReport["seq_gaps"];
    const orphan_approvals = db
      .prepare(
        `SELECT a.id AS id, a.itemId AS item_id, CASE WHEN i.id IS NULL THEN 'its item does not exist' ELSE 'pending on a finished list' END AS why
         FROM Approval a LEFT JOIN Item i ON i.id = a.itemId LEFT JOIN TodoList l ON l.id = i.listId
         WHERE i.id IS NULL OR (a.status = 'pending' AND l.status = 'finished') ORDER BY a.id`,
      )
      .all() as CheckReport["orphan_approvals"];
    const ok =
      integrity.length === 1 &&
      integrity[0] === "ok" &&
      seq_gaps.length === 0 &&
      orphan_approvals.length === 0 &&
      migrations.failed.length === 0 &&
      migrations.unknown.length === 0;
    return {
      ok,
      integrity,
      events: totals.events,
      last_event_id: totals.last ?? 0,
      seq_gaps,
      orphan_approvals,
      migrations,
    };
  } finally {
    db.close();
  }
}

function migrationState(db: Database.Database, present: boolean): CheckReport["migrations"] {
  const known = committedMigrations();
  if (!present) return { applied: [], failed: [], unknown: [], pending: known };
  const rows = db
    .prepare(
      "SELECT migration_name AS name, finished_at AS finished, rolled_back_at AS rolledBack FROM _prisma_migrations ORDER BY migration_name",
    )
    .all() as Array<{ name: string; finished: unknown; rolledBack: unknown }>;
  const applied = rows.filter((r) => r.finished !== null && r.rolledBack === null).map((r) => r.name);
  const failed = rows.filter((r) => r.finished === null && r.rolledBack === null).map((r) => r.name);
  return {
    applied,
    failed,
    // Written by a newer crows than this one: it would not know how to read the rows.
    unknown: applied.filter((name) => !known.includes(name)),
    pending: known.filter((name) => !applied.includes(name)),
  };
}

/**
 * Puts `source` in place of the database `target` after checking it, keeping what it replaces
 * (the database and its -wal/-shm, renamed with `keptSuffix`). The caller has made sure no server
 * runs on the folder.
 */
export function restoreDatabase(
  source: string,
  target: string,
  keptSuffix: string,
): { kept: string | null; check: CheckReport } {
  let check: CheckReport;
  try {
    check = checkDatabase(source);
  } catch (error) {
    throw new RestoreRefused(
      `${source} cannot be read as a crows database (${(error as Error).message.split("\n")[0]})`,
    );
  }
  if (check.integrity.length !== 1 || check.integrity[0] !== "ok")
    throw new RestoreRefused(`${source} fails the integrity check: ${check.integrity.slice(0, 3).join("; ")}`);
  if (check.migrations.applied.length === 0)
    throw new RestoreRefused(`${source} is not a crows database (no applied migrations)`);
  if (check.migrations.failed.length > 0)
    throw new RestoreRefused(`${source} has a failed migration: ${check.migrations.failed.join(", ")}`);
  if (check.migrations.unknown.length > 0)
    throw new RestoreRefused(
      `${source} was written by a newer crows (migrations ${check.migrations.unknown.join(", ")} are unknown here); restore it with that version`,
    );
  const incoming = `${target}.restoring`;
  rmSync(incoming, { force: true });
  const db = new Database(source, { readonly: true, fileMustExist: true });
  try {
    // VACUUM INTO: a fresh, self-contained copy (any -wal of the source folded in).
    db.prepare("VACUUM INTO ?").run(incoming);
  } finally {
    db.close();
  }
  let kept: string | null = null;
  if (existsSync(target)) {
    kept = `${target}.${keptSuffix}`;
    for (const ext of ["", "-wal", "-shm"]) if (existsSync(target + ext)) renameSync(target + ext, kept + ext);
  }
  renameSync(incoming, target);
  return { kept, check };
}

export class RestoreRefused extends Error {}

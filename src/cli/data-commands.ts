// `crows backup FILE`, `crows restore FILE` and `crows check`: the database file of a data folder
// (docs/operations.md "Backup and restore"). SQLite only; on PostgreSQL each names pg_dump instead.
import path from "node:path";
import { loadConfig } from "../base/config.ts";
import { EXIT } from "../ops/exit.ts";
import { acquireLock, liveHolder } from "../ops/lock.ts";
import { dataFiles } from "../ops/paths.ts";
import { readServerState } from "../ops/state.ts";
import { sameProcessAlive } from "../ops/processes.ts";
import { backupDatabase, checkDatabase, restoreDatabase, RestoreRefused } from "../storage/backup.ts";
import { StartError } from "../storage/start-error.ts";
import { CommandError } from "./commands.ts";

function sqliteFile(): { file: string; dataDir: string } {
  const config = loadConfig(process.env);
  if (!config.databaseUrl.startsWith("file:")) {
    throw new CommandError(
      EXIT.usage,
      "postgresql",
      "DATABASE_URL is PostgreSQL: back it up with pg_dump and restore with pg_restore (docs/operations.md, Backup and restore)",
    );
  }
  return { file: path.resolve(config.databaseUrl.slice("file:".length)), dataDir: config.dataDir };
}

export async function backup(target: string) {
  const { file } = sqliteFile();
  try {
    return await backupDatabase(file, path.resolve(target));
  } catch (error) {
    throw new CommandError(EXIT.failed, "backup_failed", (error as Error).message.split("\n")[0] ?? "backup failed");
  }
}

export async function check() {
  const { file } = sqliteFile();
  return checkDatabase(file);
}

export async function restore(source: string) {
  const { file, dataDir } = sqliteFile();
  const files = dataFiles(dataDir);
  const refuse = (pid: number) =>
    new CommandError(
      EXIT.cannotRun,
      "server_running",
      `crows pid ${pid} runs on ${dataDir}; stop it first (crows stop), then restore`,
    );
  const holder = liveHolder(files);
  if (holder) throw refuse(holder.pid);
  const state = readServerState(files);
  if (state && !state.stopped && sameProcessAlive(state.pid, state.tick)) throw refuse(state.pid);
  // Held for the restore: a server started meanwhile refuses instead of opening a half-placed file.
  let lock: ReturnType<typeof acquireLock>;
  try {
    lock = acquireLock(files);
  } catch (error) {
    if (error instanceof StartError) throw new CommandError(EXIT.cannotRun, error.code, error.message);
    throw error;
  }
  try {
    const stamp = new Date().toISOString().replace(/[:.]/g, "-");
    const { kept, check } = restoreDatabase(path.resolve(source), file, `before-restore-${stamp}`);
    return {
      restored: file,
      from: path.resolve(source),
      kept,
      events: check.events,
      last_event_id: check.last_event_id,
      migrations_pending: check.migrations.pending,
    };
  } catch (error) {
    if (error instanceof RestoreRefused) throw new CommandError(EXIT.failed, "restore_refused", error.message);
    throw new CommandError(EXIT.failed, "restore_failed", (error as Error).message.split("\n")[0] ?? "restore failed");
  } finally {
    lock.release();
  }
}

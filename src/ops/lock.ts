// One server per data folder. server.lock is created exclusively (link(2)) and holds the holder's
// pid, its start tick and start time. A lock whose holder is gone (crashed, killed -9) is taken
// over (under a guard file, see takeOver); a live holder makes a second server refuse at once,
// naming the holder's pid and url.
import { openSync, closeSync, linkSync, readFileSync, unlinkSync, rmSync, statSync, writeFileSync } from "node:fs";
import { StartError } from "../storage/start-error.ts";
import { sameProcessAlive, startTickOf } from "./processes.ts";
import { readServerState } from "./state.ts";
import type { DataFiles } from "./paths.ts";

export interface LockRecord {
  pid: number;
  tick?: string;
  started: string;
}

export interface HeldLock {
  record: LockRecord;
  /** Removes the lock if this process still holds it. */
  release(): void;
}

export function readLock(files: DataFiles): LockRecord | undefined {
  try {
    const parsed = JSON.parse(readFileSync(files.lock, "utf8")) as Partial<LockRecord>;
    if (typeof parsed.pid !== "number" || typeof parsed.started !== "string") return undefined;
    return {
      pid: parsed.pid,
      tick: typeof parsed.tick === "string" ? parsed.tick : undefined,
      started: parsed.started,
    };
  } catch {
    return undefined;
  }
}

/** The live holder of the data folder, if any (not this process). */
export function liveHolder(files: DataFiles): LockRecord | undefined {
  const record = readLock(files);
  return record && sameProcessAlive(record.pid, record.tick) ? record : undefined;
}

export function acquireLock(files: DataFiles): HeldLock {
  const record: LockRecord = { pid: process.pid, tick: startTickOf(process.pid), started: new Date().toISOString() };
  for (let attempt = 0; attempt < 40; attempt++) {
    // Written whole to a temp file, then hard-linked into place: link() fails if the lock exists,
    // and a reader never sees a half-written lock.
    const temp = `${files.lock}.${process.pid}.tmp`;
    let linked = false;
    try {
      writeFileSync(temp, JSON.stringify(record) + "\n", { mode: 0o600 });
      linkSync(temp, files.lock);
      linked = true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") {
        throw new StartError(
          "data_dir",
          `the lock ${files.lock} cannot be written (${(error as NodeJS.ErrnoException).code ?? "error"})`,
        );
      }
    } finally {
      rmSync(temp, { force: true });
    }
    if (linked) {
      return {
        record,
        release: () => {
          if (readLock(files)?.pid === process.pid) {
            try {
              unlinkSync(files.lock);
            } catch {
              // already gone
            }
          }
        },
      };
    }
    const seen = readRaw(files.lock);
    const holder = readLock(files);
    if (holder && sameProcessAlive(holder.pid, holder.tick)) {
      const url = readServerState(files)?.url;
      throw new StartError(
        "folder_busy",
        `the data folder ${files.dir} is in use by crows pid ${holder.pid}${url ? ` at ${url}` : ""}; stop it first (crows stop) or choose another CROWS_DATA_DIR`,
      );
    }
    if (seen !== undefined) takeOver(files, seen);
  }
  throw new StartError(
    "folder_busy",
    `the data folder ${files.dir} is being taken by another crows at the same moment; try again`,
  );
}

/**
 * Removes a dead holder's lock, but only the one judged dead: under a guard file, and only if the
 * lock still reads the same. Two starters that both saw the same dead lock cannot remove each
 * other's fresh one.
 */
function takeOver(files: DataFiles, seen: string): void {
  const guard = `${files.lock}.takeover`;
  try {
    closeSync(openSync(guard, "wx", 0o600));
  } catch {
    // Another starter is taking over; a guard left by one that died mid-takeover expires.
    try {
      if (Date.now() - statSync(guard).mtimeMs > 5000) unlinkSync(guard);
    } catch {
      // gone already
    }
    sleep(10);
    return;
  }
  try {
    if (readRaw(files.lock) === seen) unlinkSync(files.lock);
  } catch {
    // removed already
  } finally {
    rmSync(guard, { force: true });
  }
}

function readRaw(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

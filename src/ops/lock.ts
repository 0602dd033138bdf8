// One server per data folder. server.lock is created exclusively (O_EXCL) and holds the holder's
// pid, its start tick and start time. A lock whose holder is gone (crashed, killed -9) is taken
// over; a live holder makes a second server refuse at once, naming the holder's pid and url.
import { openSync, writeSync, closeSync, readFileSync, unlinkSync } from "node:fs";
import { StartError } from "./start-error.ts";
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
    return { pid: parsed.pid, tick: typeof parsed.tick === "string" ? parsed.tick : undefined, started: parsed.started };
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
  // Two tries: the second after removing a dead holder's lock. Losing that race to another
  // starter means a live holder now, which the second try reports.
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(files.lock, "wx", 0o600);
      try {
        writeSync(fd, JSON.stringify(record) + "\n");
      } finally {
        closeSync(fd);
      }
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
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") {
        throw new StartError("data_dir", `the lock ${files.lock} cannot be written (${(error as NodeJS.ErrnoException).code ?? "error"})`);
      }
    }
    const holder = readLock(files);
    if (holder && sameProcessAlive(holder.pid, holder.tick)) {
      const url = readServerState(files)?.url;
      throw new StartError("folder_busy", `the data folder ${files.dir} is in use by crows pid ${holder.pid}${url ? ` at ${url}` : ""}; stop it first (crows stop) or choose another CROWS_DATA_DIR`);
    }
    if (!holder && attempt === 0) {
      // Unreadable: maybe a holder mid-write. Give it a moment before calling it stale.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
      const again = readLock(files);
      if (again) continue;
    }
    try {
      unlinkSync(files.lock); // the holder is gone: take the lock over
    } catch {
      // someone else removed it first
    }
  }
  throw new StartError("folder_busy", `the data folder ${files.dir} is being taken by another crows at the same moment; try again`);
}

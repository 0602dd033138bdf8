// The data folder, the database file and the lock must stay the ones this server opened. Removed
// (rm -rf) or replaced (moved aside, a new one in its place), the server would go on writing into
// files nobody can open again, and a second server could start beside it. Checked by inode once a
// second; the first difference is reported once, and serve.ts then stops (docs/operations.md
// "Failure modes").
import { accessSync, constants, statSync } from "node:fs";

export interface WatchedPath {
  what: string;
  path: string;
  /**
   * Checked for write access instead of identity (SQLite's -wal and -shm, recreated at will): an
   * -shm that cannot be written (immutable, read-only) makes SQLite's next access of its mapping a
   * SIGBUS, which no handler survives; stopping first leaves a line saying why.
   */
  mustBeWritable?: boolean;
}

interface Identity {
  dev: number;
  ino: number;
}

function identity(file: string): Identity | undefined {
  try {
    const { dev, ino } = statSync(file);
    return { dev, ino };
  } catch {
    return undefined;
  }
}

/** Starts watching; `onLost` is called once with what happened. Returns a stop function. */
export function watchDataFolder(
  paths: WatchedPath[],
  onLost: (why: string, how: "lost" | "unwritable") => void,
  everyMs = 1_000,
): () => void {
  const opened = paths.map((p) => ({ ...p, id: identity(p.path) }));
  let reported = false;
  const timer = setInterval(() => {
    if (reported) return;
    for (const p of opened) {
      if (p.mustBeWritable) {
        if (writable(p.path)) continue;
        reported = true;
        clearInterval(timer);
        onLost(
          `the ${p.what} ${p.path} cannot be written (immutable or read-only); the database would fail under the running server`,
          "unwritable",
        );
        return;
      }
      if (p.id === undefined) continue; // absent at start (a database on PostgreSQL): nothing to compare
      const now = identity(p.path);
      if (now !== undefined && now.dev === p.id.dev && now.ino === p.id.ino) continue;
      reported = true;
      clearInterval(timer);
      onLost(
        `the ${p.what} ${p.path} ${now === undefined ? "was removed" : "was replaced by another file"} under the running server`,
        "lost",
      );
      return;
    }
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** True when `file` is absent (nothing to map yet) or this process may write it. */
function writable(file: string): boolean {
  try {
    accessSync(file, constants.W_OK);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT";
  }
}

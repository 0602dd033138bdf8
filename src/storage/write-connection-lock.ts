// The lock on SQLite's one write connection, between Prisma's interactive transactions and the
// store's group commits: whoever holds it owns the connection and the seq counters (events/sqlite.ts;
// db.ts makes Prisma's startTransaction take it; read-version.ts watches it). With a writer lock
// (writer-lock.ts), holding it also means holding the database file's write lock against the
// webhook sender's thread.
import { SERVER_THREAD, type WriterLock } from "./writer-lock.ts";

/** A FIFO lock with a synchronous fast path. */
export class WriteConnectionLock {
  private locked = false;
  private readonly waiters: Array<() => void> = [];
  /** Times the lock was granted: a writer had the connection if this moved (read-version.ts). */
  grants = 0;

  constructor(private readonly fileLock?: WriterLock) {}

  get held(): boolean {
    return this.locked;
  }

  acquire(): Promise<() => void> {
    if (!this.locked) {
      this.locked = true;
      return this.grant();
    }
    return new Promise((resolve) => this.waiters.push(() => resolve(this.grant())));
  }

  private grant(): Promise<() => void> {
    if (!this.fileLock) return Promise.resolve(this.releaser());
    return this.fileLock.take(SERVER_THREAD).then(() => this.releaser());
  }

  private releaser(): () => void {
    this.grants += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      // The file lock is let go between holders, so the sender's thread gets its turn in a busy spell.
      this.fileLock?.release();
      const next = this.waiters.shift();
      if (next) next();
      else this.locked = false;
    };
  }
}

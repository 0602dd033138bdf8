// The gate between Prisma's interactive transactions and the store's group commits on SQLite's one
// write connection: whoever holds it owns the connection and the seq counters (events/sqlite.ts;
// db.ts makes Prisma's startTransaction take it; read-version.ts watches it).

/** A FIFO lock with a synchronous fast path. */
export class Gate {
  private locked = false;
  private readonly waiters: Array<() => void> = [];
  /** Times the gate was granted: a writer had the connection if this moved (read-version.ts). */
  grants = 0;

  get held(): boolean {
    return this.locked;
  }

  acquire(): Promise<() => void> {
    if (!this.locked) {
      this.locked = true;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve) => this.waiters.push(() => resolve(this.releaser())));
  }

  private releaser(): () => void {
    this.grants += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiters.shift();
      if (next) next();
      else this.locked = false;
    };
  }
}

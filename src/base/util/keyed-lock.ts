// Runs tasks one at a time per key (a read-modify-write on one row must not race itself).
export class KeyedLock {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    // The previous task's failure is its own caller's (it got `next`); this task runs regardless.
    const next = previous.catch(() => {}).then(task);
    this.tails.set(key, next);
    void next
      .finally(() => {
        if (this.tails.get(key) === next) this.tails.delete(key);
      })
      .catch(() => {}); // the caller sees the rejection through `next`; this chain only tidies up
    return next;
  }

  /** Resolves once every task already queued has settled. */
  async idle(): Promise<void> {
    while (this.tails.size > 0) await Promise.allSettled([...this.tails.values()]);
  }
}

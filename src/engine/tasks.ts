// Background work that stop() can wait for: a set of running promises, one abort signal, and a
// failure callback. It sits on the engine floor (docs/architecture.md) and knows nothing of what
// the work is.

/** Runs background tasks so a stop can wait for them; a task's failure goes to `onError`. */
export class TaskRunner {
  private readonly tasks = new Set<Promise<void>>();
  private readonly stopping = new AbortController();

  /** `onError` is not called once stopping: a task cut short by the stop is not a failure. */
  constructor(private readonly onError: (what: string, error: unknown) => void) {}

  /** Aborted when stop() is called: tasks give up their long waits. */
  get signal(): AbortSignal {
    return this.stopping.signal;
  }

  spawn(what: string, task: () => Promise<void>): void {
    if (this.stopping.signal.aborted) return;
    const run = task()
      .catch((error: unknown) => {
        if (!this.stopping.signal.aborted) this.onError(what, error);
      })
      .finally(() => this.tasks.delete(run));
    this.tasks.add(run);
  }

  /** Resolves once no task is left (including tasks that tasks started). */
  async idle(): Promise<void> {
    while (this.tasks.size > 0) await Promise.allSettled([...this.tasks]);
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    await this.idle();
  }
}

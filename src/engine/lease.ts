// One LeaseKeeper for rows several instances share (a running list, an open obligation): the
// ownerId/leaseUntil lease, a sweep every leaseMs / 3 that renews what this instance holds, lets go
// of what another took over, and takes what lapsed (docs/architecture.md "Scaling out"). The
// queries stay with the table's owner (LeaseTable); this file knows no table.

/** Rows this instance may take: its own, unowned, or with a lapsed lease. */
export interface LeaseWhere {
  OR: [{ ownerId: string }, { ownerId: null }, { leaseUntil: null }, { leaseUntil: { lt: Date } }];
}

/** What a leased table does; `H` is what the keeper keeps for each row it holds. */
export interface LeaseTable<H> {
  /** Extends to `until` the lease of those of `ids` that `owner` still owns. */
  renew(ids: string[], owner: string, until: Date): Promise<void>;
  /** Of `ids` (held here, just renewed), those to let go: taken over, done or gone. Logs why. */
  lost(ids: string[], heldValue: (id: string) => H | undefined): Promise<string[]>;
  /** Called for each row let go, once it has left the held set (`value` is gone if it left meanwhile). */
  letGo(id: string, value: H | undefined): void;
  /** Rows this instance may take now (matching `where`), in the order to take them. */
  claimable(where: LeaseWhere): Promise<string[]>;
  /** Takes up one claimable row not held here: claims it (LeaseKeeper.claim), then drives it. */
  take(id: string): Promise<void> | void;
  /**
   * One conditional update that gives `owner` the row if it matches `where` and grows its epoch by
   * one (storage/fence.ts); the epoch it won, or null when it lost.
   */
  claim(id: string, where: LeaseWhere, owner: string, until: Date): Promise<number | null>;
}

export interface LeaseKeeperOptions {
  instanceId: string;
  leaseMs: number;
  now: () => number;
  /** Once aborted, a sweep does nothing and no sweep is started. */
  signal: AbortSignal;
  /** A failed sweep: the next one retries, so the owner only reports it. */
  onSweepError: (error: unknown) => void;
}

export class LeaseKeeper<H> {
  private readonly held = new Map<string, H>();
  private sweeper: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;
  private sweepsFinished = 0;

  constructor(
    private readonly table: LeaseTable<H>,
    private readonly options: LeaseKeeperOptions,
  ) {}

  get instanceId(): string {
    return this.options.instanceId;
  }

  /** When a lease taken or renewed now ends. */
  leaseEnd(): Date {
    return new Date(this.options.now() + this.options.leaseMs);
  }

  /** Rows this instance may take: its own, unowned, or with a lapsed lease. */
  claimableWhere(): LeaseWhere {
    return {
      OR: [
        { ownerId: this.instanceId },
        { ownerId: null },
        { leaseUntil: null },
        { leaseUntil: { lt: new Date(this.options.now()) } },
      ],
    };
  }

  /**
   * Takes the row's lease if nobody else holds it: one conditional update, so one winner. Returns
   * the epoch this claim won (every write made under the lease carries it), null when it lost.
   */
  claim(id: string): Promise<number | null> {
    return this.table.claim(id, this.claimableWhere(), this.instanceId, this.leaseEnd());
  }

  hold(id: string, value: H): void {
    this.held.set(id, value);
  }

  holds(id: string): boolean {
    return this.held.has(id);
  }

  heldValue(id: string): H | undefined {
    return this.held.get(id);
  }

  release(id: string): void {
    this.held.delete(id);
  }

  /** The ids held here now (tests, diagnostics). */
  heldIds(): string[] {
    return [...this.held.keys()];
  }

  /** How many sweeps have finished (tests, diagnostics): one begun after a moment ends after it. */
  get sweepsDone(): number {
    return this.sweepsFinished;
  }

  /** One sweep now (taking up what this instance may drive), then one every leaseMs / 3. */
  async resume(): Promise<void> {
    await this.sweep();
    const every = Math.max(50, Math.floor(this.options.leaseMs / 3));
    this.sweeper ??= setInterval(() => void this.sweep(), every);
    this.sweeper.unref?.();
  }

  /** Stops sweeping; resolves when a sweep in flight has ended (it never rejects). */
  async stop(): Promise<void> {
    clearInterval(this.sweeper);
    await this.sweeping;
  }

  /** One pass of lease upkeep; never two at once. */
  private sweep(): Promise<void> {
    this.sweeping ??= this.renewAndTakeOver()
      .catch((error: unknown) => this.options.onSweepError(error))
      .finally(() => {
        this.sweeping = undefined;
        this.sweepsFinished++;
      });
    return this.sweeping;
  }

  private async renewAndTakeOver(): Promise<void> {
    if (this.options.signal.aborted) return;
    const mine = [...this.held.keys()];
    if (mine.length > 0) {
      await this.table.renew(mine, this.instanceId, this.leaseEnd());
      for (const id of await this.table.lost(mine, (id) => this.held.get(id))) {
        const value = this.held.get(id);
        this.held.delete(id);
        this.table.letGo(id, value);
      }
    }
    for (const id of await this.table.claimable(this.claimableWhere()))
      if (!this.held.has(id)) await this.table.take(id);
  }
}

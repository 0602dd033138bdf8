// Who flies (docs/flock.md §4.5, docs/contract.md "Nests"): crows are picked core-first, rotating within
// the nest's core, then borrowed from the rest of the flock, rotating, skipping quarantined crows
// and any crow already tried on the item. The default nest `todo` has an empty core: its crows come
// from the whole flock and are never "borrowed". The flock is the persona roster, then the spun
// registry by name. Each rotation's cursor (the last crow it took) is stored (RotationCursor), so a
// restart or another instance carries the rotation on.
import type { PrismaClient } from "../generated/prisma/client.ts";
import type { Tx } from "../log/event-log.ts";
import { ROSTER, personaOf } from "../base/roster.ts";
import { KeyedLock } from "../base/util/keyed-lock.ts";
import { DEFAULT_NEST } from "../base/default-nest.ts";
import { startingLevelOf } from "./trust.ts";
import type { EventStore } from "../storage/events/types.ts";

export { DEFAULT_NEST };

/** Where the crew reads a nest's core (the nest store fits; the crew does not import it). */
export interface NestLookup {
  get(id: string): Promise<{ crows: string[] } | null>;
}

export interface CrewDirectory {
  /** The nest's core members in order, or null when the nest does not exist. */
  core(nestId: string): Promise<string[] | null>;
  /** Every working crow: the roster, then the registry's spun crows by name. */
  flock(): Promise<string[]>;
  quarantined(): Promise<Set<string>>;
  /** The persona a crow runs on (itself for persona crows). */
  personaOf(crow: string): Promise<string>;
  /** Where a trust holder with no ledger record starts (a spun crow: the trust Boss gave it). */
  startingLevel(holder: string, db?: Tx | PrismaClient): Promise<number>;
  /** The last crow a nest's rotation ("core" or "borrow") took, if any. */
  lastPicked(nestId: string, ring: Ring): Promise<string | undefined>;
  recordPick(nestId: string, ring: Ring, crow: string): Promise<void>;
}

export type Ring = "core" | "borrow";

export interface Pick {
  crow: string;
  borrowed: boolean;
}

// Every flight's pick reads the flock, the quarantines and both rotation cursors and moves a
// cursor: those go around Prisma, through the event log's own statements (src/storage/flock-state.ts).
export class PrismaCrewDirectory implements CrewDirectory {
  private readonly prisma: PrismaClient;
  private readonly store: EventStore;

  constructor(
    database: { readonly prisma: PrismaClient; readonly events: EventStore },
    private readonly nests: NestLookup,
  ) {
    this.prisma = database.prisma;
    this.store = database.events;
  }

  async core(nestId: string): Promise<string[] | null> {
    return (await this.nests.get(nestId))?.crows ?? null;
  }

  async flock(): Promise<string[]> {
    return [...ROSTER, ...(await this.store.state.spunCrowNames())];
  }

  async quarantined(): Promise<Set<string>> {
    return new Set(await this.store.state.quarantinedCrows());
  }

  async personaOf(crow: string): Promise<string> {
    if (personaOf(crow)) return crow;
    return (await this.store.state.spunCrowPersona(crow)) ?? crow;
  }

  async startingLevel(holder: string, db: Tx | PrismaClient = this.prisma): Promise<number> {
    const spun = await db.spunCrow.findUnique({ where: { name: holder } });
    return startingLevelOf(spun?.trust ?? null);
  }

  async lastPicked(nestId: string, ring: Ring): Promise<string | undefined> {
    return (await this.store.state.rotationCursor(nestId, ring)) ?? undefined;
  }

  async recordPick(nestId: string, ring: Ring, crow: string): Promise<void> {
    await this.store.writeState((tx) => tx.recordPick(nestId, ring, crow));
  }
}

export class CrewPicker {
  // Picks in one nest take turns in this process, so two at once never read the same cursor.
  private readonly lock = new KeyedLock();

  constructor(private readonly directory: CrewDirectory) {}

  /** Up to `count` distinct crows for a flight in `nestId`, none of them in `exclude`. */
  pick(nestId: string, count: number, exclude: ReadonlySet<string> = new Set()): Promise<Pick[]> {
    return this.lock.run(nestId, () => this.pickNow(nestId, count, exclude));
  }

  private async pickNow(nestId: string, count: number, exclude: ReadonlySet<string>): Promise<Pick[]> {
    const [core, flock, quarantined, lastCore, lastBorrowed] = await Promise.all([
      this.directory.core(nestId),
      this.directory.flock(),
      this.directory.quarantined(),
      this.directory.lastPicked(nestId, "core"),
      this.directory.lastPicked(nestId, "borrow"),
    ]);
    const usable = (crow: string) => !quarantined.has(crow) && !exclude.has(crow);
    const coreSet = new Set(core ?? []);
    const picks: Pick[] = [];
    const fromCore = rotateAfter(core ?? [], lastCore)
      .filter(usable)
      .slice(0, count);
    picks.push(...fromCore.map((crow) => ({ crow, borrowed: false })));
    const borrowed: string[] = [];
    if (picks.length < count) {
      const outside = flock.filter((crow) => !coreSet.has(crow));
      borrowed.push(
        ...rotateAfter(outside, lastBorrowed)
          .filter(usable)
          .slice(0, count - picks.length),
      );
      // In `todo` nothing is borrowed: the whole flock is its crew.
      picks.push(...borrowed.map((crow) => ({ crow, borrowed: nestId !== DEFAULT_NEST })));
    }
    // The next rotation starts just after the last crow taken.
    if (fromCore.length > 0) await this.directory.recordPick(nestId, "core", fromCore[fromCore.length - 1]!);
    if (borrowed.length > 0) await this.directory.recordPick(nestId, "borrow", borrowed[borrowed.length - 1]!);
    return picks;
  }
}

/** The ring starting just after `last` (from the top when `last` is unknown or left the ring). */
function rotateAfter(ring: string[], last: string | undefined): string[] {
  if (ring.length === 0) return [];
  const start = last === undefined ? 0 : (ring.indexOf(last) + 1) % ring.length;
  return [...ring.slice(start), ...ring.slice(0, start)];
}

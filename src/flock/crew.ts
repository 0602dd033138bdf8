// Who flies (FLOCK.md section 4.5, EVENTS.md "Nests"): crows are picked core-first, rotating within
// the nest's core, then borrowed from the rest of the flock, rotating, skipping quarantined crows
// and any crow already tried on the item. The default nest `todo` has an empty core: its crows come
// from the whole flock and are never "borrowed". The flock is the persona roster, then the spun
// registry by name. Rotation cursors live in memory; a restart begins each rotation again.
import type { PrismaClient } from "../generated/prisma/client.ts";
import type { Tx } from "../log/event-log.ts";
import { ROSTER, personaOf } from "./roster.ts";
import type { NestStore } from "../nests/store.ts";

export const DEFAULT_NEST = "todo";

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
}

export interface Pick {
  crow: string;
  borrowed: boolean;
}

export class PrismaCrewDirectory implements CrewDirectory {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly nests: { get: NestStore["get"] },
  ) {}

  async core(nestId: string): Promise<string[] | null> {
    return (await this.nests.get(nestId))?.crows ?? null;
  }

  async flock(): Promise<string[]> {
    const spun = await this.prisma.spunCrow.findMany({ orderBy: { name: "asc" }, select: { name: true } });
    return [...ROSTER, ...spun.map((s) => s.name)];
  }

  async quarantined(): Promise<Set<string>> {
    const rows = await this.prisma.quarantine.findMany({ where: { status: "quarantined" }, select: { crow: true } });
    return new Set(rows.map((r) => r.crow));
  }

  async personaOf(crow: string): Promise<string> {
    if (personaOf(crow)) return crow;
    const spun = await this.prisma.spunCrow.findUnique({ where: { name: crow } });
    return spun?.persona ?? crow;
  }

  async startingLevel(holder: string, db: Tx | PrismaClient = this.prisma): Promise<number> {
    const spun = await db.spunCrow.findUnique({ where: { name: holder } });
    return spun?.trust === "regular" ? 1 : 0;
  }
}

export class CrewPicker {
  private readonly coreCursor = new Map<string, number>();
  private readonly borrowCursor = new Map<string, number>();

  constructor(private readonly directory: CrewDirectory) {}

  /** Up to `count` distinct crows for a flight in `nestId`, none of them in `exclude`. */
  async pick(nestId: string, count: number, exclude: ReadonlySet<string> = new Set()): Promise<Pick[]> {
    const [core, flock, quarantined] = await Promise.all([this.directory.core(nestId), this.directory.flock(), this.directory.quarantined()]);
    const usable = (crow: string) => !quarantined.has(crow) && !exclude.has(crow);
    const coreSet = new Set(core ?? []);
    const picks: Pick[] = [];
    const fromCore = rotate(core ?? [], this.coreCursor, nestId).filter(usable).slice(0, count);
    this.advance(this.coreCursor, nestId, core ?? [], fromCore);
    picks.push(...fromCore.map((crow) => ({ crow, borrowed: false })));
    if (picks.length < count) {
      const outside = flock.filter((crow) => !coreSet.has(crow));
      const borrowed = rotate(outside, this.borrowCursor, nestId).filter(usable).slice(0, count - picks.length);
      this.advance(this.borrowCursor, nestId, outside, borrowed);
      // In `todo` nothing is borrowed: the whole flock is its crew.
      picks.push(...borrowed.map((crow) => ({ crow, borrowed: nestId !== DEFAULT_NEST })));
    }
    return picks;
  }

  // The next rotation starts just after the last crow taken.
  private advance(cursors: Map<string, number>, nestId: string, ring: string[], taken: string[]): void {
    const last = taken[taken.length - 1];
    if (last === undefined || ring.length === 0) return;
    cursors.set(nestId, (ring.indexOf(last) + 1) % ring.length);
  }
}

function rotate(ring: string[], cursors: Map<string, number>, nestId: string): string[] {
  if (ring.length === 0) return [];
  const start = (cursors.get(nestId) ?? 0) % ring.length;
  return [...ring.slice(start), ...ring.slice(0, start)];
}

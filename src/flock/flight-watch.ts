// A flight's side of the provider's weather: its patience deadline is stored per item
// (ProviderWait), so a restart while a flight waits resumes it with the same deadline; its waits
// and its streamed text go to the FlightBoard for the owner to watch. The deadline is cleared when
// a flight of the item lands, so the next spell of weather (a later stage) starts a fresh patience.
import type { PrismaClient } from "../generated/prisma/client.ts";
import type { FlightWatch } from "../models/model.ts";
import type { FlightBoard } from "./flight-board.ts";

export class ProviderWaits {
  // Items with a stored wait, so a landing clears only what exists (no write per flight).
  private readonly known = new Set<string>();

  constructor(private readonly prisma: PrismaClient) {}

  /** Learns the stored waits of a list's items (a run resumed after a restart). */
  async load(itemIds: string[]): Promise<void> {
    if (itemIds.length === 0) return;
    const rows = await this.prisma.providerWait.findMany({
      where: { itemId: { in: itemIds } },
      select: { itemId: true },
    });
    for (const row of rows) this.known.add(row.itemId);
  }

  /** The stored deadline of the item's wait, or a new one (now + patience), stored. */
  async deadline(itemId: string, now: number, patienceMs: number): Promise<number> {
    this.known.add(itemId);
    const found = await this.prisma.providerWait.findUnique({ where: { itemId } });
    if (found) return found.deadline.getTime();
    const deadline = new Date(now + patienceMs);
    // Two flights of one item (a split) may begin to wait at once: the first stored deadline wins.
    await this.prisma.providerWait
      .createMany({ data: [{ itemId, since: new Date(now), deadline }] })
      .catch(() => undefined);
    const stored = await this.prisma.providerWait.findUnique({ where: { itemId } });
    return stored?.deadline.getTime() ?? deadline.getTime();
  }

  async clear(itemId: string): Promise<void> {
    if (!this.known.delete(itemId)) return;
    await this.prisma.providerWait.deleteMany({ where: { itemId } });
  }
}

export function flightWatch(
  waits: ProviderWaits,
  board: FlightBoard | undefined,
  flight: { flightId: string; listId: string; itemId: string; crow: string },
): FlightWatch {
  return {
    deadline: (now, patienceMs) => waits.deadline(flight.itemId, now, patienceMs),
    waiting: (notice) =>
      board?.wait({ ...flight, reason: notice.reason, retryAt: notice.retryAt, deadline: notice.deadline }),
    resumed: () => board?.resume(flight.flightId),
    ...(board ? { text: (delta: string, first: boolean) => board.text({ ...flight, delta, first }) } : {}),
  };
}

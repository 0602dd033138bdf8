// Obligations are fenced like lists (storage/fence.ts, docs/rules.md "One owner's story"): each
// claim of an obligation grows its epoch, and every stage move its holder makes (a claim, an
// answer, a hand-on, a nudge, an inspection's verdict, an ask's expiry, a close with no post) is a
// conditional update that also names the epoch this instance holds, in the transaction of the
// message that makes the move. A stale holder's move matches no row: the database refuses it, the
// message is not stored, and the instance steps down from the obligation.
import type { Prisma } from "../../generated/prisma/client.ts";
import type { Tx } from "../../log/event-log.ts";
import { obligationFence, StaleEpochError } from "../../storage/fence.ts";

/** The epoch an obligation is created at: its creator holds it from its first transaction. */
export const FIRST_EPOCH = 1;

/** How many let-go obligations' epochs are remembered, so a late move from here is still fenced. */
const RETIRED_KEPT = 1_000;

export class ObligationFences {
  // Obligations this instance let go of, with the epoch it held: a responder still running for
  // one (its model call came back late) still writes with that epoch, and is refused.
  private readonly retired = new Map<string, number>();

  constructor(private readonly heldEpoch: (id: string) => number | undefined) {}

  /** The epoch this instance holds, or held before it let go; undefined when it never held `id`. */
  epochOf(id: string): number | undefined {
    return this.heldEpoch(id) ?? this.retired.get(id);
  }

  retire(id: string, epoch: number): void {
    this.retired.delete(id);
    this.retired.set(id, epoch);
    if (this.retired.size > RETIRED_KEPT) this.retired.delete(this.retired.keys().next().value!);
  }

  /**
   * The fence as a where clause for a move that may touch any of `ids`: each one this instance
   * holds (or held) only at its epoch. Empty when it holds none of them (a move anyone may make).
   */
  where(ids: string[]): Prisma.ObligationWhereInput {
    const known = ids.filter((id) => this.epochOf(id) !== undefined);
    if (known.length === 0) return {};
    return { AND: [{ OR: [{ id: { notIn: known } }, ...known.map((id) => ({ id, epoch: this.epochOf(id)! }))] }] };
  }

  /** After a refused move: the obligation among `ids` whose epoch moved past the one held here, if any. */
  async stale(tx: Tx | Prisma.TransactionClient, ids: string[]): Promise<StaleEpochError | null> {
    const known = ids.filter((id) => this.epochOf(id) !== undefined);
    if (known.length === 0) return null;
    const rows = await tx.obligation.findMany({ where: { id: { in: known } }, select: { id: true, epoch: true } });
    const moved = rows.find((r) => r.epoch !== this.epochOf(r.id));
    return moved ? new StaleEpochError(obligationFence(moved.id, this.epochOf(moved.id)!), moved.epoch) : null;
  }
}

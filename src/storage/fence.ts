// Fencing tokens (docs/rules.md "One owner's story", docs/architecture.md "Scaling out"). A leased
// row (a running list, an open obligation) carries an epoch that grows by one on every claim. Its
// holder writes with the epoch it claimed: the first statement of the write's transaction is a
// conditional UPDATE of the leased row at that epoch, so the database refuses the whole
// transaction once another claim moved the epoch on, and the row lock the UPDATE takes is held to
// commit, so a claim waits for a write already begun (and the new owner then reads it) instead of
// slipping in under it. Whatever appends on behalf of a lease calls `fenced` (a StateTx) or
// `fencedPrisma` (a Prisma transaction) first; EventLog.fencedAppend / fencedAppendWith do it for
// a stream.
import type { PrismaClient } from "../generated/prisma/client.ts";
import type { PgBegin } from "./pg-pool.ts";

/** A Prisma interactive transaction (as events/types.ts's Tx, named here so no import cycles back). */
type Tx = Parameters<Parameters<PrismaClient["$transaction"]>[0]>[0];

/** The leased tables: each has `id` and `epoch` columns. */
export const FENCED_TABLES = ["TodoList", "Obligation"] as const;
export type FencedTable = (typeof FENCED_TABLES)[number];

/** A lease's fencing token: the row and the epoch its holder claimed. */
export interface Fence {
  table: FencedTable;
  id: string;
  epoch: number;
}

/** A list's fence (the lease of a running list). */
export const listFence = (listId: string, epoch: number): Fence => ({ table: "TodoList", id: listId, epoch });

/** An obligation's fence (the lease of an open obligation). */
export const obligationFence = (id: string, epoch: number): Fence => ({ table: "Obligation", id, epoch });

/**
 * The database refused a write made under `fence`: the row has moved on to `current` (another
 * instance claimed it), or is gone (null). Its transaction rolled back; the holder steps down.
 */
export class StaleEpochError extends Error {
  constructor(
    readonly fence: Fence,
    readonly current: number | null,
  ) {
    super(`${fence.table} ${fence.id} is at epoch ${current ?? "(gone)"}; a write at epoch ${fence.epoch} is refused`);
  }
}

/** The fence statement: the SQL both databases read alike (flock-state.ts runs it in its transactions). */
export const FENCE_SQL: Record<FencedTable, { hold: string; current: string }> = {
  TodoList: {
    hold: `UPDATE "TodoList" SET "epoch" = "epoch" WHERE "id" = ? AND "epoch" = ?`,
    current: `SELECT "epoch" FROM "TodoList" WHERE "id" = ?`,
  },
  Obligation: {
    hold: `UPDATE "Obligation" SET "epoch" = "epoch" WHERE "id" = ? AND "epoch" = ?`,
    current: `SELECT "epoch" FROM "Obligation" WHERE "id" = ?`,
  },
};

/** The fence inside a Prisma interactive transaction: the same conditional UPDATE, through Prisma. */
export async function fencedPrisma(tx: Tx, fence: Fence): Promise<void> {
  const where = { id: fence.id, epoch: fence.epoch };
  const data = { epoch: fence.epoch };
  const { count } =
    fence.table === "TodoList"
      ? await tx.todoList.updateMany({ where, data })
      : await tx.obligation.updateMany({ where, data });
  if (count === 1) return;
  const row =
    fence.table === "TodoList"
      ? await tx.todoList.findUnique({ where: { id: fence.id }, select: { epoch: true } })
      : await tx.obligation.findUnique({ where: { id: fence.id }, select: { epoch: true } });
  throw new StaleEpochError(fence, row?.epoch ?? null);
}

/**
 * On PostgreSQL the fence travels with the BEGIN, in one round trip (the simple protocol takes
 * several statements, so the id and epoch are inlined: the id through the driver's own literal
 * escaping, the epoch checked to be an integer). Same statement, same refusal as `fenced`.
 */
export function pgFencedBegin(fence: Fence): PgBegin {
  if (!Number.isSafeInteger(fence.epoch)) throw new Error(`a fence's epoch is an integer, not ${fence.epoch}`);
  const sql = FENCE_SQL[fence.table];
  return {
    text: (client) =>
      `BEGIN; ${sql.hold.replace("?", client.escapeLiteral(fence.id)).replace("?", String(fence.epoch))}`,
    check: async (results, client) => {
      if (results[0]?.rowCount === 1) return;
      const { rows } = await client.query<{ epoch: number }>(sql.current.replace("?", "$1"), [fence.id]);
      throw new StaleEpochError(fence, rows[0]?.epoch ?? null);
    },
  };
}

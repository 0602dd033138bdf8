// The trust ledger (docs/flock.md §3). A record per (holder, task_type); levels 0 stranger,
// 1 regular, 2 trusted. approved: streak + 1, promoting stranger -> regular after 3 approvals in a
// row and regular -> trusted after 5 more; rejected or timeout: down one level, streak reset;
// auto: no change. The caller emits trust.changed for every level change this returns.
import type { StateReads, StateTx, Tx } from "../log/event-log.ts";
import type { VerdictValue } from "./events.ts";
import type { TrustEntryRange, TrustHistoryRow, TrustReads, TrustRecordRow } from "../storage/trust-history.ts";
import { deciderColumns, type Actor } from "../base/actor.ts";

export const LEVEL_NAMES = ["stranger", "regular", "trusted"] as const;
export const TRUSTED = 2;
/** Approvals in a row that promote from a level: index = current level. */
export const PROMOTE_AFTER = [3, 5] as const;

export interface LevelChange {
  holder: string;
  taskType: string;
  from: number;
  to: number;
}

/** Where a holder with no record starts: stranger, or a spun crow's starting trust ("regular": 1). */
export const startingLevelOf = (spunCrowTrust: string | null): number => (spunCrowTrust === "regular" ? 1 : 0);

/**
 * The ledger's rows inside a transaction: the event log's own statements (StateTx, the flock's
 * hot path) or Prisma's (trustRowsOf, for a verdict that commits with Prisma writes).
 */
export type TrustRows = Pick<StateTx, "trust" | "spunCrowTrust" | "saveTrust" | "addTrustEntry">;

/** A Prisma transaction as TrustRows. */
export function trustRowsOf(tx: Tx): TrustRows {
  return {
    trust: (holder, taskType) =>
      tx.trust.findUnique({ where: { holder_taskType: { holder, taskType } }, select: { level: true, streak: true } }),
    spunCrowTrust: async (name) =>
      (await tx.spunCrow.findUnique({ where: { name }, select: { trust: true } }))?.trust ?? null,
    saveTrust: async ({ holder, taskType, level, streak, approvals, rejections, autos }) => {
      await tx.trust.upsert({
        where: { holder_taskType: { holder, taskType } },
        create: { holder, taskType, level, streak, approvals, rejections, autos },
        update: {
          level,
          streak,
          approvals: { increment: approvals },
          rejections: { increment: rejections },
          autos: { increment: autos },
        },
      });
    },
    addTrustEntry: async ({ actor, ...entry }) => {
      await tx.trustEntry.create({ data: { ...entry, ...deciderColumns(actor) } });
    },
  };
}

export class TrustLedger {
  constructor(
    /** The ledger's records and history, read around Prisma (src/storage/trust-history.ts). */
    private readonly ledger: TrustReads,
    /** Committed rows, read around Prisma (the event log's read connection). */
    private readonly reads: StateReads,
  ) {}

  async level(holder: string, taskType: string): Promise<number> {
    const row = await this.reads.trust(holder, taskType);
    return row ? row.level : startingLevelOf(await this.reads.spunCrowTrust(holder));
  }

  async isTrusted(holders: string[], taskType: string): Promise<boolean> {
    if (holders.length === 0) return false;
    for (const holder of holders) if ((await this.level(holder, taskType)) < TRUSTED) return false;
    return true;
  }

  /**
   * Applies one verdict to one holder inside a transaction; returns the level change, if any. The
   * history entry keeps `actor`, who decided it (docs/rules.md "Actors"; null: nobody known).
   */
  async apply(
    db: TrustRows | Tx,
    holder: string,
    taskType: string,
    verdict: VerdictValue,
    subject: string,
    actor: Actor | null,
    reason: string | null = null,
    /** An approval the owner edited first: it counts, but holds the level (docs/rules.md "Edits"). */
    edited = false,
  ): Promise<LevelChange | null> {
    const rows = (db as Partial<Tx>).trustEntry !== undefined ? trustRowsOf(db as Tx) : (db as TrustRows);
    const existing = await rows.trust(holder, taskType);
    const from = existing ? existing.level : startingLevelOf(await rows.spunCrowTrust(holder));
    let level = from;
    let streak = existing?.streak ?? 0;
    if (verdict === "approved" && edited) {
      streak = 0; // the owner had to fix it: counted as an approval, no step toward skipping the owner
    } else if (verdict === "approved") {
      streak += 1;
      const needed = PROMOTE_AFTER[level as 0 | 1];
      if (needed !== undefined && streak >= needed) {
        level += 1;
        streak = 0;
      }
    } else if (verdict === "rejected" || verdict === "timeout") {
      level = Math.max(0, level - 1);
      streak = 0;
    }
    const counts = {
      approvals: verdict === "approved" ? 1 : 0,
      rejections: verdict === "rejected" || verdict === "timeout" ? 1 : 0,
      autos: verdict === "auto" ? 1 : 0,
    };
    await rows.saveTrust({ holder, taskType, level, streak, ...counts });
    await rows.addTrustEntry({
      holder,
      taskType,
      verdict,
      subject,
      from,
      to: level,
      streak,
      at: new Date(),
      actor,
      reason,
    });
    return level === from ? null : { holder, taskType, from, to: level };
  }

  /**
   * The ledger's records, by holder then task type, optionally one holder's and/or one task type's
   * (filtered in the database, not after loading the whole ledger).
   */
  records(filter: LedgerFilter = {}): Promise<TrustRecordRow[]> {
    // Read around Prisma, on committed rows only (src/storage/trust-history.ts says why).
    return this.ledger.records(filter);
  }

  /**
   * The history of the matching records in one query, grouped by record (see historyKey), oldest
   * first, optionally only each record's newest `last` before entry id `before` (a page). One pass
   * over the entries, where filtering every entry for every record made the snapshot quadratic.
   */
  async histories(
    filter: LedgerFilter = {},
    page: { last?: number | null; before?: number | null } = {},
  ): Promise<Map<string, TrustHistoryRow[]>> {
    const entries = await this.ledger.history({ ...filter, ...page });
    const grouped = new Map<string, TrustHistoryRow[]>();
    for (const e of entries) {
      const key = historyKey(e.holder, e.taskType);
      let list = grouped.get(key);
      if (!list) grouped.set(key, (list = []));
      list.push(e);
    }
    return grouped;
  }

  /**
   * The ledger for GET /api/trust: every record with its newest SNAPSHOT_HISTORY entries (oldest
   * first) and how many it has in all, so the answer does not grow with the age of the database.
   */
  async snapshot(filter: LedgerFilter = {}) {
    const [records, histories] = await Promise.all([
      this.records(filter),
      this.histories(filter, { last: SNAPSHOT_HISTORY }),
    ]);
    return records.map((r) => ({
      ...recordView(r),
      // The contract's route keeps its rows as documented; who decided, and why, is on the history pages.
      history: (histories.get(historyKey(r.holder, r.taskType)) ?? []).map(
        ({ holder: _h, taskType: _t, actor: _a, reason: _r, ...entry }) => entry,
      ),
      history_total: historyTotalOf(r),
    }));
  }

  /** A page of the whole history: the newest `limit` entries below id `before`, oldest first. */
  async page(filter: LedgerFilter, limit: number, before?: number | null): Promise<TrustHistoryRow[]> {
    return (await this.ledger.entries({ ...filter, below: before, limit, descending: true })).reverse();
  }

  /** A run of the whole history by entry id, in the order read (GraphQL's connection). */
  entries(range: TrustEntryRange): Promise<TrustHistoryRow[]> {
    return this.ledger.entries(range);
  }

  /** How many entries match, from the records' counts (no count over the history). */
  async historyTotal(filter: LedgerFilter = {}): Promise<number> {
    return (await this.records(filter)).reduce((sum, r) => sum + historyTotalOf(r), 0);
  }
}

/** How many history rows GET /api/trust embeds per record; the rest page through /api/trust/history. */
export const SNAPSHOT_HISTORY = 20;

/**
 * A record's history length without counting it: every verdict applied adds one entry and one to
 * exactly one of the three counts (apply above), so their sum is the number of entries.
 */
export const historyTotalOf = (r: { approvals: number; rejections: number; autos: number }): number =>
  r.approvals + r.rejections + r.autos;

/** A ledger record as clients read it (REST's snake_case fields, with its level's name). */
export function recordView(r: TrustRecordRow) {
  return {
    holder: r.holder,
    task_type: r.taskType,
    level: r.level,
    level_name: LEVEL_NAMES[r.level] ?? "stranger",
    streak: r.streak,
    approvals: r.approvals,
    rejections: r.rejections,
    autos: r.autos,
  };
}

export interface LedgerFilter {
  holder?: string | null;
  taskType?: string | null;
}

export const historyKey = (holder: string, taskType: string): string => `${holder}\u0000${taskType}`;

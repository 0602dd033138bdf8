// The flock's hot state rows (item stages, approvals, the trust ledger, token counters, crew
// rotation cursors), read and written around Prisma on the event log's own connections, so a state
// change and its events commit in one transaction (docs/architecture.md "Storage and migrations").
// Over 400 lines on purpose: one set of statements, in the SQL both databases read alike, and the
// two small adapters that run it; split, the SQL would sit apart from the dialect it is written for.
// Their shapes (what a read answers, the rows a write takes) are in state-shapes.ts.
import type Database from "better-sqlite3";
import type pg from "pg";
import type { Item } from "../generated/prisma/client.ts";
import { deciderColumns, type Actor } from "../base/actor.ts";
import type { TrustRecordRow } from "./trust-history.ts";
import type {
  ApprovalRow,
  FinishedList,
  ItemFields,
  NewToolCall,
  NewTrustEntry,
  StateTx,
  ToolCallEnd,
  TrustStanding,
} from "./state-shapes.ts";
import { sqliteTs } from "./sqlite-ts.ts";
import { FENCE_SQL, StaleEpochError, type Fence } from "./fence.ts";

/** Who decided, in the columns Approval and TrustEntry keep it in (src/base/actor.ts, deciderColumns). */
const DECIDER_COLUMNS = `"decidedBy", "decidedByTokenId", "decidedByTokenName", "decidedByWebhookId"`;
const deciderValues = (actor: Actor | null | undefined): [string, string | null, string | null, string | null] => {
  const c = deciderColumns(actor);
  return [c.decidedBy, c.decidedByTokenId, c.decidedByTokenName, c.decidedByWebhookId];
};

/**
 * A decided row opened again for a later round (a rework): every column the insert names, and the
 * decision's columns cleared; the earlier round's verdict, decider and reason stay in the log.
 */
const REOPEN = [
  `"status" = excluded."status"`,
  `"deadline" = excluded."deadline"`,
  `"createdAt" = excluded."createdAt"`,
  `"decidedAt" = excluded."decidedAt"`,
  `"decidedBy" = excluded."decidedBy"`,
  `"decidedByTokenId" = excluded."decidedByTokenId"`,
  `"decidedByTokenName" = excluded."decidedByTokenName"`,
  `"decidedByWebhookId" = excluded."decidedByWebhookId"`,
  `"reason" = NULL`,
  `"rework" = NULL`,
  `"edit" = NULL`,
  `"remindedAt" = NULL`,
  `"round" = excluded."round"`,
].join(", ");

/** The advisory lock key of the commit-order lock (any constant no other code uses). */
export const NAMED_ORDER_LOCK = 7_261_013;

/** Runs one statement: SQL written with `?` placeholders, in the SQL both databases read alike. */
interface Exec {
  run(sql: string, params: unknown[]): Promise<number>;
  get<T>(sql: string, params: unknown[]): Promise<T | undefined>;
  all<T>(sql: string, params: unknown[]): Promise<T[]>;
}

interface Dialect {
  /** A DateTime value as Prisma stores it. */
  ts(date: Date): string;
  /** A DateTime column read back as text Date parses in UTC. */
  tsColumn(column: string): string;
  lockCommitOrder(exec: Exec): Promise<void>;
  /** A Boolean value as a statement parameter (better-sqlite3 binds no JS boolean). */
  bool(value: boolean): number | boolean;
}

/** DateTime as Prisma's better-sqlite3 adapter stores it (sqlite-ts.ts). */
const SQLITE: Dialect = {
  ts: sqliteTs,
  tsColumn: (column) => `"${column}"`,
  lockCommitOrder: async () => {}, // one writer: ids already are commit order
  bool: (value) => (value ? 1 : 0),
};

const PG: Dialect = {
  ts: (date) => date.toISOString(), // timestamp(3) without time zone, UTC as Prisma writes it
  tsColumn: (column) => `to_char("${column}", 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "${column}"`,
  lockCommitOrder: async (exec) => {
    await exec.get(`SELECT pg_advisory_xact_lock(${NAMED_ORDER_LOCK})`, []);
  },
  bool: (value) => value,
};

type ItemRow = Omit<Item, "updatedAt"> & { updatedAt: string };

const itemOf = (row: ItemRow | undefined): Item | null => (row ? { ...row, updatedAt: new Date(row.updatedAt) } : null);

/** The statements, over either database. */
class Statements implements StateTx {
  private readonly itemColumns: string;

  constructor(
    private readonly exec: Exec,
    private readonly dialect: Dialect,
  ) {
    const columns = [
      "id",
      "listId",
      "n",
      "text",
      "stage",
      "mode",
      "taskType",
      "subtasks",
      "reason",
      "answer",
      "crows",
      "skipReason",
      "tries",
      "rework",
    ].map((c) => `"${c}"`);
    this.itemColumns = [...columns, dialect.tsColumn("updatedAt")].join(", ");
  }

  async item(id: string): Promise<Item | null> {
    return itemOf(await this.exec.get<ItemRow>(`SELECT ${this.itemColumns} FROM "Item" WHERE "id" = ?`, [id]));
  }

  async approval(itemId: string, target: string): Promise<ApprovalRow | null> {
    const row = await this.exec.get<{
      status: string;
      deadline: string;
      round: number;
      createdAt: string;
      remindedAt: string | null;
    }>(
      `SELECT "status", ${this.dialect.tsColumn("deadline")}, "round", ${this.dialect.tsColumn("createdAt")}, ${this.dialect.tsColumn("remindedAt")} FROM "Approval" WHERE "itemId" = ? AND "target" = ?`,
      [itemId, target],
    );
    return row
      ? {
          status: row.status,
          deadline: new Date(row.deadline),
          round: Number(row.round),
          openedAt: new Date(row.createdAt),
          reminded: row.remindedAt !== null,
        }
      : null;
  }

  async trust(holder: string, taskType: string): Promise<TrustStanding | null> {
    return (
      (await this.exec.get<TrustStanding>(
        `SELECT "level", "streak" FROM "Trust" WHERE "holder" = ? AND "taskType" = ?`,
        [holder, taskType],
      )) ?? null
    );
  }

  async spunCrowTrust(name: string): Promise<string | null> {
    return (
      (await this.exec.get<{ trust: string }>(`SELECT "trust" FROM "SpunCrow" WHERE "name" = ?`, [name]))?.trust ?? null
    );
  }

  async spunCrowPersona(name: string): Promise<string | null> {
    return (
      (await this.exec.get<{ persona: string }>(`SELECT "persona" FROM "SpunCrow" WHERE "name" = ?`, [name]))
        ?.persona ?? null
    );
  }

  async spunCrowNames(): Promise<string[]> {
    return (await this.exec.all<{ name: string }>(`SELECT "name" FROM "SpunCrow" ORDER BY "name" ASC`, [])).map(
      (r) => r.name,
    );
  }

  async quarantinedCrows(): Promise<string[]> {
    return (
      await this.exec.all<{ crow: string }>(`SELECT "crow" FROM "Quarantine" WHERE "status" = 'quarantined'`, [])
    ).map((r) => r.crow);
  }

  async rotationCursor(nestId: string, ring: string): Promise<string | null> {
    return (
      (
        await this.exec.get<{ lastCrow: string }>(
          `SELECT "lastCrow" FROM "RotationCursor" WHERE "nestId" = ? AND "ring" = ?`,
          [nestId, ring],
        )
      )?.lastCrow ?? null
    );
  }

  async recordPick(nestId: string, ring: string, crow: string): Promise<void> {
    await this.exec.run(
      `INSERT INTO "RotationCursor" ("nestId", "ring", "lastCrow", "updatedAt") VALUES (?, ?, ?, ?) ` +
        `ON CONFLICT ("nestId", "ring") DO UPDATE SET "lastCrow" = excluded."lastCrow", "updatedAt" = excluded."updatedAt"`,
      [nestId, ring, crow, this.dialect.ts(new Date())],
    );
  }

  async hasToolCalls(itemId: string): Promise<boolean> {
    return (
      (await this.exec.get(`SELECT 1 AS "one" FROM "ToolCall" WHERE "itemId" = ? LIMIT 1`, [itemId])) !== undefined
    );
  }

  async insertToolCall(call: NewToolCall): Promise<void> {
    await this.exec.run(
      `INSERT INTO "ToolCall" ("id", "listId", "itemId", "nestId", "flightKey", "crow", "taskType", "step", "n", "modelCallId", ` +
        `"offeredName", "serverId", "serverName", "tool", "args", "policy", "readOnly", "status", "createdAt") ` +
        `VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        call.id,
        call.listId,
        call.itemId,
        call.nestId,
        call.flightKey,
        call.crow,
        call.taskType,
        call.step,
        call.n,
        call.modelCallId,
        call.offeredName,
        call.serverId,
        call.serverName,
        call.tool,
        call.args,
        call.policy,
        this.dialect.bool(call.readOnly),
        call.status,
        this.dialect.ts(call.createdAt),
      ],
    );
  }

  async startToolCall(id: string, at: Date): Promise<boolean> {
    const changed = await this.exec.run(
      `UPDATE "ToolCall" SET "status" = 'started', "startedAt" = ? WHERE "id" = ? AND "status" IN ('ready', 'approved')`,
      [this.dialect.ts(at), id],
    );
    return changed > 0;
  }

  async endToolCall(id: string, end: ToolCallEnd): Promise<boolean> {
    const changed = await this.exec.run(
      `UPDATE "ToolCall" SET "status" = ?, "endedAt" = ?, "result" = ?, "errorCode" = ? WHERE "id" = ? AND "status" = 'started'`,
      [end.status, this.dialect.ts(end.at), end.result, end.errorCode, id],
    );
    return changed > 0;
  }

  async landToolCalls(flightKey: string): Promise<void> {
    await this.exec.run(`UPDATE "ToolCall" SET "landed" = TRUE WHERE "flightKey" = ? AND "landed" = FALSE`, [
      flightKey,
    ]);
  }

  async moveItem(id: string, from: string, fields: ItemFields): Promise<Item | null> {
    // Every optional column is written as given or kept (COALESCE), so one statement serves all moves.
    const row = await this.exec.get<ItemRow>(
      `UPDATE "Item" SET "stage" = ?, "mode" = COALESCE(?, "mode"), "taskType" = COALESCE(?, "taskType"), "subtasks" = COALESCE(?, "subtasks"), ` +
        `"reason" = COALESCE(?, "reason"), "answer" = COALESCE(?, "answer"), "crows" = COALESCE(?, "crows"), ` +
        `"tries" = COALESCE(?, "tries"), "rework" = CASE WHEN ? = 1 THEN ? ELSE "rework" END, "updatedAt" = ? ` +
        `WHERE "id" = ? AND "stage" = ? RETURNING ${this.itemColumns}`,
      [
        fields.stage,
        fields.mode ?? null,
        fields.taskType ?? null,
        fields.subtasks ?? null,
        fields.reason ?? null,
        fields.answer ?? null,
        fields.crows ?? null,
        fields.tries ?? null,
        fields.rework === undefined ? 0 : 1,
        fields.rework ?? null,
        this.dialect.ts(new Date()),
        id,
        from,
      ],
    );
    return itemOf(row);
  }

  async skipItem(id: string, reason: string): Promise<boolean> {
    const changed = await this.exec.run(
      `UPDATE "Item" SET "stage" = 'skipped', "skipReason" = ?, "updatedAt" = ? WHERE "id" = ? AND "stage" NOT IN ('done', 'skipped')`,
      [reason, this.dialect.ts(new Date()), id],
    );
    return changed > 0;
  }

  async addTokens(listId: string, tokens: number): Promise<void> {
    await this.exec.run(`UPDATE "TodoList" SET "tokensUsed" = "tokensUsed" + ? WHERE "id" = ?`, [tokens, listId]);
  }

  async spendBanterSlot(listId: string): Promise<void> {
    await this.exec.run(`UPDATE "TodoList" SET "banterCount" = "banterCount" + 1 WHERE "id" = ?`, [listId]);
  }

  async finishList(listId: string, at: Date): Promise<FinishedList | null> {
    return (
      (await this.exec.get<FinishedList>(
        `UPDATE "TodoList" SET "status" = 'finished', "finishedAt" = ? WHERE "id" = ? AND "status" = 'running' RETURNING "tokensUsed", "tokenBudget", "cancelledBy"`,
        [this.dialect.ts(at), listId],
      )) ?? null
    );
  }

  async listTokens(listId: string): Promise<{ tokensUsed: number; tokenBudget: number } | null> {
    return (
      (await this.exec.get<{ tokensUsed: number; tokenBudget: number }>(
        `SELECT "tokensUsed", "tokenBudget" FROM "TodoList" WHERE "id" = ?`,
        [listId],
      )) ?? null
    );
  }

  async openApproval(itemId: string, target: string, deadline: Date, round = 0): Promise<void> {
    await this.exec.run(
      `INSERT INTO "Approval" ("itemId", "target", "status", "deadline", "createdAt", "round") VALUES (?, ?, 'pending', ?, ?, ?) ` +
        `ON CONFLICT ("itemId", "target") DO UPDATE SET ${REOPEN} WHERE "Approval"."round" < excluded."round"`,
      [itemId, target, this.dialect.ts(deadline), this.dialect.ts(new Date()), round],
    );
  }

  async createDecidedApproval(
    itemId: string,
    target: string,
    status: string,
    at: Date,
    decider?: Actor,
    round = 0,
  ): Promise<void> {
    const stamp = this.dialect.ts(at);
    const values = [status, stamp, this.dialect.ts(new Date()), stamp, ...deciderValues(decider), round];
    // A later round reuses the row of an earlier one; anything else is an insert, which fails when
    // the target already has this round's row (an approval is decided once).
    if (round > 0) {
      const reopened = await this.exec.run(
        `UPDATE "Approval" SET "status" = ?, "deadline" = ?, "createdAt" = ?, "decidedAt" = ?, ${DECIDER_COLUMNS.split(
          ", ",
        )
          .map((c) => `${c} = ?`)
          .join(
            ", ",
          )}, "round" = ?, "reason" = NULL, "rework" = NULL, "edit" = NULL, "remindedAt" = NULL WHERE "itemId" = ? AND "target" = ? AND "round" < ?`,
        [...values, itemId, target, round],
      );
      if (reopened > 0) return;
    }
    await this.exec.run(
      `INSERT INTO "Approval" ("status", "deadline", "createdAt", "decidedAt", ${DECIDER_COLUMNS}, "round", "itemId", "target") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [...values, itemId, target],
    );
  }

  async decideApproval(
    itemId: string,
    target: string,
    status: string,
    at: Date,
    decider?: Actor,
    kept: { reason?: string; rework?: string; edit?: string } = {},
  ): Promise<boolean> {
    const changed = await this.exec.run(
      `UPDATE "Approval" SET "status" = ?, "decidedAt" = ?, "decidedBy" = ?, "decidedByTokenId" = ?, "decidedByTokenName" = ?, "decidedByWebhookId" = ?, "reason" = ?, "rework" = ?, "edit" = ? WHERE "itemId" = ? AND "target" = ? AND "status" = 'pending'`,
      [
        status,
        this.dialect.ts(at),
        ...deciderValues(decider),
        kept.reason ?? null,
        kept.rework ?? null,
        kept.edit ?? null,
        itemId,
        target,
      ],
    );
    return changed > 0;
  }

  async markReminded(itemId: string, target: string, round: number, at: Date): Promise<boolean> {
    const stamp = this.dialect.ts(at);
    const changed = await this.exec.run(
      `UPDATE "Approval" SET "remindedAt" = ? WHERE "itemId" = ? AND "target" = ? AND "round" = ? AND "status" = 'pending' AND "remindedAt" IS NULL AND "deadline" > ?`,
      [stamp, itemId, target, round, stamp],
    );
    return changed > 0;
  }

  async saveTrust(row: TrustRecordRow): Promise<void> {
    await this.exec.run(
      `INSERT INTO "Trust" ("holder", "taskType", "level", "streak", "approvals", "rejections", "autos", "updatedAt") VALUES (?, ?, ?, ?, ?, ?, ?, ?) ` +
        `ON CONFLICT ("holder", "taskType") DO UPDATE SET "level" = excluded."level", "streak" = excluded."streak", ` +
        `"approvals" = "Trust"."approvals" + excluded."approvals", "rejections" = "Trust"."rejections" + excluded."rejections", ` +
        `"autos" = "Trust"."autos" + excluded."autos", "updatedAt" = excluded."updatedAt"`,
      [
        row.holder,
        row.taskType,
        row.level,
        row.streak,
        row.approvals,
        row.rejections,
        row.autos,
        this.dialect.ts(new Date()),
      ],
    );
  }

  async addTrustEntry(entry: NewTrustEntry): Promise<void> {
    await this.exec.run(
      `INSERT INTO "TrustEntry" ("holder", "taskType", "verdict", "subject", "from", "to", "streak", "at", ${DECIDER_COLUMNS}, "reason") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        entry.holder,
        entry.taskType,
        entry.verdict,
        entry.subject,
        entry.from,
        entry.to,
        entry.streak,
        this.dialect.ts(entry.at),
        ...deciderValues(entry.actor),
        entry.reason ?? null,
      ],
    );
  }

  lockCommitOrder(): Promise<void> {
    return this.dialect.lockCommitOrder(this.exec);
  }

  async fenced(fence: Fence): Promise<void> {
    const sql = FENCE_SQL[fence.table];
    if ((await this.exec.run(sql.hold, [fence.id, fence.epoch])) === 1) return;
    const row = await this.exec.get<{ epoch: number }>(sql.current, [fence.id]);
    throw new StaleEpochError(fence, row?.epoch ?? null);
  }
}

/** SQLite: each statement prepared once for the life of its connection. */
function sqliteExec(db: Database.Database): Exec {
  const prepared = new Map<string, Database.Statement>();
  const statement = (sql: string) => {
    let stmt = prepared.get(sql);
    // Prisma's adapter turns safe integers on for its connection; these columns are small numbers.
    if (!stmt) prepared.set(sql, (stmt = db.prepare(sql).safeIntegers(false)));
    return stmt;
  };
  return {
    run: async (sql, params) => statement(sql).run(...params).changes,
    get: async <T>(sql: string, params: unknown[]) => statement(sql).get(...params) as T | undefined,
    all: async <T>(sql: string, params: unknown[]) => statement(sql).all(...params) as T[],
  };
}

/** `?` placeholders as PostgreSQL's `$n` (the SQL here has no `?` inside a literal). */
function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

const pgNames = new Map<string, { name: string; text: string }>();

/** PostgreSQL: each statement named, so a connection parses it once. */
function pgExec(client: pg.PoolClient | pg.Pool): Exec {
  const named = (sql: string) => {
    let entry = pgNames.get(sql);
    if (!entry) pgNames.set(sql, (entry = { name: `crows-state-${pgNames.size + 1}`, text: numbered(sql) }));
    return entry;
  };
  return {
    run: async (sql, params) => (await client.query({ ...named(sql), values: params })).rowCount ?? 0,
    get: async <T>(sql: string, params: unknown[]) =>
      (await client.query({ ...named(sql), values: params })).rows[0] as T | undefined,
    all: async <T>(sql: string, params: unknown[]) =>
      (await client.query({ ...named(sql), values: params })).rows as T[],
  };
}

export function sqliteState(db: Database.Database): StateTx {
  return new Statements(sqliteExec(db), SQLITE);
}

export function pgState(client: pg.PoolClient | pg.Pool): StateTx {
  return new Statements(pgExec(client), PG);
}

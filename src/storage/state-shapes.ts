// The shapes of the flock's hot state (flock-state.ts): what a read answers, what a transaction
// may write, and the rows it takes. Apart from the statements so the engine's files that only name
// these types (event-log.ts, approvals.ts, edit.ts, rework.ts) read them without the SQL.
import type { Item } from "../generated/prisma/client.ts";
import type { Actor } from "../base/actor.ts";
import type { TrustHistoryRow, TrustRecordRow } from "./trust-history.ts";
import type { Fence } from "./fence.ts";

/** Where a holder stands on a task type: what the next verdict moves from. */
export interface TrustStanding {
  level: number;
  streak: number;
}

export interface ApprovalRow {
  status: string;
  deadline: Date;
  /** The item's tries when this round opened (a rework opens the row again, one round higher). */
  round: number;
  /** When this round opened: the window is from here to the deadline. */
  openedAt: Date;
  /** Whether this round's reminder went out (docs/rules.md "Reminders"). */
  reminded: boolean;
}

/** Reads of the hot rows: outside a transaction, committed data only. */
export interface StateReads {
  item(id: string): Promise<Item | null>;
  approval(itemId: string, target: string): Promise<ApprovalRow | null>;
  trust(holder: string, taskType: string): Promise<TrustStanding | null>;
  /** A spun crow's starting trust ("stranger" | "regular"), null when `name` is no spun crow. */
  spunCrowTrust(name: string): Promise<string | null>;
  /** The persona a spun crow runs on, null when `name` is no spun crow. */
  spunCrowPersona(name: string): Promise<string | null>;
  /** Every spun crow's name, by name. */
  spunCrowNames(): Promise<string[]>;
  /** The crows under quarantine now. */
  quarantinedCrows(): Promise<string[]>;
  /** The last crow a nest's rotation ("core" | "borrow") took, null before its first pick. */
  rotationCursor(nestId: string, ring: string): Promise<string | null>;
  /** Whether the item has any tool call row (most have none: their flights skip reading them). */
  hasToolCalls(itemId: string): Promise<boolean>;
}

/** The hot rows inside one transaction with the events appended beside them. */
export interface StateTx extends StateReads {
  /**
   * Moves an item from `from` to `fields.stage` with the fields that come with it; the row after,
   * or null when the item is gone or no longer in `from` (another writer moved it first: an
   * instance that took the list over while this one stalled, or a skip). One stage is left once.
   */
  moveItem(id: string, from: string, fields: ItemFields): Promise<Item | null>;
  /** Skips an item that is not done or skipped yet; false when it already was. */
  skipItem(id: string, reason: string): Promise<boolean>;
  addTokens(listId: string, tokens: number): Promise<void>;
  /** One of the list's banter slots spent (TodoList.banterCount). */
  spendBanterSlot(listId: string): Promise<void>;
  /** Marks the list finished; its token counters after, and its canceller (null: not cancelled). */
  /** Only a running list finishes: null when it is gone or already finished (by another instance that took it over). */
  finishList(listId: string, at: Date): Promise<FinishedList | null>;
  /** The list's token counters, as committed so far in this transaction. */
  listTokens(listId: string): Promise<{ tokensUsed: number; tokenBudget: number } | null>;
  /**
   * A pending approval with its deadline for `round`, unless the target already has one for that
   * round or a later one; a row of an earlier round (decided, its item sent back) opens again.
   */
  openApproval(itemId: string, target: string, deadline: Date, round?: number): Promise<void>;
  /** An approval decided at once (trust skipped it), for `round`, as openApproval. */
  createDecidedApproval(
    itemId: string,
    target: string,
    status: string,
    at: Date,
    decider?: Actor,
    round?: number,
  ): Promise<void>;
  /** Decides a pending approval, with the decider's reason if any; false when it was not pending. */
  decideApproval(
    itemId: string,
    target: string,
    status: string,
    at: Date,
    decider?: Actor,
    kept?: { reason?: string; rework?: string; edit?: string },
  ): Promise<boolean>;
  /**
   * Marks this round's reminder sent, only while the approval still waits in `round`, before its
   * deadline, unreminded: false otherwise (decided, reopened, past, or reminded already).
   */
  markReminded(itemId: string, target: string, round: number, at: Date): Promise<boolean>;
  /** A record's new level and streak; its approvals, rejections and autos are added to the stored counts. */
  saveTrust(row: TrustRecordRow): Promise<void>;
  /** One verdict's entry in a record's history (the streak after it is stored too, never read back). */
  addTrustEntry(entry: NewTrustEntry): Promise<void>;
  /** Where a nest's rotation stands after a pick. */
  recordPick(nestId: string, ring: string, crow: string): Promise<void>;
  /** A new tool call's row (src/flock/tool-calls.ts openAllowed): `ready`, created at `createdAt`. */
  insertToolCall(call: NewToolCall): Promise<void>;
  /**
   * A call's started record (tool-calls.ts recordStarted): ready or approved -> started at `at`;
   * false when the row was in neither (it must not run).
   */
  startToolCall(id: string, at: Date): Promise<boolean>;
  /**
   * A started tool call's end (tool-calls.ts recordEnd): `status` with its result; false when the
   * row was not `started` (its end is recorded once).
   */
  endToolCall(id: string, end: ToolCallEnd): Promise<boolean>;
  /** A flight's tool calls marked landed (a later run of the item starts its own). */
  landToolCalls(flightKey: string): Promise<void>;
  /** PostgreSQL's commit-order lock (db.ts commitOrderLock), held to commit; nothing on SQLite. */
  lockCommitOrder(): Promise<void>;
  /**
   * The fence (fence.ts): the leased row at `fence.epoch`, locked to commit; StaleEpochError when
   * the database refuses (the row's epoch moved on), which rolls the whole transaction back.
   */
  fenced(fence: Fence): Promise<void>;
}

/** A tool call's row as openAllowed inserts it (the columns it does not name keep their defaults). */
export interface NewToolCall {
  id: string;
  /** "" for a nest crow's call. */
  listId: string;
  /** The item; a nest crow's call: the request's msg_id. */
  itemId: string;
  /** A nest crow's call: its nest (its events go on the nest's side log); "" for a list flight's. */
  nestId: string;
  flightKey: string;
  crow: string;
  taskType: string;
  step: number;
  n: number;
  modelCallId: string;
  offeredName: string;
  serverId: string;
  serverName: string;
  tool: string;
  args: string;
  policy: string;
  readOnly: boolean;
  status: string;
  createdAt: Date;
}

/** How a tool call ended, as its row keeps it. */
export interface ToolCallEnd {
  status: "returned" | "unknown";
  at: Date;
  result: string;
  errorCode: string | null;
}

/** A list as it finished: its token counters, and who cancelled it (null: it ran to its end). */
export interface FinishedList {
  tokensUsed: number;
  tokenBudget: number;
  cancelledBy: string | null;
}

/** A history row to store: the row as read without its id, `at` as a Date, and the streak after it. */
export type NewTrustEntry = Omit<TrustHistoryRow, "id" | "at" | "reason"> & {
  streak: number;
  at: Date;
  reason?: string | null;
};

export interface ItemFields {
  stage: string;
  mode?: string;
  taskType?: string;
  /** JSON text, as the column holds it. */
  subtasks?: string;
  reason?: string;
  answer?: string;
  /** JSON text, as the column holds it. */
  crows?: string;
  tries?: number;
  /** The rework waiting to fly (JSON text), or null to clear it; undefined keeps it. */
  rework?: string | null;
}

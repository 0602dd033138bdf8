// Every write a lease holder makes is fenced (src/storage/fence.ts, docs/rules.md "One owner's
// story"): on SQLite and on PostgreSQL, each write path of a list's owner (a flight's crow.flying,
// a landing and its tokens, a stage move, a skip, a banter slot, the timeout verdict, list.finished)
// and each stage move of an obligation's holder (a claim, an answer, a hand-on, a nudge, an ask's
// expiry), made with an epoch the row has moved past, is refused inside its own transaction: no
// state, no event. At the row's epoch the same write commits. On PostgreSQL a claim waits for a
// fenced write already begun, so a new owner never reads the stream under a stale owner's commit.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { suite, type Test } from "uvu";
import * as assert from "uvu/assert";
import pg from "pg";
import { loadConfig } from "../../src/base/config.ts";
import { commitOrderLock, openDatabase, type DatabaseHandle, type PrismaClient } from "../../src/storage/db.ts";
import { EventLog, type StateTx, type Tx } from "../../src/log/event-log.ts";
import { createLocalBus } from "../../src/log/bus.ts";
import { listFence, obligationFence, StaleEpochError } from "../../src/storage/fence.ts";
import { ObligationFences } from "../../src/nests/obligations/fencing.ts";
import { freshDatabase, services, type Services } from "../helpers/scale-services.ts";
import { gated } from "../helpers/gate.ts";

interface Backend {
  prisma: PrismaClient;
  log: EventLog;
  url?: string;
  close(): Promise<void>;
}

async function open(databaseUrl?: string): Promise<Backend> {
  const db = databaseUrl ? await freshDatabase(databaseUrl) : undefined;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "crows-fence-"));
  const config = loadConfig({ CROWS_DATA_DIR: dataDir, ...(db ? { DATABASE_URL: db.url } : {}) });
  const database: DatabaseHandle = await openDatabase(config);
  return {
    prisma: database.prisma,
    log: new EventLog(database, createLocalBus(), { commitOrderLock: commitOrderLock(config) }),
    ...(db ? { url: db.url } : {}),
    close: async () => {
      await database.prisma.$disconnect();
      await db?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A running list at `epoch` (as after that many claims), with three items. */
async function makeList(prisma: PrismaClient, listId: string, epoch: number): Promise<void> {
  await prisma.todoList.create({
    data: {
      id: listId,
      requester: "fencing",
      text: "x",
      tokenBudget: 1000,
      ownerId: "new-owner",
      epoch,
      items: { create: [1, 2, 3].map((n) => ({ id: `${listId}-${n}`, n, text: `item ${n}` })) },
    },
  });
  await prisma.item.update({ where: { id: `${listId}-2` }, data: { stage: "awaiting_output" } });
  await prisma.approval.create({
    data: { itemId: `${listId}-2`, target: "output", status: "pending", deadline: new Date(Date.now() - 1) },
  });
}

async function rowsOf(prisma: PrismaClient, listId: string) {
  const [list, items, approvals, events] = await Promise.all([
    prisma.todoList.findUniqueOrThrow({
      where: { id: listId },
      select: { status: true, tokensUsed: true, banterCount: true, epoch: true },
    }),
    prisma.item.findMany({ where: { listId }, orderBy: { n: "asc" }, select: { stage: true, skipReason: true } }),
    prisma.approval.findMany({ where: { item: { listId } }, select: { status: true } }),
    prisma.event.count({ where: { stream: `list:${listId}` } }),
  ]);
  return { list, items, approvals, events };
}

/** Each write path of a list's owner: the state it writes in its transaction and the events it appends. */
const listWrites: Array<{
  label: string;
  build: (tx: StateTx, listId: string) => Promise<Array<{ name: string; payload: object }>>;
}> = [
  { label: "a flight's crow.flying", build: async () => [{ name: "crow.flying", payload: { crow: "Inky" } }] },
  {
    label: "a landing and its tokens",
    build: async (tx, listId) => {
      await tx.addTokens(listId, 42);
      return [{ name: "crow.landed", payload: { crow: "Inky", ok: true, tokens: 42 } }];
    },
  },
  {
    label: "an item's stage move (item.triaged)",
    build: async (tx, listId) => {
      assert.ok(await tx.moveItem(`${listId}-1`, "pending", { stage: "awaiting_triage", mode: "solo" }));
      return [{ name: "item.triaged", payload: { item_id: `${listId}-1` } }];
    },
  },
  {
    label: "a skip",
    build: async (tx, listId) => {
      assert.ok(await tx.skipItem(`${listId}-3`, "failure"));
      return [{ name: "item.skipped", payload: { item_id: `${listId}-3` } }];
    },
  },
  {
    label: "a banter slot and its line",
    build: async (tx, listId) => {
      await tx.spendBanterSlot(listId);
      return [{ name: "crow.banter", payload: { text: "hi" } }];
    },
  },
  {
    label: "the timeout verdict at the deadline",
    build: async (tx, listId) => {
      assert.ok(await tx.decideApproval(`${listId}-2`, "output", "timeout", new Date()));
      return [{ name: "verdict", payload: { verdict: "timeout" } }];
    },
  },
  {
    label: "list.finished",
    build: async (tx, listId) => {
      assert.ok(await tx.finishList(listId, new Date()));
      return [{ name: "list.finished", payload: {} }];
    },
  },
];

/** Each stage move of an obligation's holder: the conditional update it makes, with the fence's clause. */
const obligationMoves: Array<{
  label: string;
  stage: string;
  move: (tx: Tx, id: string, fence: object) => Promise<number>;
}> = [
  {
    label: "a crow's claim",
    stage: "awaiting_claim",
    move: async (tx, id, fence) =>
      (
        await tx.obligation.updateMany({
          where: { id, stage: "awaiting_claim", ...fence },
          data: { stage: "claimed", respondent: "Pepper", claimedAt: new Date() },
        })
      ).count,
  },
  {
    label: "an answer (deliver or decline)",
    stage: "claimed",
    move: async (tx, id, fence) =>
      (
        await tx.obligation.updateMany({
          where: { requestId: id, stage: { in: ["awaiting_claim", "claimed"] }, ...fence },
          data: { stage: "answered", answerId: "m9", closedAt: new Date() },
        })
      ).count,
  },
  {
    label: "a hand-on",
    stage: "claimed",
    move: async (tx, id, fence) =>
      (
        await tx.obligation.updateMany({
          where: { id, OR: [{ stage: "claimed" }, { stage: "awaiting_claim" }], ...fence },
          data: { stage: "awaiting_claim", respondent: "" },
        })
      ).count,
  },
  {
    label: "a nudge",
    stage: "claimed",
    move: async (tx, id, fence) =>
      (
        await tx.obligation.updateMany({
          where: { id, stage: "claimed", nudgeId: "", ...fence },
          data: { nudgeId: "m8", nudgedAt: new Date() },
        })
      ).count,
  },
  {
    label: "an ask's expiry",
    stage: "awaiting_claim",
    move: async (tx, id, fence) =>
      (
        await tx.obligation.updateMany({
          where: { id, stage: { in: ["awaiting_claim", "claimed"] }, ...fence },
          data: { stage: "declined", closedAt: new Date() },
        })
      ).count,
  },
];

function backendSuite(name: string, databaseUrl: () => string | undefined, needs?: (runner: Test) => string | null) {
  const runner = suite(`fencing-writes (${name})`);
  const s = gated(runner, needs ? needs(runner) : null);
  let b: Backend;
  let n = 0;
  s.before(async () => {
    b = await open(databaseUrl());
  });
  s.after(async () => {
    await b?.close();
  });

  for (const write of listWrites) {
    s(`${write.label}: refused at a stale epoch, inside its transaction; committed at the list's epoch`, async () => {
      const listId = `lst${name}${++n}`;
      const stream = `list:${listId}`;
      await makeList(b.prisma, listId, 2); // claimed twice: the first owner held epoch 1
      const before = await rowsOf(b.prisma, listId);
      let built = false;
      const refused = await b.log
        .fencedAppend(stream, listFence(listId, 1), async (tx) => {
          built = true;
          return write.build(tx, listId);
        })
        .then(
          () => null,
          (error: unknown) => error,
        );
      assert.instance(refused, StaleEpochError);
      assert.equal([(refused as StaleEpochError).fence.epoch, (refused as StaleEpochError).current], [1, 2]);
      assert.not.ok(built, "refused at the transaction's first statement, before any write");
      assert.equal(await rowsOf(b.prisma, listId), before, "no state and no event");

      const stored = await b.log.fencedAppend(stream, listFence(listId, 2), (tx) => write.build(tx, listId));
      assert.is(stored.length, 1);
      assert.is((await rowsOf(b.prisma, listId)).events, 1, "the owner at the list's epoch writes");
    });
  }

  s("a Prisma write (fencedAppendWith) is refused the same way", async () => {
    const listId = `lst${name}${++n}`;
    await makeList(b.prisma, listId, 3);
    const before = await rowsOf(b.prisma, listId);
    const refused = await b.log
      .fencedAppendWith(`list:${listId}`, listFence(listId, 2), async (tx) => {
        await tx.item.update({ where: { id: `${listId}-1` }, data: { stage: "working" } });
        return [{ name: "crow.flying", payload: {} }];
      })
      .catch((error: unknown) => error);
    assert.instance(refused, StaleEpochError);
    assert.equal(await rowsOf(b.prisma, listId), before);
    await b.log.fencedAppendWith(`list:${listId}`, listFence(listId, 3), async () => [
      { name: "crow.flying", payload: {} },
    ]);
    assert.is((await rowsOf(b.prisma, listId)).events, 1);
  });

  for (const move of obligationMoves) {
    s(`an obligation's ${move.label}: refused at a stale epoch, inside its transaction`, async () => {
      const id = `m${name}${++n}`;
      await b.prisma.obligation.create({
        data: { id, requestId: id, nestId: "bakery", respondent: "Pepper", stage: move.stage, ownerId: "b", epoch: 2 },
      });
      const before = await b.prisma.obligation.findUniqueOrThrow({ where: { id } });
      // This instance held it at epoch 1, and let it go (or has not noticed yet).
      const stale = new ObligationFences(() => undefined);
      stale.retire(id, 1);
      const outcome = await b.log
        .appendWith(`nest:${id}`, async (tx) => {
          const moved = await move.move(tx, id, stale.where([id]));
          if (moved === 0) throw (await stale.stale(tx, [id])) ?? new Error("refused, but not by the fence");
          return [{ name: "message", payload: {} }];
        })
        .catch((error: unknown) => error);
      assert.instance(outcome, StaleEpochError);
      assert.equal((outcome as StaleEpochError).fence, obligationFence(id, 1));
      assert.is((outcome as StaleEpochError).current, 2);
      assert.equal(await b.prisma.obligation.findUniqueOrThrow({ where: { id } }), before, "the row is as it was");
      assert.is(await b.prisma.event.count({ where: { stream: `nest:${id}` } }), 0, "no event");

      const current = new ObligationFences((held) => (held === id ? 2 : undefined));
      await b.log.appendWith(`nest:${id}`, async (tx) => {
        assert.is(await move.move(tx, id, current.where([id])), 1, "the holder at the row's epoch moves it");
        return [{ name: "message", payload: {} }];
      });
    });
  }

  if (name === "postgres")
    s("a claim waits for a fenced write already begun, and the write commits before the epoch moves", async () => {
      const listId = `lst${name}${++n}`;
      await makeList(b.prisma, listId, 1);
      const other = new pg.Client({ connectionString: b.url! });
      await other.connect();
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let fenceHeld!: () => void;
      const inside = new Promise<void>((resolve) => (fenceHeld = resolve));
      try {
        const write = b.log.fencedAppend(`list:${listId}`, listFence(listId, 1), async () => {
          fenceHeld();
          await held; // the stale owner freezes inside its transaction, the list's row locked
          return [{ name: "crow.landed", payload: {} }];
        });
        await inside;
        let claimed = false;
        const claim = other
          .query(`UPDATE "TodoList" SET "epoch" = "epoch" + 1, "ownerId" = 'b' WHERE "id" = $1 RETURNING "epoch"`, [
            listId,
          ])
          .then((r) => {
            claimed = true;
            return r.rows[0].epoch as number;
          });
        // The claim is blocked on the row: prove it by a lock wait PostgreSQL itself reports.
        for (const deadline = Date.now() + 20_000; ; ) {
          const { rows } = await b.prisma
            .$queryRawUnsafe<Array<{ n: number }>>(
              `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'UPDATE "TodoList" SET "epoch" = "epoch" + 1%'`,
            )
            .then((rows) => ({ rows }));
          if (rows[0]!.n >= 1) break;
          if (Date.now() > deadline) throw new Error("the claim never waited for the fenced write");
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
        assert.not.ok(claimed, "the claim waits");
        release();
        await write;
        assert.is(await claim, 2, "then the claim takes the next epoch");
        const events = await b.prisma.event.count({ where: { stream: `list:${listId}` } });
        assert.is(events, 1, "the write that began first committed, before the claim: the new owner reads it");
        const late = await b.log
          .fencedAppend(`list:${listId}`, listFence(listId, 1), async () => [{ name: "crow.landed", payload: {} }])
          .catch((error: unknown) => error);
        assert.instance(late, StaleEpochError, "and the next write at the old epoch is refused");
      } finally {
        release();
        await other.end();
      }
    });

  runner.run();
}

backendSuite("sqlite", () => undefined);
let pgServices: Services | null = null;
backendSuite(
  "postgres",
  () => pgServices!.pgUrl,
  (runner) => {
    pgServices = services("fencing-writes (PostgreSQL half)", runner);
    return pgServices ? null : "no PostgreSQL/Redis";
  },
);

// The flock's hot state commits with its events or not at all ("an event commits, together with the
// state change it belongs to, before anyone is told"): EventLog.appendState runs the
// state statements of src/storage/flock-state.ts and the event INSERT in one transaction on the
// log's own connection. On SQLite and on PostgreSQL: a failure at any point of the transaction
// leaves neither the state nor the event; nothing uncommitted is seen from outside; what the
// statements write reads back through Prisma exactly as Prisma's own writes would.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { suite, type Test } from "uvu";
import * as assert from "uvu/assert";
import { loadConfig } from "../../src/base/config.ts";
import { commitOrderLock, openDatabase, type DatabaseHandle, type PrismaClient } from "../../src/storage/db.ts";
import { EventLog, type StateTx } from "../../src/log/event-log.ts";
import { createLocalBus } from "../../src/log/bus.ts";
import { NAMED_ORDER_LOCK } from "../../src/storage/flock-state.ts";
import { ITEM_STAGES } from "../../src/flock/stages.ts";
import pg from "pg";
import { freshDatabase, services, type Services } from "../helpers/scale-services.ts";
import { gated } from "../helpers/gate.ts";

interface Backend {
  database: DatabaseHandle;
  prisma: PrismaClient;
  log: EventLog;
  /** PostgreSQL's URL (none on SQLite). */
  url?: string;
  close(): Promise<void>;
}

async function openSqlite(): Promise<Backend> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "crows-state-"));
  const config = loadConfig({ CROWS_DATA_DIR: dataDir });
  const database = await openDatabase(config);
  const prisma = database.prisma;
  return {
    database,
    prisma,
    log: new EventLog(database, createLocalBus(), { commitOrderLock: commitOrderLock(config) }),
    close: async () => {
      await prisma.$disconnect();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function openPostgres(adminUrl: string): Promise<Backend> {
  const db = await freshDatabase(adminUrl);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "crows-state-"));
  const config = loadConfig({ CROWS_DATA_DIR: dataDir, DATABASE_URL: db.url });
  const database = await openDatabase(config);
  const prisma = database.prisma;
  return {
    database,
    prisma,
    url: db.url,
    log: new EventLog(database, createLocalBus(), { commitOrderLock: commitOrderLock(config) }),
    close: async () => {
      await prisma.$disconnect();
      await db.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

class Boom extends Error {}

/** Every hot state row a list touches, as Prisma reads it. */
async function snapshot(prisma: PrismaClient, listId: string) {
  const [list, items, approvals, trust, entries] = await Promise.all([
    prisma.todoList.findUnique({ where: { id: listId }, select: { status: true, tokensUsed: true, finishedAt: true } }),
    prisma.item.findMany({
      where: { listId },
      orderBy: { n: "asc" },
      select: { id: true, stage: true, mode: true, taskType: true, answer: true, crows: true, skipReason: true },
    }),
    prisma.approval.findMany({
      where: { item: { listId } },
      orderBy: { id: "asc" },
      select: { itemId: true, target: true, status: true },
    }),
    prisma.trust.findMany({ orderBy: [{ holder: "asc" }, { taskType: "asc" }] }),
    prisma.trustEntry.count(),
  ]);
  return { list, items, approvals, trust: trust.map(({ updatedAt: _u, ...t }) => t), entries };
}

async function makeList(prisma: PrismaClient, listId: string, count: number) {
  await prisma.todoList.create({
    data: {
      id: listId,
      requester: "tester",
      text: "x",
      tokenBudget: 1000,
      items: {
        create: Array.from({ length: count }, (_, i) => ({
          id: `${listId}-${i + 1}`,
          n: i + 1,
          text: `item ${i + 1}`,
        })),
      },
    },
  });
}

/** The state writes of one list step each, then where a failure strikes inside the transaction. */
const steps: Array<{ label: string; write: (tx: StateTx, listId: string) => Promise<void> }> = [
  {
    label: "an item's triage and its pending approval",
    write: async (tx, listId) => {
      await tx.moveItem(`${listId}-1`, "pending", {
        stage: "awaiting_triage",
        mode: "split",
        taskType: "research",
        subtasks: '["a","b"]',
        reason: "why",
      });
      await tx.openApproval(`${listId}-1`, "triage", new Date(Date.now() + 60_000));
    },
  },
  {
    label: "a token count",
    write: async (tx, listId) => {
      await tx.addTokens(listId, 321);
    },
  },
  {
    label: "an auto verdict with a trust record and its history entry",
    write: async (tx, listId) => {
      await tx.createDecidedApproval(`${listId}-2`, "output", "auto", new Date());
      await tx.saveTrust({
        holder: "ada",
        taskType: "research",
        level: 1,
        streak: 0,
        approvals: 1,
        rejections: 0,
        autos: 0,
      });
      await tx.addTrustEntry({
        holder: "ada",
        taskType: "research",
        verdict: "approved",
        subject: `${listId}-2`,
        from: 0,
        to: 1,
        streak: 0,
        at: new Date(),
        actor: { kind: "owner" },
      });
    },
  },
  {
    label: "a skip and the list's end",
    write: async (tx, listId) => {
      assert.ok(await tx.skipItem(`${listId}-3`, "budget"));
      assert.ok(await tx.finishList(listId, new Date()));
    },
  },
];

const failures: Array<{ label: string; fail: (tx: StateTx, listId: string) => Promise<void> }> = [
  { label: "the code throws after the writes", fail: async () => Promise.reject(new Boom("after the state writes")) },
  {
    // A statement the database itself refuses, after the others succeeded: a second approval row.
    label: "the database refuses a later statement",
    fail: async (tx, listId) => {
      await tx.createDecidedApproval(`${listId}-4`, "triage", "auto", new Date());
      await tx.createDecidedApproval(`${listId}-4`, "triage", "auto", new Date());
    },
  },
];

/**
 * One backend's suite. `needs` checks for the service it runs on and names what is missing; its
 * tests then register as skipped (or, on CI, a failure is registered), all under this suite.
 */
function backendSuite(name: string, open: () => Promise<Backend>, needs?: (runner: Test) => string | null) {
  const runner = suite(name);
  const s = gated(runner, needs ? needs(runner) : null);
  let b: Backend;
  let lists = 0;
  s.before(async () => {
    b = await open();
  });
  s.after(async () => {
    await b?.close();
  });

  for (const step of steps) {
    for (const failure of failures) {
      s(`${step.label}: ${failure.label} leaves neither the state nor the event`, async () => {
        const listId = `lst${name}${++lists}`;
        const stream = `list:${listId}`;
        await makeList(b.prisma, listId, 4);
        await b.log.append(stream, "list.started", { n: 1 });
        const before = await snapshot(b.prisma, listId);
        let reached = false;
        const failed = await b.log
          .appendState(stream, async (tx) => {
            await step.write(tx, listId);
            reached = true;
            await failure.fail(tx, listId);
            return [
              { name: "verdict", payload: { list_id: listId } },
              { name: "trust.changed", payload: { list_id: listId } },
            ];
          })
          .then(
            () => null,
            (error: unknown) => error,
          );
        assert.ok(reached, "the state writes ran");
        assert.ok(failed instanceof Error, "the append failed");
        assert.equal(await snapshot(b.prisma, listId), before, "no state change survived");
        assert.equal(
          (await b.log.read(stream)).map((e) => e.name),
          ["list.started"],
          "no event survived",
        );
        assert.is(await b.log.lastSeq(stream), 1);
        // The log goes on at the next seq, with the state beside it.
        const [event] = await b.log.appendState(stream, async (tx) => {
          await step.write(tx, listId);
          return [{ name: "verdict", payload: { list_id: listId } }];
        });
        assert.is(event!.seq, 2);
        assert.not.equal(await snapshot(b.prisma, listId), before, "the same writes commit when nothing fails");
      });
    }
  }

  s("while the transaction is open, nobody outside sees its state or its events; then both at once", async () => {
    const listId = `lst${name}${++lists}`;
    const stream = `list:${listId}`;
    await makeList(b.prisma, listId, 2);
    let opened!: () => void;
    const open = new Promise<void>((resolve) => (opened = resolve));
    let finish!: () => void;
    const finishing = new Promise<void>((resolve) => (finish = resolve));
    const appended = b.log.appendState(stream, async (tx) => {
      await tx.moveItem(`${listId}-1`, "pending", { stage: "awaiting_output", answer: "forty-two", crows: '["ada"]' });
      await tx.openApproval(`${listId}-1`, "output", new Date(Date.now() + 60_000));
      await tx.addTokens(listId, 50);
      opened();
      await finishing;
      return [{ name: "item.answered", payload: { list_id: listId, answer: "forty-two" } }];
    });
    await open;
    // The log's own reads (another connection on both databases) see nothing yet.
    assert.is((await b.log.state.item(`${listId}-1`))!.stage, "pending");
    assert.is(await b.log.state.approval(`${listId}-1`, "output"), null);
    assert.equal(await b.log.read(stream), []);
    finish();
    const [event] = await appended;
    assert.is(event!.seq, 1);
    const item = (await b.log.state.item(`${listId}-1`))!;
    assert.is(item.stage, "awaiting_output");
    assert.is(item.answer, "forty-two");
    assert.is((await b.log.state.approval(`${listId}-1`, "output"))!.status, "pending");
    assert.is((await b.prisma.todoList.findUniqueOrThrow({ where: { id: listId } })).tokensUsed, 50);
  });

  s("an item leaves a stage once: a move from a stage it is not in writes nothing, whatever the pair", async () => {
    const listId = `lst${name}${++lists}`;
    const stream = `list:${listId}`;
    const pairs = ITEM_STAGES.flatMap((at) => ITEM_STAGES.map((from) => ({ at, from })));
    await makeList(b.prisma, listId, pairs.length);
    for (const [i, { at }] of pairs.entries())
      await b.prisma.item.update({ where: { id: `${listId}-${i + 1}` }, data: { stage: at, answer: `kept ${i}` } });
    for (const [i, { at, from }] of pairs.entries()) {
      const id = `${listId}-${i + 1}`;
      const to = ITEM_STAGES[(ITEM_STAGES.indexOf(from) + 1) % ITEM_STAGES.length]!;
      const moved = await b.log.appendState(stream, async (tx) => {
        const row = await tx.moveItem(id, from, { stage: to, answer: `moved ${i}` });
        return row ? [{ name: "item.answered", payload: { list_id: listId, item_id: id } }] : [];
      });
      const stored = (await b.log.state.item(id))!;
      if (at === from) {
        assert.is(moved.length, 1, `${at} -> ${to}`);
        assert.equal([stored.stage, stored.answer], [to, `moved ${i}`]);
      } else {
        assert.is(moved.length, 0, `an item at ${at} moved as if from ${from}`);
        assert.equal([stored.stage, stored.answer], [at, `kept ${i}`]);
      }
    }
    const moves = pairs.filter(({ at, from }) => at === from).length;
    assert.is((await b.log.read(stream)).length, moves);
    assert.is(
      await b.log
        .appendState(stream, async (tx) =>
          (await tx.moveItem(`${listId}-none`, "pending", { stage: "working" })) ? [{ name: "x", payload: {} }] : [],
        )
        .then((e) => e.length),
      0,
    );
  });

  s("what the statements write reads back through Prisma as Prisma writes it", async () => {
    const listId = `lst${name}${++lists}`;
    const stream = `list:${listId}`;
    await makeList(b.prisma, listId, 3);
    const deadline = new Date(Date.UTC(2031, 4, 6, 7, 8, 9, 123));
    const decidedAt = new Date(Date.UTC(2030, 0, 2, 3, 4, 5, 678));
    const t0 = Date.now();
    await b.log.appendState(stream, async (tx) => {
      const moved = await tx.moveItem(`${listId}-1`, "pending", {
        stage: "awaiting_triage",
        mode: "murder",
        taskType: "code",
        subtasks: "[]",
        reason: "three lenses",
      });
      assert.is(moved!.listId, listId);
      assert.is(moved!.mode, "murder");
      await tx.openApproval(`${listId}-1`, "triage", deadline);
      await tx.openApproval(`${listId}-1`, "triage", new Date(0)); // already open: kept as it was
      await tx.createDecidedApproval(`${listId}-2`, "triage", "auto", decidedAt);
      return [];
    });
    // A field left out keeps its value; a later move sets only what it names.
    await b.log.appendState(stream, async (tx) => {
      await tx.moveItem(`${listId}-1`, "awaiting_triage", { stage: "working" });
      return [];
    });
    const item = await b.prisma.item.findUniqueOrThrow({ where: { id: `${listId}-1` } });
    assert.equal(
      { stage: item.stage, mode: item.mode, taskType: item.taskType, reason: item.reason },
      { stage: "working", mode: "murder", taskType: "code", reason: "three lenses" },
    );
    assert.ok(
      item.updatedAt.getTime() >= t0 - 5 && item.updatedAt.getTime() <= Date.now() + 5,
      `updatedAt ${item.updatedAt.toISOString()}`,
    );
    const stateItem = (await b.log.state.item(`${listId}-1`))!;
    assert.is(stateItem.updatedAt.toISOString(), item.updatedAt.toISOString());
    const pending = await b.prisma.approval.findUniqueOrThrow({
      where: { itemId_target: { itemId: `${listId}-1`, target: "triage" } },
    });
    assert.is(pending.deadline.toISOString(), deadline.toISOString());
    assert.is(pending.status, "pending");
    assert.is((await b.log.state.approval(`${listId}-1`, "triage"))!.deadline.toISOString(), deadline.toISOString());
    const auto = await b.prisma.approval.findUniqueOrThrow({
      where: { itemId_target: { itemId: `${listId}-2`, target: "triage" } },
    });
    assert.is(auto.decidedAt!.toISOString(), decidedAt.toISOString());
    // Deciding: only a pending approval moves, once.
    const decided: boolean[] = [];
    await b.log.appendState(stream, async (tx) => {
      decided.push(await tx.decideApproval(`${listId}-1`, "triage", "approved", decidedAt));
      decided.push(await tx.decideApproval(`${listId}-1`, "triage", "rejected", decidedAt));
      decided.push(await tx.decideApproval(`${listId}-2`, "triage", "rejected", decidedAt));
      decided.push(await tx.decideApproval(`${listId}-3`, "triage", "rejected", decidedAt));
      return [];
    });
    assert.equal(decided, [true, false, false, false]);
    assert.is(
      (
        await b.prisma.approval.findUniqueOrThrow({
          where: { itemId_target: { itemId: `${listId}-1`, target: "triage" } },
        })
      ).status,
      "approved",
    );
    // Trust counters add up across saves; the record's level and streak are the last saved.
    const holder = `holder-${name}`;
    for (const [level, streak, approvals, rejections, autos] of [
      [0, 1, 1, 0, 0],
      [0, 2, 1, 0, 0],
      [1, 0, 1, 0, 0],
      [0, 0, 0, 1, 0],
      [0, 0, 0, 0, 1],
    ] as const) {
      await b.log.appendState(stream, async (tx) => {
        await tx.saveTrust({ holder, taskType: "code", level, streak, approvals, rejections, autos });
        return [];
      });
    }
    const record = await b.prisma.trust.findUniqueOrThrow({ where: { holder_taskType: { holder, taskType: "code" } } });
    assert.equal(
      {
        level: record.level,
        streak: record.streak,
        approvals: record.approvals,
        rejections: record.rejections,
        autos: record.autos,
      },
      { level: 0, streak: 0, approvals: 3, rejections: 1, autos: 1 },
    );
    assert.equal(await b.log.state.trust(holder, "code"), { level: 0, streak: 0 });
    assert.is(await b.log.state.trust(holder, "other"), null);
    // A spun crow's starting trust, read around Prisma.
    await b.prisma.spunCrow.create({ data: { name: `Spun${name}`, persona: "ada", trust: "regular" } });
    assert.is(await b.log.state.spunCrowTrust(`Spun${name}`), "regular");
    assert.is(await b.log.state.spunCrowTrust("nobody"), null);
    assert.is(await b.log.state.spunCrowPersona(`Spun${name}`), "ada");
    assert.is(await b.log.state.spunCrowPersona("nobody"), null);
    await b.prisma.spunCrow.create({ data: { name: `Aspun${name}`, persona: "bo", trust: "stranger" } });
    const names = await b.log.state.spunCrowNames();
    const ours = names.filter((n) => n.endsWith(name));
    assert.equal(ours, [`Aspun${name}`, `Spun${name}`]);
    assert.equal(names, [...names].sort(), "by name");
    // Quarantines: only those still quarantined.
    await b.prisma.quarantine.createMany({
      data: [
        { crow: `Q1${name}`, nestId: "n", flagMsgId: "f", askMsgId: "a", referent: "r1" },
        { crow: `Q2${name}`, nestId: "n", flagMsgId: "f", askMsgId: "a", referent: "r2", status: "reinstated" },
      ],
    });
    assert.equal(
      (await b.log.state.quarantinedCrows()).filter((c) => c.endsWith(name)),
      [`Q1${name}`],
    );
    // A rotation cursor moves in a transaction of its own; a failed one leaves it where it was.
    assert.is(await b.log.state.rotationCursor(`nest${name}`, "core"), null);
    const store = b.database.events;
    await store.writeState((tx) => tx.recordPick(`nest${name}`, "core", "ada"));
    await store.writeState((tx) => tx.recordPick(`nest${name}`, "core", "bo"));
    await store.writeState((tx) => tx.recordPick(`nest${name}`, "borrow", "cy"));
    const failedPick = await store
      .writeState(async (tx) => {
        await tx.recordPick(`nest${name}`, "core", "dee");
        throw new Boom("after the pick");
      })
      .catch((error: unknown) => error);
    assert.instance(failedPick, Boom);
    assert.is(await b.log.state.rotationCursor(`nest${name}`, "core"), "bo");
    assert.is(await b.log.state.rotationCursor(`nest${name}`, "borrow"), "cy");
    const cursor = await b.prisma.rotationCursor.findUniqueOrThrow({
      where: { nestId_ring: { nestId: `nest${name}`, ring: "core" } },
    });
    assert.is(cursor.lastCrow, "bo");
    assert.ok(
      Math.abs(cursor.updatedAt.getTime() - Date.now()) < 60_000,
      `updatedAt ${cursor.updatedAt.toISOString()}`,
    );
    // Skipping: only an item not done or skipped yet.
    const skipped: boolean[] = [];
    await b.prisma.item.update({ where: { id: `${listId}-3` }, data: { stage: "done" } });
    await b.log.appendState(stream, async (tx) => {
      skipped.push(
        await tx.skipItem(`${listId}-2`, "timeout"),
        await tx.skipItem(`${listId}-2`, "budget"),
        await tx.skipItem(`${listId}-3`, "budget"),
      );
      return [];
    });
    assert.equal(skipped, [true, false, false]);
    assert.is((await b.prisma.item.findUniqueOrThrow({ where: { id: `${listId}-2` } })).skipReason, "timeout");
    const finished = await b.log.appendState(stream, async (tx) => {
      await tx.addTokens(listId, 7);
      const list = await tx.finishList(listId, decidedAt);
      return [{ name: "list.finished", payload: { tokens_used: list!.tokensUsed, token_budget: list!.tokenBudget } }];
    });
    assert.equal(JSON.parse(finished[0]!.payload), { tokens_used: 7, token_budget: 1000 });
    const list = await b.prisma.todoList.findUniqueOrThrow({ where: { id: listId } });
    assert.is(list.status, "finished");
    assert.is(list.finishedAt!.toISOString(), decidedAt.toISOString());
  });

  s("appends with state to many streams at once each keep their own order, with plain appends between", async () => {
    const listIds = Array.from({ length: 6 }, () => `lst${name}${++lists}`);
    for (const id of listIds) await makeList(b.prisma, id, 1);
    await Promise.all(
      listIds.map(async (id) => {
        for (let i = 0; i < 10; i++) {
          await Promise.all([
            b.log.append(`list:${id}`, "crow.flying", { i }),
            b.log.appendState(`list:${id}`, async (tx) => {
              await tx.addTokens(id, 1);
              return [{ name: "crow.landed", payload: { i } }];
            }),
          ]);
        }
      }),
    );
    for (const id of listIds) {
      const events = await b.log.read(`list:${id}`);
      assert.equal(
        events.map((e) => e.seq),
        Array.from({ length: 20 }, (_, i) => i + 1),
      );
      assert.is((await b.prisma.todoList.findUniqueOrThrow({ where: { id } })).tokensUsed, 10);
    }
  });

  // PostgreSQL's alone: SQLite has one writer, its ids already are commit order, and no lock to wait on.
  const onPostgres = name === "postgres" ? s : () => {};
  onPostgres(
    "an event read in commit order (a verdict, a trust change) waits for PostgreSQL's commit-order lock; others do not",
    async () => {
      if (!b.url) throw new Error("this test needs PostgreSQL's URL");
      const listId = `lst${name}${++lists}`;
      await makeList(b.prisma, listId, 1);
      const holder = new pg.Client({ connectionString: b.url });
      await holder.connect();
      try {
        await holder.query("BEGIN");
        await holder.query(`SELECT pg_advisory_xact_lock(${NAMED_ORDER_LOCK})`);
        let settled = false;
        const ordered = b.log
          .appendState(`list:${listId}`, async (tx) => {
            await tx.addTokens(listId, 1);
            return [{ name: "verdict", payload: { list_id: listId } }];
          })
          .finally(() => (settled = true));
        // A landing on another list, with no ordered event, commits meanwhile.
        const other = `lst${name}${++lists}`;
        await makeList(b.prisma, other, 1);
        await b.log.appendState(`list:${other}`, async (tx) => {
          await tx.addTokens(other, 1);
          return [{ name: "crow.landed", payload: { list_id: other } }];
        });
        // The proof it waits: PostgreSQL shows a session of this database waiting for an advisory lock.
        const deadline = Date.now() + 15_000;
        for (;;) {
          const { rows } = await holder.query(
            "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
          );
          if (rows[0].n >= 1) break;
          assert.not.ok(settled, "the verdict settled without waiting for the lock");
          if (Date.now() > deadline) throw new Error("the verdict never waited for the commit-order lock");
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
        assert.not.ok(settled, "the verdict waited for the lock");
        assert.is((await b.prisma.todoList.findUniqueOrThrow({ where: { id: listId } })).tokensUsed, 0);
        await holder.query("COMMIT");
        const [event] = await ordered;
        assert.is(event!.name, "verdict");
        assert.is((await b.prisma.todoList.findUniqueOrThrow({ where: { id: listId } })).tokensUsed, 1);
      } finally {
        await holder.end();
      }
    },
  );

  runner.run();
}

backendSuite("sqlite", openSqlite);
let pgServices: Services | null = null;
backendSuite(
  "postgres",
  () => openPostgres(pgServices!.pgUrl),
  (runner) => {
    pgServices = services("event-log-state (PostgreSQL half)", runner);
    return pgServices ? null : "no PostgreSQL/Redis";
  },
);

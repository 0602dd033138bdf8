// Every record a list's run writes about a tool call is fenced by the list's epoch
// (src/flock/tool-calls.ts, docs/tools.md "At most once"): on SQLite and on PostgreSQL, a call's
// start, its end, a read-only call's restart, a new asked or allowed call, a flight's landing and
// the timeout at a call's deadline, written by an owner whose epoch the list has moved past, move
// no row and append no event, and the owner is told to step down (so it never sends the call). The
// owner at the list's epoch writes each one. The owner's own decision comes through any instance
// and is not fenced. A nest crow's call records are fenced the same way by the epoch of the
// obligation its turn answers under.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { suite, type Test } from "uvu";
import * as assert from "uvu/assert";
import { loadConfig } from "../../src/base/config.ts";
import { commitOrderLock, openDatabase, type PrismaClient } from "../../src/storage/db.ts";
import { EventLog } from "../../src/log/event-log.ts";
import { createLocalBus } from "../../src/log/bus.ts";
import { listFence, obligationFence, type StaleEpochError } from "../../src/storage/fence.ts";
import { ToolCallDesk, type CallDraft } from "../../src/flock/tool-calls.ts";
import { StoppedError } from "../../src/flock/approvals.ts";
import type { CallOwner } from "../../src/flock/call-owner.ts";
import { OWNER } from "../../src/base/actor.ts";
import { freshDatabase, services, type Services } from "../helpers/scale-services.ts";
import { gated } from "../helpers/gate.ts";

interface Backend {
  prisma: PrismaClient;
  log: EventLog;
  close(): Promise<void>;
}

async function open(databaseUrl?: string): Promise<Backend> {
  const db = databaseUrl ? await freshDatabase(databaseUrl) : undefined;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "crows-fence-tools-"));
  const config = loadConfig({ CROWS_DATA_DIR: dataDir, ...(db ? { DATABASE_URL: db.url } : {}) });
  const database = await openDatabase(config);
  return {
    prisma: database.prisma,
    log: new EventLog(database, createLocalBus(), { commitOrderLock: commitOrderLock(config) }),
    close: async () => {
      await database.prisma.$disconnect();
      await db?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** An owner at `epoch`: what it was told when the database refused it. */
function ownerAt(listId: string, epoch: number, desk: ToolCallDesk): CallOwner & { refusals: StaleEpochError[] } {
  const refusals: StaleEpochError[] = [];
  return {
    listId,
    nestId: "",
    fence: listFence(listId, epoch),
    refusals,
    // As Flock.stepDown: the instance's waits on the list end.
    fencedOut: (error) => {
      refusals.push(error);
      desk.release(listId);
    },
  };
}

function draft(listId: string, n: number, policy: "allow" | "ask", readOnly = false): CallDraft {
  return {
    listId,
    itemId: `${listId}-1`,
    nestId: "",
    flightKey: `${listId}-1/solo/Inky`,
    crow: "Inky",
    taskType: "other",
    step: 1,
    n,
    modelCallId: `call-${n}`,
    offeredName: "fs__write_file",
    serverId: "srv-fs",
    serverName: "fs",
    tool: "write_file",
    args: "{}",
    policy,
    readOnly,
  };
}

async function snapshot(prisma: PrismaClient, listId: string) {
  const [calls, events] = await Promise.all([
    prisma.toolCall.findMany({
      where: { listId },
      orderBy: { n: "asc" },
      select: { id: true, status: true, landed: true, startedAt: true },
    }),
    prisma.event.count({ where: { stream: `list:${listId}` } }),
  ]);
  return { calls, events };
}

/** The deadline timers are unref'd (they never hold a server open): this keeps the test's loop up meanwhile. */
async function awake<T>(promise: Promise<T>): Promise<T> {
  const alive = setInterval(() => {}, 1000);
  try {
    return await promise;
  } finally {
    clearInterval(alive);
  }
}

function backendSuite(name: string, databaseUrl: () => string | undefined, needs?: (runner: Test) => string | null) {
  const runner = suite(`fencing-tool-calls (${name})`);
  const s = gated(runner, needs ? needs(runner) : null);
  let b: Backend;
  s.before(async () => {
    b = await open(databaseUrl());
  });
  s.after(async () => {
    await b?.close();
  });

  s(
    "a stale owner's tool call records are refused inside their transactions; the owner at the list's epoch writes them",
    async () => {
      const listId = `lst${name}tools`;
      await b.prisma.todoList.create({
        data: { id: listId, requester: "fencing", text: "x", tokenBudget: 1000, ownerId: "b", epoch: 2 },
      });
      const desk = new ToolCallDesk(b.prisma, b.log, 60_000);
      const stale = ownerAt(listId, 1, desk);
      const current = ownerAt(listId, 2, desk);
      const past = new Date(Date.now() - 1000);
      const row = (n: number, status: string, extra: object = {}) =>
        b.prisma.toolCall.create({
          data: { id: `tc${name}${n}`, ...draft(listId, n, "ask"), status, ...extra },
        });
      const approved = await row(1, "approved", { decidedAt: past });
      const started = await row(2, "started", { startedAt: past });
      const readStarted = await row(3, "started", { startedAt: past, policy: "allow", readOnly: true });
      const askedPast = await row(4, "asked", { deadline: past });
      const askedOpen = await row(5, "asked", { deadline: new Date(Date.now() + 600_000) });
      const before = await snapshot(b.prisma, listId);

      const refused = async (what: string, write: () => Promise<unknown>) => {
        const count = stale.refusals.length;
        const outcome = await awake(
          write().then(
            () => null,
            (error: unknown) => error,
          ),
        );
        assert.instance(outcome, StoppedError, `${what}: the write's caller stops`);
        assert.is(stale.refusals.length, count + 1, `${what}: the owner is told to step down`);
        assert.equal(stale.refusals.at(-1)!.current, 2);
        assert.equal(await snapshot(b.prisma, listId), before, `${what}: no row moved, no event`);
      };
      await refused("a start", () => desk.start(approved, stale));
      await refused("an end", () => desk.recordEnd(started, stale, { ok: true, result: "done" }));
      await refused("an unknown end", () =>
        desk.recordEnd(started, stale, { ok: false, result: "?", error: "tool_outcome_unknown" }, "unknown"),
      );
      await refused("a read-only restart", () => desk.restartReadOnly(readStarted, stale));
      await refused("a new asked call", () => desk.openAsked(draft(listId, 6, "ask"), stale));
      await refused("a new allowed call", () => desk.openAllowed(draft(listId, 7, "allow", true), stale, "allow"));
      await refused("a flight's landing", () => desk.landed(`${listId}-1/solo/Inky`, stale));
      // The timeout at a deadline already past: the stale owner's timer fires at once and is refused.
      await refused("the timeout at the deadline", () => desk.waitFor(askedPast, stale));

      // The owner's decision is the owner's, through any instance: never fenced.
      assert.is(await desk.decide(askedOpen.id, { approve: true }, OWNER), "approved");

      // The owner at the list's epoch writes every one of them.
      assert.ok(await desk.start(approved, current), "started");
      await desk.recordEnd(started, current, { ok: true, result: "done" });
      await desk.restartReadOnly(readStarted, current);
      assert.is(await awake(desk.waitFor(askedPast, current)), "timeout");
      const opened = await desk.openAsked(draft(listId, 6, "ask"), current);
      assert.is(opened.status, "asked");
      assert.is((await desk.openAllowed(draft(listId, 7, "allow", true), current, "allow"))?.status, "started");
      await desk.landed(`${listId}-1/solo/Inky`, current);
      assert.equal(current.refusals, []);
      const after = await snapshot(b.prisma, listId);
      assert.equal(after.calls.map((c) => [c.id.replace(`tc${name}`, ""), c.status, c.landed]).slice(0, 5), [
        ["1", "started", true],
        ["2", "returned", true],
        ["3", "started", true],
        ["4", "timeout", true],
        ["5", "approved", true],
      ]);
      const names = (
        await b.prisma.event.findMany({ where: { stream: `list:${listId}` }, orderBy: { seq: "asc" } })
      ).map((e) => e.name);
      assert.equal(names, [
        "tool.decided",
        "tool.called",
        "tool.returned",
        "tool.called",
        "tool.decided",
        "tool.asked",
        "tool.called",
      ]);
      desk.stop();
    },
  );

  s(
    "a nest crow's call records are fenced by its obligation's epoch: a stale turn's are refused, the holder's written",
    async () => {
      const requestId = `${name}bench-7`;
      const nestId = `${name}bench`;
      await b.prisma.obligation.create({
        data: { id: requestId, requestId, nestId, respondent: "Hugin", stage: "claimed", ownerId: "b", epoch: 2 },
      });
      const desk = new ToolCallDesk(b.prisma, b.log, 60_000);
      const turnAt = (epoch: number): CallOwner & { refusals: StaleEpochError[] } => {
        const refusals: StaleEpochError[] = [];
        return {
          listId: "",
          nestId,
          fence: obligationFence(requestId, epoch),
          refusals,
          fencedOut: (e) => refusals.push(e),
        };
      };
      const stale = turnAt(1);
      const current = turnAt(2);
      const flightKey = `${requestId}/nest/Hugin`;
      const nestDraft = (n: number, policy: "allow" | "ask"): CallDraft => ({
        ...draft("", n, policy),
        itemId: requestId,
        nestId,
        flightKey,
        crow: "Hugin",
      });
      const past = new Date(Date.now() - 1000);
      const approved = await b.prisma.toolCall.create({
        data: { id: `tc${name}nest1`, ...nestDraft(1, "ask"), status: "approved", decidedAt: past },
      });
      const sideLog = () => b.prisma.event.count({ where: { stream: `watch:${nestId}` } });
      const calls = () =>
        b.prisma.toolCall.findMany({
          where: { nestId },
          orderBy: { n: "asc" },
          select: { status: true, landed: true },
        });
      const before = { events: await sideLog(), calls: await calls() };

      const refused = async (what: string, write: () => Promise<unknown>) => {
        const count = stale.refusals.length;
        const outcome = await write().then(
          () => null,
          (error: unknown) => error,
        );
        assert.instance(outcome, StoppedError, `${what}: the turn stops`);
        assert.is(stale.refusals.length, count + 1, `${what}: the turn steps down`);
        assert.equal(stale.refusals.at(-1)!.fence, obligationFence(requestId, 1));
        assert.is(stale.refusals.at(-1)!.current, 2);
        assert.equal({ events: await sideLog(), calls: await calls() }, before, `${what}: no row moved, no event`);
      };
      await refused("a new allowed call", () => desk.openAllowed(nestDraft(2, "allow"), stale, "allow"));
      await refused("an approved call's start", () => desk.start(approved, stale));
      await refused("a new asked call", () => desk.openAsked(nestDraft(3, "ask"), stale));
      await refused("the turn's landing", () => desk.landed(flightKey, stale));

      // The turn at the obligation's epoch writes them, on the nest's side log.
      assert.ok((await desk.openAllowed(nestDraft(2, "allow"), current, "allow"))?.status === "started");
      assert.ok(await desk.start(approved, current));
      await desk.landed(flightKey, current);
      assert.equal(current.refusals, []);
      assert.equal(await calls(), [
        { status: "started", landed: true },
        { status: "started", landed: true },
      ]);
      const names = (
        await b.prisma.event.findMany({ where: { stream: `watch:${nestId}` }, orderBy: { seq: "asc" } })
      ).map((e) => e.name);
      assert.equal(names, ["tool.called", "tool.called"]);
      desk.stop();
    },
  );

  runner.run();
}

backendSuite("sqlite", () => undefined);
let pgServices: Services | null = null;
backendSuite(
  "postgres",
  () => pgServices!.pgUrl,
  (runner) => {
    pgServices = services("fencing-tool-calls (PostgreSQL half)", runner);
    return pgServices ? null : "no PostgreSQL/Redis";
  },
);

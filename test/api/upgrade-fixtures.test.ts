// Upgrades: each SQL dump under test/fixtures/upgrade/ is a database written by an earlier state of
// crows, named by its commit or release tag (docs/operations.md "Upgrades and release fixtures" says
// how one is made). The test restores it into a fresh file, and the current server opens and
// migrates it: the trust ledger is unchanged by the migration (its history's entries gain their
// approvals' deciders); every stored event is still there byte for byte (and a finished list's
// replay over GET /api/events is exactly frame() of its stored events); the lists left running
// resume and finish.
import { test } from "uvu";
import * as assert from "uvu/assert";
import http from "node:http";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { deployMigrations } from "../../src/storage/migrate.ts";
import { checkDatabase } from "../../src/storage/backup.ts";
import { frame, OPENING } from "../../compat/sse.ts";
import { listStream } from "../../src/base/streams.ts";
import { startTestServer } from "../helpers/server.ts";
import { eventually } from "../helpers/scale-services.ts";

const FIXTURES = fileURLToPath(new URL("../fixtures/upgrade", import.meta.url));

type EventRow = { id: number; stream: string; seq: number; name: string; payload: string; ts: number };

/** The approvals with their deciders (none before deciders were kept). */
function approvalsOf(db: Database.Database): Array<{
  itemId: string;
  target: string;
  status: string;
  decidedBy: string;
  decidedByTokenId: string | null;
  decidedByTokenName: string | null;
}> {
  const columns = (db.prepare(`PRAGMA table_info("Approval")`).all() as Array<{ name: string }>).map((c) => c.name);
  const decider = columns.includes("decidedBy")
    ? `"decidedBy", "decidedByTokenId", "decidedByTokenName"`
    : `'' AS "decidedBy", NULL AS "decidedByTokenId", NULL AS "decidedByTokenName"`;
  return db.prepare(`SELECT "itemId", "target", "status", ${decider} FROM "Approval"`).all() as any;
}

/** A trust entry's columns from before the ledger kept deciders. */
const ENTRY_COLUMNS = ["id", "holder", "taskType", "verdict", "subject", "from", "to", "streak", "at"];
const asFirstWritten = (entries: Array<Record<string, unknown>>) =>
  entries.map((e) => Object.fromEntries(ENTRY_COLUMNS.map((c) => [c, e[c]])));

function read(file: string) {
  const db = new Database(file, { readonly: true });
  try {
    return {
      events: db.prepare("SELECT id, stream, seq, name, payload, ts FROM Event ORDER BY id").all() as EventRow[],
      trust: db
        .prepare(
          "SELECT holder, taskType, level, streak, approvals, rejections, autos, updatedAt FROM Trust ORDER BY holder, taskType",
        )
        .all(),
      trustEntries: db.prepare("SELECT * FROM TrustEntry ORDER BY id").all() as Array<Record<string, unknown>>,
      approvals: approvalsOf(db),
      running: (
        db.prepare("SELECT id FROM TodoList WHERE status = 'running' ORDER BY id").all() as Array<{ id: string }>
      ).map((r) => r.id),
      finished: (
        db.prepare("SELECT id FROM TodoList WHERE status = 'finished' ORDER BY id").all() as Array<{ id: string }>
      ).map((r) => r.id),
    };
  } finally {
    db.close();
  }
}

function replay(url: string, expectedLength: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers: { accept: "text/event-stream" } });
    const timer = setTimeout(() => {
      request.destroy();
      reject(new Error(`${url}: the replay did not arrive in 10 s`));
    }, 10_000);
    request.on("response", (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => {
        chunks.push(chunk);
        if (Buffer.concat(chunks).length >= expectedLength) {
          clearTimeout(timer);
          request.destroy();
          resolve(Buffer.concat(chunks));
        }
      });
      response.on("error", () => {});
    });
    request.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

const fixtures = readdirSync(FIXTURES)
  .filter((f) => f.endsWith(".sql"))
  .sort();

/** The database a fixture's dump describes, as `sqlite3 .dump` wrote it from the old server's file. */
function restore(fixture: string, file: string): void {
  const db = new Database(file);
  try {
    db.exec(readFileSync(path.join(FIXTURES, fixture), "utf8"));
  } finally {
    db.close();
  }
}

test("there is a fixture for the first landing and for the last release", () => {
  assert.ok(fixtures.length >= 2, fixtures.join(", "));
});

for (const fixture of fixtures) {
  test(`upgrade from ${fixture}: migrated, trust unchanged, events byte for byte, running lists finish`, async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "crows-upgrade-"));
    const file = path.join(dir, "crows.db");
    try {
      restore(fixture, file);
      const before = read(file);
      assert.ok(
        before.running.length > 0 && before.finished.length > 0 && before.trustEntries.length > 0,
        "the fixture holds running and finished lists and trust history",
      );

      await deployMigrations(`file:${file}`);
      const migrated = read(file);
      assert.equal(migrated.trust, before.trust, "the trust ledger is unchanged by the migration");
      assert.equal(asFirstWritten(migrated.trustEntries), asFirstWritten(before.trustEntries));
      // Each entry takes the decider of the approval that wrote it: holder flock the item's triage,
      // a crow its output (the Sentry's entries answer asks: only the log knows who replied).
      const backfilled = before.trustEntries.map((e) => {
        const target = e.holder === "flock" ? "triage" : "output";
        const approval =
          e.taskType === "triage/watch"
            ? undefined
            : before.approvals.find((a) => a.itemId === e.subject && a.target === target && a.status === e.verdict);
        return [
          approval?.decidedBy ?? "",
          approval?.decidedByTokenId ?? null,
          approval?.decidedByTokenName ?? null,
          null,
        ];
      });
      assert.equal(
        migrated.trustEntries.map((e) => [e.decidedBy, e.decidedByTokenId, e.decidedByTokenName, e.decidedByWebhookId]),
        backfilled,
        "deciders backfilled from the approvals",
      );
      if (before.approvals.some((a) => a.decidedBy !== ""))
        assert.ok(
          backfilled.some(([kind]) => kind !== ""),
          "the fixture's deciders reached its entries",
        );
      assert.equal(migrated.events, before.events);
      const check = checkDatabase(file);
      assert.equal(check.migrations.pending, [], "every migration applied");
      assert.is(check.ok, true, JSON.stringify(check));

      const server = await startTestServer({ dataDir: dir });
      try {
        for (const listId of before.finished) {
          const stored = before.events.filter((e) => e.stream === listStream(listId));
          assert.ok(
            stored.some((e) => e.name === "list.finished"),
            `${listId} has its events under its stream`,
          );
          const expected = OPENING + stored.map((e) => frame(String(e.seq), e.name, e.payload)).join("");
          const bytes = await replay(`${server.url}/api/events?list_id=${listId}`, Buffer.byteLength(expected));
          assert.is(bytes.toString(), expected, `${listId} replays byte for byte`);
        }
        // The owner answers what the lists left running wait on; each resumes and finishes.
        await eventually(
          "every list left running finished",
          async () => {
            for (const approval of await server.app.prisma.approval.findMany({ where: { status: "pending" } })) {
              await server.post("/api/verdicts", { item_id: approval.itemId, target: approval.target, approve: true });
            }
            const open = await server.app.prisma.todoList.count({
              where: { id: { in: before.running }, status: { not: "finished" } },
            });
            return open === 0 ? true : undefined;
          },
          60_000,
          200,
        );
      } finally {
        await server.close();
      }
      const after = read(file);
      assert.equal(
        after.events.slice(0, before.events.length),
        before.events,
        "every stored event is still there, byte for byte",
      );
      assert.equal(
        after.trustEntries.slice(0, before.trustEntries.length),
        migrated.trustEntries,
        "the trust history before the upgrade is kept",
      );
      assert.is(checkDatabase(file).ok, true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

test.run();

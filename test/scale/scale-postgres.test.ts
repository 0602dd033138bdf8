// PostgreSQL storage end to end (one instance): the committed PostgreSQL migrations apply to an
// empty database and re-applying them is a no-op, and a list runs to list.finished on it.
import { test } from "uvu";
import * as assert from "uvu/assert";
import pg from "pg";
import { deployMigrations, migrationStatus } from "../../src/storage/migrate.ts";
import { openDatabase } from "../../src/storage/db.ts";
import { loadConfig } from "../../src/base/config.ts";
import { EventLog } from "../../src/log/event-log.ts";
import { createLocalBus } from "../../src/log/bus.ts";
import { startTestServer } from "../helpers/server.ts";
import { ownerFollows } from "../helpers/owner.ts";
import { freshDatabase, serviceTests } from "../helpers/scale-services.ts";

const { svc, it } = serviceTests("scale-postgres");

it("PostgreSQL migrations apply to an empty database, and re-applying is a no-op", async () => {
  const db = await freshDatabase(svc!.pgUrl);
  try {
    const applied = await deployMigrations(db.url);
    assert.ok(applied.length >= 1, "the first deploy applies every migration");
    assert.equal(await deployMigrations(db.url), [], "a second deploy applies nothing");
    const status = (await migrationStatus(db.url)) as { history: unknown; failedMigrationNames: string[] };
    assert.equal(status.failedMigrationNames, []);
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const rows = await client.query(
        `SELECT migration_name, finished_at FROM _prisma_migrations ORDER BY migration_name`,
      );
      assert.equal(
        rows.rows.map((r) => r.migration_name),
        applied,
        "Prisma's own bookkeeping holds each migration once",
      );
      assert.ok(rows.rows.every((r) => r.finished_at !== null));
      const tables = await client.query(
        `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'`,
      );
      const names = tables.rows.map((r) => r.table_name as string);
      for (const t of ["Event", "TodoList", "Item", "Approval", "Trust", "Nest", "Message"])
        assert.ok(names.includes(t), `table ${t}`);
    } finally {
      await client.end();
    }
  } finally {
    await db.drop();
  }
});

it("a list runs to list.finished on PostgreSQL, and its log replays gapless", async () => {
  const db = await freshDatabase(svc!.pgUrl);
  const server = await startTestServer({ env: { DATABASE_URL: db.url, CROWS_APPROVAL_WINDOW_MS: "60000" } });
  try {
    const { status, body } = await server.post("/api/lists", {
      text: "Buy milk\nWrite a haiku about crows",
      requester: "pg-owner",
    });
    assert.is(status, 202);
    const owner = await ownerFollows(server.url, body.list_id);
    const all = await owner.finished;
    owner.sse.close();
    assert.is(all[all.length - 1]!.event, "list.finished");
    assert.equal(
      all.map((m) => m.id),
      all.map((_, i) => String(i + 1)),
      "one gapless sequence",
    );
    assert.ok(owner.answers.length >= 2 && owner.answers.every((a) => a.status === 204));
    const list = await server.app.prisma.todoList.findUniqueOrThrow({ where: { id: body.list_id } });
    assert.is(list.status, "finished");
    const stored = await server.app.log.read(`list:${body.list_id}`);
    assert.equal(
      stored.map((e) => e.payload),
      all.map((m) => m.raw),
      "the wire bytes are the stored bytes",
    );
  } finally {
    await server.close();
    await db.drop();
  }
});

it("two instances appending to one stream at once: every event lands once, seq 1..n with no gap", async () => {
  const db = await freshDatabase(svc!.pgUrl);
  const config = loadConfig({ DATABASE_URL: db.url });
  const [one, two] = [await openDatabase(config), await openDatabase(config)];
  try {
    const logs = [new EventLog(one, createLocalBus()), new EventLog(two, createLocalBus())];
    const perLog = 15;
    await Promise.all(
      logs.flatMap((log, l) =>
        Array.from({ length: perLog }, (_, i) => log.append("list:race", "note", { from: l, i })),
      ),
    );
    const events = await logs[0]!.read("list:race");
    assert.equal(
      events.map((e) => e.seq),
      Array.from({ length: perLog * 2 }, (_, i) => i + 1),
    );
    const seen = new Set(events.map((e) => e.payload));
    assert.is(seen.size, perLog * 2, "no event twice, none lost");
  } finally {
    await Promise.allSettled([one.close(), two.close()]);
    await db.drop();
  }
});

test.run();

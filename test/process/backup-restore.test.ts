// `crows backup` under load on a live server, `crows check`, and `crows restore` into a new folder:
// the restored server's log equals the original's, row for row and byte for byte, up to the
// backup's last event; restore refuses while a server runs, refuses a file that is not a crows
// database, and keeps the database it replaces. check finds a seq gap and an orphan approval.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { startServerProcess } from "../helpers/process.ts";
import { baseEnv, crows, removeDir, tempDataDir } from "../helpers/crows-cli.ts";

type Row = { id: number; stream: string; seq: number; name: string; payload: string; ts: number };

function rows(file: string, upTo: number): Row[] {
  const db = new Database(file, { readonly: true });
  try {
    return db
      .prepare("SELECT id, stream, seq, name, payload, ts FROM Event WHERE id <= ? ORDER BY id")
      .all(upTo) as Row[];
  } finally {
    db.close();
  }
}

test("a backup under load restores into a new folder with the same log up to its last event; restore and check guard what they touch", async () => {
  const source = tempDataDir();
  const target = tempDataDir();
  const spare = tempDataDir();
  const backupFile = path.join(spare, "crows-backup.db");
  const server = await startServerProcess(baseEnv(source, { CROWS_APPROVAL_WINDOW_MS: "1000" }));
  try {
    const acked: string[] = [];
    let stop = false;
    // Four clients submitting while the backup runs.
    const load = Promise.all(
      [0, 1, 2, 3].map(async (c) => {
        for (let i = 0; !stop && i < 40; i++) {
          const response = await fetch(`${server.url}/api/lists`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({
              text: `rake leaves ${c}.${i}\nsplit logs ${c}.${i}`,
              requester: `backup-${c}-${i}`,
            }),
          });
          const body = (await response.json()) as { list_id?: string };
          assert.is(response.status, 202);
          acked.push(body.list_id!);
        }
      }),
    );
    while (acked.length < 8) await new Promise((r) => setTimeout(r, 20));
    const backup = await crows(["backup", backupFile], baseEnv(source));
    stop = true;
    await load;
    assert.is(backup.code, 0, backup.stderr);
    const report = backup.json as { file: string; bytes: number; events: number; last_event_id: number };
    assert.is(report.file, backupFile);
    assert.ok(report.bytes > 0 && report.events > 0 && report.last_event_id >= report.events);
    assert.ok(existsSync(backupFile) && !existsSync(`${backupFile}-wal`), "one self-contained file");

    const again = await crows(["backup", backupFile], baseEnv(source));
    assert.is(again.code, 1, "a backup never overwrites");

    const checked = await crows(["check"], baseEnv(source));
    assert.is(checked.code, 0, checked.stdout + checked.stderr);
    assert.is((JSON.parse(checked.stdout) as { ok: boolean }).ok, true);

    const refused = await crows(["restore", backupFile], baseEnv(source));
    assert.is(refused.code, 3);
    assert.match(refused.stderr, /server_running/);

    const notCrows = path.join(spare, "not-a-database.db");
    writeFileSync(notCrows, "these are not the pages you are looking for");
    const bad = await crows(["restore", notCrows], baseEnv(target));
    assert.is(bad.code, 1);
    assert.match(bad.stderr, /restore_refused/);

    // Into a folder that already has a database: it is kept beside the restored one.
    const fresh = await startServerProcess(baseEnv(target));
    fresh.child.kill("SIGTERM");
    assert.is(await fresh.exited, 0);
    const restored = await crows(["restore", backupFile], baseEnv(target));
    assert.is(restored.code, 0, restored.stderr);
    const done = restored.json as { restored: string; kept: string | null; events: number; last_event_id: number };
    assert.is(done.events, report.events);
    assert.ok(done.kept !== null && existsSync(done.kept), "the replaced database is kept");

    server.child.kill("SIGTERM");
    assert.is(await server.exited, 0);
    const original = rows(path.join(source, "crows.db"), report.last_event_id);
    // The restored server opens it, migrates (nothing to do) and resumes the lists in flight.
    const resumed = await startServerProcess(baseEnv(target, { CROWS_APPROVAL_WINDOW_MS: "1000" }));
    const ready = await fetch(`${resumed.url}/readyz`);
    assert.is(ready.status, 200);
    resumed.child.kill("SIGTERM");
    assert.is(await resumed.exited, 0);
    const copy = rows(path.join(target, "crows.db"), report.last_event_id);
    assert.is(copy.length, report.events);
    assert.equal(copy, original, "the restored log equals the original up to the backup's last event");
    // Every list acknowledged before the backup's last event is in the copy.
    const startedInCopy = new Set(
      copy.filter((r) => r.name === "list.started").map((r) => (JSON.parse(r.payload) as { list_id: string }).list_id),
    );
    const startedInOriginal = rows(path.join(source, "crows.db"), Number.MAX_SAFE_INTEGER)
      .filter((r) => r.name === "list.started")
      .map((r) => (JSON.parse(r.payload) as { list_id: string }).list_id);
    assert.equal([...startedInOriginal].sort(), [...acked].sort(), "the original holds every acknowledged list once");
    for (const id of startedInOriginal.slice(0, startedInCopy.size))
      assert.ok(startedInCopy.has(id), `${id} is in the backup`);
  } finally {
    if (server.child.exitCode === null) server.child.kill("SIGKILL");
    [source, target, spare].forEach(removeDir);
  }
});

test("crows check names a seq gap and an orphan approval, and exits 1", async () => {
  const dir = tempDataDir();
  try {
    const server = await startServerProcess(baseEnv(dir));
    const response = await fetch(`${server.url}/api/lists`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ text: "one\ntwo\nthree", requester: "check-test" }),
    });
    assert.is(response.status, 202);
    server.child.kill("SIGTERM");
    assert.is(await server.exited, 0);
    const db = new Database(path.join(dir, "crows.db"));
    const stream = (db.prepare("SELECT stream FROM Event WHERE name = 'list.started'").get() as { stream: string })
      .stream;
    const events = db.prepare("SELECT COUNT(*) AS n FROM Event WHERE stream = ?").get(stream) as { n: number };
    db.prepare("DELETE FROM Event WHERE stream = ? AND seq = 1").run(stream);
    db.pragma("foreign_keys = OFF");
    db.prepare(
      "INSERT INTO Approval (itemId, target, status, deadline, createdAt) VALUES ('lstgone-1', 'triage', 'pending', 0, 0)",
    ).run();
    db.close();
    const result = await crows(["check"], baseEnv(dir));
    assert.is(result.code, 1);
    const report = JSON.parse(result.stdout) as {
      ok: boolean;
      seq_gaps: Array<{ stream: string; count: number }>;
      orphan_approvals: Array<{ item_id: string }>;
    };
    assert.is(report.ok, false);
    assert.equal(
      report.seq_gaps.map((g) => [g.stream, g.count]),
      [[stream, events.n - 1]],
    );
    assert.equal(
      report.orphan_approvals.map((a) => a.item_id),
      ["lstgone-1"],
    );
  } finally {
    removeDir(dir);
  }
});

test.run();

// Issue 9's crash rule: a kill -9 in the middle of appends loses nothing a client has seen. A real
// server process runs a list (its state-bearing appends: triage, approvals, verdicts with their
// trust rows, landings with their token counts; and plain ones: crow.flying) while a scripted owner
// follows the stream and approves. The process is killed -9 at several points mid-list; after each
// restart on the same database, a replay from the start must hold every frame the owner saw,
// byte for byte at the same id, with no gap in the ids, and the list still finishes.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { crash, startServerProcess, type ServerProcess } from "../helpers/process.ts";
import { ownerFollows } from "../helpers/owner.ts";
import { openSse, type SseMessage } from "../helpers/sse.ts";
import { freshDatabase, serviceTests } from "../helpers/scale-services.ts";

const ITEMS = [
  "Buy milk",
  "Research espresso machines and write a short summary",
  "Brainstorm names for a bakery",
  "Draft an email to the landlord",
  "Write a function that parses dates and test it",
  "Plan a weekend trip to the coast",
  "Compare three phone plans",
  "Find a recipe for lentil soup and make a shopping list",
];

/** Kills after the owner has seen this many events, one crash per entry. */
const KILL_AFTER = [10, 30, 50];

type Seen = Pick<SseMessage, "id" | "event" | "raw">;

async function replayAll(url: string, listId: string, atLeast: number): Promise<SseMessage[]> {
  const sse = await openSse(`${url}/api/events?list_id=${listId}`);
  try {
    await sse.waitForCount(atLeast, 15_000);
    return sse.messages();
  } finally {
    sse.close();
  }
}

async function crashMidList(env: Record<string, string>): Promise<void> {
  let proc: ServerProcess & { url: string } = await startServerProcess(env);
  const seen = new Map<string, Seen>();
  try {
    const created = await fetch(`${proc.url}/api/lists`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ text: ITEMS.join("\n"), requester: "crash-owner" }),
    });
    assert.is(created.status, 202);
    const listId = ((await created.json()) as { list_id: string }).list_id;

    for (const killAfter of KILL_AFTER) {
      const owner = await ownerFollows(proc.url, listId, {}, 60_000);
      owner.finished.catch(() => {}); // it ends with the process
      await owner.sse.waitForCount(killAfter, 30_000);
      await crash(proc);
      for (const m of owner.sse.messages()) seen.set(m.id!, { id: m.id, event: m.event, raw: m.raw });
      owner.sse.close();
      proc = await startServerProcess(env);

      const replay = await replayAll(proc.url, listId, seen.size);
      replay.forEach((m, i) => {
        assert.is(m.id, String(i + 1), `ids without a gap after the crash at ${killAfter}`);
      });
      const byId = new Map(replay.map((m) => [m.id!, m]));
      for (const [id, before] of seen) {
        const after = byId.get(id);
        assert.ok(after, `event ${id} (${before.event}) was seen before the crash at ${killAfter} and is gone`);
        assert.equal(
          { id: after.id, event: after.event, raw: after.raw },
          before,
          `event ${id} changed across the crash at ${killAfter}`,
        );
      }
    }

    // The list is resumed after the last restart: it still finishes, and every frame seen stays.
    const owner = await ownerFollows(proc.url, listId, {}, 60_000);
    const final = await owner.finished;
    owner.sse.close();
    assert.is(final[final.length - 1]!.event, "list.finished");
    const byId = new Map(final.map((m) => [m.id!, m]));
    for (const [id, before] of seen) assert.equal({ id, event: byId.get(id)?.event, raw: byId.get(id)?.raw }, before);
  } finally {
    await crash(proc);
  }
}

test("SQLite: kill -9 three times mid-list; every event a client saw is still there, unchanged, and the list finishes", async () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "crows-crash-appends-"));
  try {
    await crashMidList({ CROWS_PORT: "0", CROWS_DATA_DIR: dataDir });
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

const { svc, it } = serviceTests("crash-appends");
it("PostgreSQL: kill -9 three times mid-list; every event a client saw is still there, unchanged, and the list finishes", async () => {
  const db = await freshDatabase(svc!.pgUrl);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "crows-crash-appends-pg-"));
  try {
    await crashMidList({ CROWS_PORT: "0", CROWS_DATA_DIR: dataDir, DATABASE_URL: db.url, CROWS_LEASE_MS: "1000" });
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
    await db.drop();
  }
});

test.run();

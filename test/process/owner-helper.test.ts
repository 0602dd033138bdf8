// The scripted owner fails the moment its stream ends before list.finished: a server that dies
// mid-list fails the test within a second, not at the owner's deadline, and the event loop keeps
// turning meanwhile (a timer set beside it fires on time).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { crash, startServerProcess } from "../helpers/process.ts";
import { ownerFollows } from "../helpers/owner.ts";

/** A server process with a list waiting on an owner who never answers (so it cannot finish alone). */
async function ownerOfAStuckList(tag: string) {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), `crows-owner-${tag}-`));
  const proc = await startServerProcess({ CROWS_PORT: "0", CROWS_DATA_DIR: dataDir });
  const created = await fetch(`${proc.url}/api/lists`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ text: "Buy milk\nDraft an email to the landlord\nPlan a weekend trip", requester: tag }),
  });
  assert.is(created.status, 202);
  const { list_id } = (await created.json()) as { list_id: string };
  const owner = await ownerFollows(proc.url, list_id, { decide: () => undefined }, 120_000);
  await owner.sse.waitFor((m) => m.event === "item.triaged", 30_000);
  const done = async () => {
    await crash(proc);
    rmSync(dataDir, { recursive: true, force: true });
  };
  return { proc, owner, done };
}

test("a server killed -9 mid-list fails the owner within a second, with the events it saw", async () => {
  const { proc, owner, done } = await ownerOfAStuckList("dead");
  try {
    const outcome = owner.finished.then(
      () => new Error("the owner resolved although the list never finished"),
      (error: Error) => error,
    );
    let timerLate = -1;
    const timerSet = Date.now();
    const timerFired = new Promise<void>((resolve) =>
      setTimeout(() => {
        timerLate = Date.now() - timerSet - 200;
        resolve();
      }, 200),
    );
    const killed = Date.now();
    await crash(proc);
    const error = await outcome;
    const tookMs = Date.now() - killed;
    await timerFired;
    assert.match(error.message, /ended before list\.finished/);
    assert.match(error.message, /item\.triaged/, "the error names what the owner saw");
    assert.ok(tookMs < 1_000, `the owner failed ${tookMs} ms after the kill; its deadline was 120 s`);
    assert.ok(timerLate < 1_000, `a 200 ms timer fired ${timerLate} ms late: the owner starved the event loop`);
  } finally {
    await done();
  }
});

test("an owner whose stream is closed by the test fails at once too", async () => {
  const { owner, done } = await ownerOfAStuckList("closed");
  try {
    const started = Date.now();
    owner.sse.close();
    const error = await owner.finished.then(
      () => undefined,
      (e: Error) => e,
    );
    assert.ok(error, "the owner must not resolve without list.finished");
    assert.match(error.message, /ended before list\.finished/);
    assert.ok(Date.now() - started < 1_000);
  } finally {
    await done();
  }
});

test.run();

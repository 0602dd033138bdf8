// A reminder survives kill -9 (docs/rules.md "Reminders"): one that fell due while the server was
// down goes out after the restart, once, because the approval still waits and its deadline has not
// passed. The reminder's state is the approval row (deadline, remindedAt), not a timer.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { crash, startServerProcess } from "../helpers/process.ts";
import { startReceiver } from "../helpers/webhook-receiver.ts";

const post = (url: string, body: unknown) =>
  fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }).then(
    async (r) => ({ status: r.status, body: (await r.json().catch(() => null)) as any }),
  );

test("kill -9 before a reminder's time: the restarted server sends it once, while the approval waits", async () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "crows-reminder-crash-"));
  const receiver = await startReceiver();
  // A 60 s window reminded 54 s before its deadline: due 6 s after it opens, well before the deadline.
  const env = {
    CROWS_PORT: "0",
    CROWS_DATA_DIR: dataDir,
    CROWS_APPROVAL_WINDOW_MS: "60000",
    CROWS_APPROVAL_REMINDER_MS: "54000",
    CROWS_WEBHOOK_ALLOW_PRIVATE: "1",
    CROWS_WEBHOOK_POLL_MS: "50",
  };
  const procs: Array<Awaited<ReturnType<typeof startServerProcess>>> = [];
  try {
    const first = await startServerProcess(env);
    procs.push(first);
    const added = await post(`${first.url}/api/webhooks`, { url: receiver.url });
    assert.is(added.status, 201);
    receiver.secrets.push(added.body.secret);
    const list = await post(`${first.url}/api/lists`, { text: "Buy milk", requester: "reminder-crash" });
    assert.is(list.status, 202);
    const itemId = `${list.body.list_id}-1`;
    await receiver.waitFor((r) => r.some((d) => d.body.type === "approval.requested"), 60_000);
    await crash(first);
    const requested = receiver.received.find((d) => d.body.type === "approval.requested")!.body.data;
    const deadline = Date.parse(requested.deadline);
    const due = deadline - 54_000;
    const remindersOf = () => receiver.received.filter((d) => d.body.type === "approval.reminder");
    assert.is(remindersOf().length, 0, "the first server died before the reminder's time");

    // Down past the reminder's time (a wait for the clock, not for a negative).
    while (Date.now() < due + 200) await new Promise((resolve) => setTimeout(resolve, due + 200 - Date.now()));
    const second = await startServerProcess(env);
    procs.push(second);
    await receiver.waitFor(() => remindersOf().length >= 1, 60_000, "the reminder after the restart");
    const [reminder] = remindersOf();
    assert.is(reminder!.body.data.item, itemId);
    assert.is(reminder!.body.data.deadline, requested.deadline);
    assert.ok(Date.now() < deadline, "sent before the deadline");
    assert.equal(receiver.unverified, []);

    // Decided: its approval.decided follows the one reminder (a stream's deliveries keep log order).
    assert.is(
      (await post(`${second.url}/api/verdicts`, { item_id: itemId, target: "triage", approve: true })).status,
      204,
    );
    await receiver.waitFor((r) => r.some((d) => d.body.type === "approval.decided"), 60_000);
    assert.is(remindersOf().filter((d) => d.body.data.target === "triage").length, 1, "once");
  } finally {
    for (const proc of procs) await crash(proc);
    await receiver.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test.run();

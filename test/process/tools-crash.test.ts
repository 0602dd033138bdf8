// kill -9 under flights with tools (docs/tools.md "At most once"): a call waiting for its approval
// still waits after the restart, to its original deadline; a call in the air when the server died
// is never sent again, and the crow is told its outcome is unknown.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { crash, startServerProcess } from "../helpers/process.ts";
import { ownerFollows } from "../helpers/owner.ts";

/** The server with the filesystem MCP server the fixture starts beside it. */
const startToolsServer = (env: Record<string, string>) => startServerProcess(env, "test/fixtures/tools-server.ts");

function folders() {
  const data = mkdtempSync(path.join(os.tmpdir(), "crows-tools-data-"));
  const files = mkdtempSync(path.join(os.tmpdir(), "crows-tools-files-"));
  return {
    data,
    files,
    callLog: path.join(data, "calls.log"),
    remove: () => {
      rmSync(data, { recursive: true, force: true });
      rmSync(files, { recursive: true, force: true });
    },
  };
}

const post = (url: string, body: unknown) =>
  fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

test("kill -9 while a call waits for approval: after the restart it still waits, and is refused at its original deadline", async () => {
  const dirs = folders();
  const env = {
    CROWS_PORT: "0",
    CROWS_DATA_DIR: dirs.data,
    TOOLS_FOLDER: dirs.files,
    TOOLS_CALL_LOG: dirs.callLog,
    CROWS_APPROVAL_WINDOW_MS: "15000",
  };
  let proc = await startToolsServer(env);
  try {
    const listId = (
      await (await post(`${proc.url}/api/lists`, { text: "write hello to out.txt", requester: "crash" })).json()
    ).list_id as string;
    const first = await ownerFollows(proc.url, listId);
    first.finished.catch(() => {}); // the server dies under it
    const asked = await first.sse.waitFor((m) => m.event === "tool.asked", 30_000);
    first.sse.close();
    await crash(proc);
    proc = await startToolsServer(env);
    const pending = (await (await fetch(`${proc.url}/api/tool-calls`)).json()) as {
      tool_calls: Array<{ call_id: string; deadline: string }>;
    };
    if (Date.now() < Date.parse(asked.data.deadline)) {
      assert.equal(
        pending.tool_calls.map((c) => [c.call_id, c.deadline]),
        [[asked.data.call_id, asked.data.deadline]],
        "the same call waits, with its original deadline",
      );
    }
    const owner = await ownerFollows(proc.url, listId, {}, 60_000);
    const events = await owner.finished;
    owner.sse.close();
    const decided = events.filter((e) => e.event === "tool.decided");
    assert.is(decided.length, 1);
    assert.is(decided[0]!.data.decision, "timeout");
    assert.ok(Date.parse(decided[0]!.data.ts) >= Date.parse(asked.data.deadline), "not before the original deadline");
    assert.is(events.filter((e) => e.event === "tool.asked").length, 1, "asked once, across the restart");
    assert.is(existsSync(path.join(dirs.files, "out.txt")), false, "silence never lets a write through");
    assert.is(existsSync(dirs.callLog), false, "no call was ever sent");
  } finally {
    await crash(proc);
    dirs.remove();
  }
});

test("kill -9 while a call is in the air: it is not sent again; the crow is told its outcome is unknown", async () => {
  const dirs = folders();
  const env = {
    CROWS_PORT: "0",
    CROWS_DATA_DIR: dirs.data,
    TOOLS_FOLDER: dirs.files,
    TOOLS_CALL_LOG: dirs.callLog,
    CROWS_APPROVAL_WINDOW_MS: "60000",
  };
  let proc = await startToolsServer({ ...env, TOOLS_HANG: "write_file" });
  try {
    const listId = (
      await (await post(`${proc.url}/api/lists`, { text: "write hello to out.txt", requester: "crash" })).json()
    ).list_id as string;
    const first = await ownerFollows(proc.url, listId);
    first.finished.catch(() => {});
    const asked = await first.sse.waitFor((m) => m.event === "tool.asked", 30_000);
    assert.is((await post(`${proc.url}/api/tool-calls/${asked.data.call_id}/decision`, { approve: true })).status, 200);
    await first.sse.waitFor((m) => m.event === "tool.called", 30_000);
    // The call reached the tool (its line is in the call log) and hangs there: the server dies now.
    while (!existsSync(dirs.callLog)) await new Promise((resolve) => setTimeout(resolve, 20));
    first.sse.close();
    await crash(proc);
    proc = await startToolsServer(env); // no hang now: a call sent again would write the file
    const owner = await ownerFollows(proc.url, listId, {}, 60_000);
    const events = await owner.finished;
    owner.sse.close();
    const lines = readFileSync(dirs.callLog, "utf8").trim().split("\n");
    assert.is(lines.length, 1, "sent once, never again");
    assert.is(existsSync(path.join(dirs.files, "out.txt")), false);
    const returned = events.filter((e) => e.event === "tool.returned");
    assert.is(returned.length, 1);
    assert.is(returned[0]!.data.ok, false);
    assert.is(returned[0]!.data.error, "tool_outcome_unknown");
    assert.is(events.filter((e) => e.event === "tool.called").length, 1);
    const answer = events.find((e) => e.event === "item.answered")!.data.answer as string;
    assert.ok(answer.includes("tool_outcome_unknown"), "the crow was told");
  } finally {
    await crash(proc);
    dirs.remove();
  }
});

test("kill -9 while a read-only call is in the air: it may be asked again, and the crow reads the file", async () => {
  const dirs = folders();
  writeFileSync(path.join(dirs.files, "notes.txt"), "the Gaggia, descaled");
  const env = { CROWS_PORT: "0", CROWS_DATA_DIR: dirs.data, TOOLS_FOLDER: dirs.files, TOOLS_CALL_LOG: dirs.callLog };
  let proc = await startToolsServer({ ...env, TOOLS_HANG: "read_text_file" });
  try {
    const listId = (await (await post(`${proc.url}/api/lists`, { text: "read notes.txt", requester: "crash" })).json())
      .list_id as string;
    const first = await ownerFollows(proc.url, listId);
    first.finished.catch(() => {});
    await first.sse.waitFor((m) => m.event === "tool.called", 30_000);
    while (!existsSync(dirs.callLog)) await new Promise((resolve) => setTimeout(resolve, 20));
    first.sse.close();
    await crash(proc);
    proc = await startToolsServer(env);
    const owner = await ownerFollows(proc.url, listId, {}, 60_000);
    const events = await owner.finished;
    owner.sse.close();
    assert.is(readFileSync(dirs.callLog, "utf8").trim().split("\n").length, 2, "a read may be sent again");
    const returned = events.filter((e) => e.event === "tool.returned");
    assert.equal(
      returned.map((e) => e.data.ok),
      [true],
    );
    assert.ok((events.find((e) => e.event === "item.answered")!.data.answer as string).includes("descaled"));
  } finally {
    await crash(proc);
    dirs.remove();
  }
});

test.run();

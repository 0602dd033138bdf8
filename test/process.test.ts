// The server as a process, the way src/main.ts runs it (crows serve): the ready JSON line, the localhost default,
// and SIGTERM stopping it cleanly (exit 0) with a list in flight and a stream open.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { openSse } from "./helpers/sse.ts";
import { startProcess } from "./helpers/process.ts";

test("prints the ready line on 127.0.0.1 and exits 0 on SIGTERM with work in flight", async () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "crows-proc-"));
  try {
    const proc = startProcess({ CROWS_PORT: "0", CROWS_DATA_DIR: dataDir });
    const ready = JSON.parse(await proc.ready) as { state: string; url: string; pid: number };
    assert.is(ready.state, "live");
    assert.match(ready.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.is(ready.pid, proc.child.pid);
    const url = ready.url;
    const res = await fetch(`${url}/api/lists`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ text: "Buy milk\nCall the bank", requester: "sigterm" }),
    });
    assert.is(res.status, 202);
    const { list_id } = (await res.json()) as { list_id: string };
    const sse = await openSse(`${url}/api/events?list_id=${list_id}`);
    await sse.waitFor((m) => m.event === "item.triaged");
    const started = Date.now();
    proc.child.kill("SIGTERM");
    const code = await proc.exited;
    assert.is(code, 0, proc.output().stderr);
    assert.ok(Date.now() - started < 5000, "stops promptly even with an SSE stream open");
    sse.close();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test("a bad configuration value stops the start with a message naming the variable", async () => {
  const proc = startProcess({ CROWS_PORT: "not-a-port", CROWS_DATA_DIR: mkdtempSync(path.join(os.tmpdir(), "crows-proc-")) });
  const error = await proc.ready.then(
    () => undefined,
    (e: Error) => e,
  );
  assert.ok(error);
  assert.is(await proc.exited, 3);
  assert.equal(JSON.parse(proc.output().stderr.trim()).error, "config");
  assert.match(proc.output().stderr, /CROWS_PORT must be a whole number/);
});

test.run();

// The server as a process, the way src/main.ts runs it (crows serve): the ready JSON line, the localhost default,
// and SIGTERM stopping it cleanly (exit 0) with a list in flight and a stream open.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { openSse } from "../helpers/sse.ts";
import { startProcess } from "../helpers/process.ts";

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
  const proc = startProcess({
    CROWS_PORT: "not-a-port",
    CROWS_DATA_DIR: mkdtempSync(path.join(os.tmpdir(), "crows-proc-")),
  });
  const error = await proc.ready.then(
    () => undefined,
    (e: Error) => e,
  );
  assert.ok(error);
  assert.is(await proc.exited, 3);
  assert.equal(JSON.parse(proc.output().stderr.trim()).error, "config");
  assert.match(proc.output().stderr, /CROWS_PORT must be a whole number/);
});

test("a spawned server ignores the crows settings of the caller's shell and gets only what the test passes", async () => {
  const shell = {
    DATABASE_URL: "postgresql://127.0.0.1:1/not-here",
    REDIS_URL: "redis://127.0.0.1:1",
    CROWS_TOKEN: "token-left-in-the-shell",
    CROWS_READ_TOKENS: "read-token-left-in-the-shell",
    CROWS_MODEL: "openai-compatible",
    CROWS_MODEL_BASE_URL: "http://127.0.0.1:1/v1",
    CROWS_JEV: "systemone",
    CROWS_JEV_BASE_URL: "http://127.0.0.1:1",
    CROWS_PORT: "not-a-port",
  };
  const saved = Object.fromEntries(Object.keys(shell).map((k) => [k, process.env[k]]));
  Object.assign(process.env, shell);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "crows-proc-env-"));
  const dirs = [dataDir];
  try {
    const proc = startProcess({ CROWS_PORT: "0", CROWS_DATA_DIR: dataDir });
    const ready = JSON.parse(await proc.ready) as { url: string };
    // No token and SQLite: the shell's CROWS_TOKEN and DATABASE_URL did not reach it.
    const created = await fetch(`${ready.url}/api/lists`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ text: "Buy milk", requester: "clean-env" }),
    });
    assert.is(created.status, 202, await created.text());
    proc.child.kill("SIGTERM");
    assert.is(await proc.exited, 0, proc.output().stderr);

    // What the test passes does reach it.
    const tokenDir = mkdtempSync(path.join(os.tmpdir(), "crows-proc-env-"));
    dirs.push(tokenDir);
    const guarded = startProcess({
      CROWS_PORT: "0",
      CROWS_DATA_DIR: tokenDir,
      CROWS_TOKEN: "token-the-test-passes-0123456789",
    });
    const guardedUrl = (JSON.parse(await guarded.ready) as { url: string }).url;
    const refused = await fetch(`${guardedUrl}/api/lists`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ text: "Buy milk", requester: "clean-env" }),
    });
    assert.is(refused.status, 401);
    guarded.child.kill("SIGTERM");
    await guarded.exited;
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
});

test.run();

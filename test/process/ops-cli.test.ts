// bin/crows as a user drives it: up, status, a real second server, logs, restart on the same
// port, stop, a killed server found "gone" and its lock taken over, and usage errors.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { baseEnv, crows, oneJsonLine, pidRunning, removeDir, tempDataDir, waitFor } from "../helpers/crows-cli.ts";

test("up starts, up finds, a second server refuses, restart keeps the port, a killed one is gone and taken over, stop records it", async () => {
  const dir = tempDataDir();
  const env = baseEnv(dir);
  try {
    const before = await crows(["status"], env);
    assert.is(before.code, 0);
    assert.equal(oneJsonLine(before.stdout), {
      state: "stopped",
      pid: null,
      url: null,
      uptime_s: null,
      version: null,
      last_error: null,
    });

    const started = await crows(["up"], env);
    assert.is(started.code, 0, started.stderr);
    const live = oneJsonLine(started.stdout);
    assert.is(live.state, "live");
    assert.is(live.server, "started");
    assert.match(live.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.is(live.data_dir, dir);
    assert.is(live.log, path.join(dir, "server.log"));
    assert.is(live.version, JSON.parse(readFileSync("package.json", "utf8")).version);
    assert.ok(pidRunning(live.pid));
    assert.is((await fetch(`${live.url}/healthz`)).status, 200);

    const found = oneJsonLine((await crows(["up"], env)).stdout);
    assert.equal({ ...found, server: "started" }, live, "up finds the same server (same pid, url, start)");
    assert.is(found.server, "found");

    const status = await crows(["status"], env);
    const s = oneJsonLine(status.stdout);
    assert.is(s.state, "live");
    assert.is(s.pid, live.pid);
    assert.is(s.url, live.url);
    assert.type(s.uptime_s, "number");

    // A real second server on the same folder: refused at once, naming the holder.
    const second = await crows(["serve"], env);
    assert.is(second.code, 3);
    assert.is(second.stdout, "");
    const refusal = oneJsonLine(second.stderr);
    assert.is(refusal.error, "folder_busy");
    assert.ok(refusal.message.includes(`pid ${live.pid}`) && refusal.message.includes(live.url), refusal.message);
    assert.not.match(second.stderr, /\n\s+at /);
    // How fast it refuses is measured in bench/second-server.ts, next to baselines (not timed here).
    assert.equal(JSON.parse(readFileSync(path.join(dir, "start-error.json"), "utf8")).message, refusal.message);
    assert.ok(pidRunning(live.pid), "the first server still runs");

    const logs = oneJsonLine((await crows(["logs"], env)).stdout);
    assert.ok(
      logs.lines.some((l: string) => /^\d{4}-\d\d-\d\dT[\d:.]+Z listening on http/.test(l)),
      logs.lines.join("\n"),
    );

    const restarted = await crows(["restart", "--reason", "new settings"], env);
    assert.is(restarted.code, 0, restarted.stderr);
    const again = oneJsonLine(restarted.stdout);
    assert.is(again.state, "live");
    assert.is(again.server, "started");
    assert.is(again.url, live.url, "same port");
    assert.is.not(again.pid, live.pid);
    assert.not.ok(pidRunning(live.pid), "the old server is gone");
    const afterRestart = oneJsonLine((await crows(["logs", "--lines", "1000"], env)).stdout).lines.join("\n");
    assert.match(afterRestart, /restart requested: new settings/);
    assert.match(afterRestart, /stop: SIGTERM received/);

    // Killed (kill -9): status reads "gone", the dead holder's lock stays, and up takes it over.
    process.kill(again.pid, "SIGKILL");
    await waitFor("the server to die", () => !pidRunning(again.pid));
    const g = oneJsonLine((await crows(["status"], env)).stdout);
    assert.is(g.state, "gone");
    assert.is(g.pid, again.pid);
    assert.is(JSON.parse(readFileSync(path.join(dir, "server.lock"), "utf8")).pid, again.pid);
    const next = await crows(["up"], env);
    assert.is(next.code, 0, next.stderr);
    const n = oneJsonLine(next.stdout);
    assert.is(n.server, "started");
    assert.is.not(n.pid, again.pid);
    assert.is(JSON.parse(readFileSync(path.join(dir, "server.lock"), "utf8")).pid, n.pid);

    const stopped = await crows(["stop"], env);
    assert.is(stopped.code, 0, stopped.stderr);
    const st = oneJsonLine(stopped.stdout);
    assert.is(st.state, "stopped");
    assert.is(st.pid, n.pid);
    assert.not.ok(pidRunning(n.pid));
    const json = JSON.parse(readFileSync(path.join(dir, "server.json"), "utf8"));
    assert.is(json.stopped, true);
    assert.is(json.pid, n.pid);
    const down = oneJsonLine((await crows(["status"], env)).stdout);
    assert.is(down.state, "stopped");
    assert.is(down.url, n.url);

    const noop = await crows(["stop"], env);
    assert.is(noop.code, 0);
    assert.is(oneJsonLine(noop.stdout).was_running, false);
  } finally {
    await crows(["stop"], env);
    removeDir(dir);
  }
});

test("two ups at once start one server: one says started, the other found it", async () => {
  const dir = tempDataDir();
  const env = baseEnv(dir);
  try {
    const [a, b] = await Promise.all([crows(["up"], env), crows(["up"], env)]);
    assert.is(a.code, 0, a.stderr);
    assert.is(b.code, 0, b.stderr);
    const [first, second] = [oneJsonLine(a.stdout), oneJsonLine(b.stdout)];
    assert.is(first.pid, second.pid);
    assert.is(first.url, second.url);
    assert.equal([first.server, second.server].sort(), ["found", "started"]);
  } finally {
    await crows(["stop"], env);
    removeDir(dir);
  }
});

test("logs reads the newest lines across the rotated files, oldest first, at most 1000", async () => {
  const dir = tempDataDir();
  const env = baseEnv(dir);
  try {
    // 3 files as rotation leaves them: server.log.2 oldest, server.log newest; 1,500 lines in all.
    const line = (n: number) => `2026-01-01T00:00:00.000Z event ${n}`;
    const chunk = (from: number, to: number) =>
      Array.from({ length: to - from }, (_, i) => line(from + i)).join("\n") + "\n";
    writeFileSync(path.join(dir, "server.log.2"), chunk(0, 500));
    writeFileSync(path.join(dir, "server.log.1"), chunk(500, 1000));
    writeFileSync(path.join(dir, "server.log"), chunk(1000, 1500));
    const expectTail = (count: number) => Array.from({ length: count }, (_, i) => line(1500 - count + i));
    const cases: Array<[string[], number]> = [
      [[], 50],
      [["--lines", "1"], 1],
      [["--lines", "500"], 500],
      [["--lines", "501"], 501],
      [["--lines", "1000"], 1000],
    ];
    for (const [args, count] of cases) {
      const result = await crows(["logs", ...args], env);
      assert.is(result.code, 0, result.stderr);
      assert.equal(oneJsonLine(result.stdout).lines, expectTail(count), args.join(" "));
    }
  } finally {
    removeDir(dir);
  }
});

test("usage errors exit 2 with one JSON line on stderr", async () => {
  const dir = tempDataDir();
  const env = baseEnv(dir);
  try {
    const cases = [
      [],
      ["launch"],
      ["status", "--verbose"],
      ["logs", "--lines"],
      ["logs", "--lines", "0"],
      ["logs", "--lines", "1001"],
      ["logs", "--lines", "ten"],
      ["logs", "--lines", "2.5"],
      ["logs", "--lines", "1e3"],
      ["logs", "--lines", "0x10"],
      ["logs", "--lines", " 5"],
      ["logs", "--lines", "+5"],
      ["logs", "--lines", "5 "],
      ["restart", "--reason"],
      ["up", "extra"],
    ];
    const results = await Promise.all(cases.map((args) => crows(args, env)));
    results.forEach((result, i) => {
      assert.is(result.code, 2, `crows ${cases[i]!.join(" ")}`);
      assert.is(result.stdout, "");
      const error = oneJsonLine(result.stderr);
      assert.is(error.error, "usage");
      assert.type(error.message, "string");
    });
    const fine = await crows(["logs", "--lines=3"], env);
    assert.is(fine.code, 0);
    assert.equal(oneJsonLine(fine.stdout), { log: path.join(dir, "server.log"), lines: [] });
  } finally {
    removeDir(dir);
  }
});

test.run();

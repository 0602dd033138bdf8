// server.lock across real processes: a dead holder's lock (a real pid that has exited) is taken
// over by exactly one of several starters racing for it, and the others name the winner; a lock
// that names a live process with another start tick (a reused pid) is stale too.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawn, spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { ROOT, removeDir, tempDataDir } from "../helpers/crows-cli.ts";
import { acquireLock, liveHolder } from "../../src/ops/lock.ts";
import { dataFiles } from "../../src/ops/paths.ts";
import { startTickOf } from "../../src/ops/processes.ts";

const TAKER = path.join(ROOT, "test/fixtures/ops-lock-taker.ts");

interface Taker {
  ready: Promise<void>;
  answer: Promise<any>;
  send(line: string): void;
  closed: Promise<void>;
}

function taker(dir: string): Taker {
  const child = spawn(process.execPath, ["--import", "tsx", TAKER, dir], {
    cwd: ROOT,
    stdio: ["pipe", "pipe", "inherit"],
  });
  child.stdin.on("error", () => {}); // a refused taker has exited: its stdin is gone
  let out = "";
  let ready!: () => void;
  let answer!: (value: any) => void;
  const taker: Taker = {
    ready: new Promise((resolve) => (ready = resolve)),
    answer: new Promise((resolve) => (answer = resolve)),
    send: (line) => {
      if (child.exitCode === null && child.stdin.writable) child.stdin.write(`${line}\n`);
    },
    closed: new Promise((resolve) => child.on("close", () => resolve())),
  };
  child.stdout.on("data", (d: Buffer) => {
    out += d.toString();
    for (const line of out
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l))) {
      if ("ready" in line) ready();
      else answer(line);
    }
  });
  child.on("close", () => answer({ exited: true }));
  return taker;
}

test("racing starters over a dead holder's lock: exactly one takes it, the rest name it", async () => {
  const dead = spawnSync(process.execPath, ["-e", "0"]).pid!;
  for (let round = 0; round < 2; round++) {
    const dir = tempDataDir();
    try {
      writeFileSync(
        path.join(dir, "server.lock"),
        JSON.stringify({ pid: dead, tick: "1", started: "2020-01-01T00:00:00.000Z" }),
      );
      const takers = Array.from({ length: 6 }, () => taker(dir));
      await Promise.all(takers.map((t) => t.ready)); // every one loaded, however long that took
      for (const t of takers) t.send("go");
      const results = await Promise.all(takers.map((t) => t.answer));
      for (const t of takers) t.send("release"); // the holder holds until every other has answered
      await Promise.all(takers.map((t) => t.closed));
      const winners = results.filter((r) => r.held);
      assert.is(winners.length, 1, JSON.stringify(results));
      assert.is(results.filter((r) => r.refused).length, 5, JSON.stringify(results));
      for (const loser of results.filter((r) => r.refused)) {
        assert.is(loser.refused, "folder_busy");
        assert.ok(loser.message.includes(`pid ${winners[0].held}`), loser.message);
      }
    } finally {
      removeDir(dir);
    }
  }
});

test("a lock naming a live pid with another start tick (a reused pid) is taken over; this process's own is live", () => {
  const dir = tempDataDir();
  try {
    const files = dataFiles(dir);
    writeFileSync(
      files.lock,
      JSON.stringify({ pid: process.pid, tick: "not-my-tick", started: "2020-01-01T00:00:00.000Z" }),
    );
    assert.is(liveHolder(files), undefined, "a reused pid is not the holder");
    const lock = acquireLock(files);
    const written = JSON.parse(readFileSync(files.lock, "utf8"));
    assert.is(written.pid, process.pid);
    assert.is(written.tick, startTickOf(process.pid));
    assert.is(liveHolder(files)?.pid, process.pid);
    lock.release();
    assert.is(liveHolder(files), undefined);
  } finally {
    removeDir(dir);
  }
});

test.run();

// Start errors are one JSON line on stderr, exit 3, no stack trace, the cause named, and the same
// message in start-error.json: a taken port (a real listener), bad hosts, bad settings, and data
// folders crows must not use. The folder rules are also checked in-process over many modes.
import { test } from "uvu";
import * as assert from "uvu/assert";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { baseEnv, crows, removeDir, tempDataDir } from "../helpers/crows-cli.ts";
import { prepareDataDir } from "../../src/storage/data-dir.ts";
import { StartError } from "../../src/storage/start-error.ts";

const isRoot = process.getuid?.() === 0;
const TOKEN = "start-errors-test-token-0123456789abcdef";

async function refusedStart(args: string[], env: Record<string, string>, code: string, pattern: RegExp) {
  const result = await crows(args, env);
  assert.is(result.code, 3, `${args.join(" ")}: ${result.stderr}`);
  assert.is(result.stdout, "");
  const lines = result.stderr.split("\n").filter((l) => l !== "");
  assert.is(lines.length, 1, result.stderr);
  const error = JSON.parse(lines[0]!);
  assert.is(error.error, code);
  assert.match(error.message, pattern);
  assert.not.match(result.stderr, /\bat .*:\d+:\d+/, "no stack trace");
  return error as { error: string; message: string };
}

test("a taken port: serve and up both exit 3 naming the port, start-error.json and status say why", async () => {
  const holder = net.createServer();
  await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
  const port = (holder.address() as net.AddressInfo).port;
  const dir = tempDataDir();
  try {
    const env = baseEnv(dir, { CROWS_PORT: String(port) });
    const error = await refusedStart(["serve"], env, "port_taken", new RegExp(`port ${port}\\b.*taken`));
    const record = JSON.parse(readFileSync(path.join(dir, "start-error.json"), "utf8"));
    assert.is(record.message, error.message);
    assert.is(record.code, "port_taken");
    const viaUp = await refusedStart(["up"], env, "port_taken", new RegExp(`port ${port}\\b`));
    assert.is(viaUp.message, error.message);
    const status = await crows(["status"], env);
    assert.is(status.code, 0);
    assert.is(JSON.parse(status.stdout).last_error, error.message);
    assert.is(JSON.parse(status.stdout).state, "stopped");
    assert.not.ok(existsSync(path.join(dir, "server.lock")), "a failed start leaves no lock behind");
  } finally {
    holder.close();
    removeDir(dir);
  }
});

test("bad hosts and bad settings are one named line each", async () => {
  const dirs: string[] = [];
  try {
    const cases: Array<[Record<string, string>, string, RegExp]> = [
      // Off loopback a token comes first (docs/security.md); with one, the host itself is checked.
      [
        { CROWS_HOST: "192.0.2.1" },
        "config",
        /CROWS_HOST=192\.0\.2\.1 is reachable from other machines; set CROWS_TOKEN/,
      ],
      [{ CROWS_HOST: "256.1.1.1", CROWS_TOKEN: TOKEN }, "bad_host", /CROWS_HOST "256\.1\.1\.1"/],
      [{ CROWS_HOST: "192.0.2.1", CROWS_TOKEN: TOKEN }, "bad_host", /CROWS_HOST "192\.0\.2\.1"/],
      [{ CROWS_HOST: "no such host.invalid", CROWS_TOKEN: TOKEN }, "bad_host", /CROWS_HOST "no such host\.invalid"/],
      [{ CROWS_PORT: "seventy" }, "config", /CROWS_PORT must be a whole number/],
      [{ CROWS_PORT: "70000" }, "config", /CROWS_PORT must be a whole number/],
      [{ CROWS_JEV: "psychic" }, "config", /CROWS_JEV must be/],
    ];
    // Each in its own folder: in one folder, all but one would (rightly) find it busy.
    await Promise.all(
      cases.map(([extra, code, pattern]) =>
        refusedStart(["serve"], baseEnv(dirs[dirs.push(tempDataDir()) - 1]!, extra), code, pattern),
      ),
    );
  } finally {
    dirs.forEach(removeDir);
  }
});

test("data folders crows must not use are refused by the command, never changed", async () => {
  const root = tempDataDir();
  try {
    const file = path.join(root, "a-file");
    writeFileSync(file, "not a folder");
    const real = path.join(root, "real");
    mkdirSync(real, { mode: 0o700 });
    const link = path.join(root, "link");
    symlinkSync(real, link);
    const open = path.join(root, "open");
    mkdirSync(open);
    chmodSync(open, 0o755);
    const cases: Array<[string, RegExp]> = [
      [file, /is not a folder/],
      [link, /is a link/],
      [open, /can be read or written by others \(mode 755\)/],
    ];
    if (isRoot) {
      const theirs = path.join(root, "theirs");
      mkdirSync(theirs, { mode: 0o700 });
      chownSync(theirs, 4242, 4242);
      cases.push([theirs, /belongs to another account \(uid 4242/]);
    } else {
      const readOnly = path.join(root, "read-only");
      mkdirSync(readOnly, { mode: 0o500 });
      cases.push([readOnly, /is not writable/]);
    }
    await Promise.all(cases.map(([dir, pattern]) => refusedStart(["serve"], baseEnv(dir), "data_dir", pattern)));
    await Promise.all(cases.map(([dir, pattern]) => refusedStart(["up"], baseEnv(dir), "data_dir", pattern)));
    assert.is(statSync(open).mode & 0o777, 0o755, "a folder crows did not create keeps its mode");
    assert.is(readFileSync(file, "utf8"), "not a folder");
    assert.not.ok(existsSync(path.join(real, "crows.db")), "nothing was written through the link");
  } finally {
    removeDir(root);
  }
});

test("folder rules over many modes; created folders are 700 and crows' own files are tightened to 600", () => {
  const root = tempDataDir();
  try {
    for (const mode of [0o700, 0o711, 0o701, 0o710]) {
      const dir = path.join(root, `ok-${mode.toString(8)}`);
      mkdirSync(dir);
      chmodSync(dir, mode);
      assert.equal(prepareDataDir(dir), { dir, created: false }, mode.toString(8));
      assert.is(statSync(dir).mode & 0o777, mode, "mode left alone");
    }
    for (const mode of [0o740, 0o720, 0o704, 0o702, 0o750, 0o755, 0o775, 0o777, 0o706]) {
      const dir = path.join(root, `bad-${mode.toString(8)}`);
      mkdirSync(dir);
      chmodSync(dir, mode);
      assert.throws(
        () => prepareDataDir(dir),
        (e: unknown) => e instanceof StartError && e.code === "data_dir" && /read or written by others/.test(e.message),
        mode.toString(8),
      );
      assert.is(statSync(dir).mode & 0o777, mode, "a refused folder is never chmod'ed");
    }
    const fresh = path.join(root, "new", "nested", "data");
    const previousUmask = process.umask();
    process.umask(0o022);
    try {
      assert.equal(prepareDataDir(fresh), { dir: fresh, created: true });
    } finally {
      process.umask(previousUmask);
    }
    assert.is(statSync(fresh).mode & 0o777, 0o700);
    const old = path.join(root, "old");
    mkdirSync(old, { mode: 0o700 });
    for (const name of ["crows.db", "crows.db-wal", "crows.db-shm", "server.log", "server.log.1", "instance-id"])
      writeFileSync(path.join(old, name), "", { mode: 0o644 });
    writeFileSync(path.join(old, "owners-notes.txt"), "", { mode: 0o644 });
    chmodSync(path.join(old, "owners-notes.txt"), 0o644);
    prepareDataDir(old);
    for (const name of ["crows.db", "crows.db-wal", "crows.db-shm", "server.log", "server.log.1", "instance-id"])
      assert.is(statSync(path.join(old, name)).mode & 0o777, 0o600, name);
    assert.is(statSync(path.join(old, "owners-notes.txt")).mode & 0o777, 0o644, "not crows' file: left alone");
    assert.is(
      os.platform() === "win32" || (process.umask() & 0o077) === 0o077,
      true,
      "the umask keeps new files owner-only",
    );
  } finally {
    removeDir(root);
  }
});

test.run();

// A PostgreSQL cluster of the test's own (initdb + pg_ctl on a free loopback port, as the postgres
// user when run as root, like scripts/test-services.sh), for the faults that restart or pause the
// server: the shared one in /tmp/services.env serves other suites at the same time and is never
// touched. Without PostgreSQL's tools the suite registers a named skip (a failure on CI, where
// CROWS_TEST_SERVICES_REQUIRED=1).
import { execFileSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { test } from "uvu";

export interface PrivatePg {
  url: string;
  /** pg_ctl -m fast restart: every connection is ended (57P01) and the server comes back. */
  restart(): void;
  /** SIGSTOP the postmaster and every backend: the server is there and answers nothing. */
  pause(): void;
  resume(): void;
  stop(): void;
}

function pgBin(name: string): string | undefined {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root).sort((a, b) => Number(b) - Number(a));
  for (const v of versions) {
    const file = path.join(root, v, "bin", name);
    if (existsSync(file)) return file;
  }
  return undefined;
}

const asRoot = process.getuid?.() === 0;
// No pipes: a postmaster started by pg_ctl would inherit them and keep the call from returning.
function asPg(file: string, args: string[]): void {
  if (asRoot) execFileSync("runuser", ["-u", "postgres", "--", file, ...args], { stdio: "ignore", timeout: 90_000 });
  else execFileSync(file, args, { stdio: "ignore", timeout: 90_000 });
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Starts the cluster; null (with a registered skip or failure) where PostgreSQL is not installed. */
export async function privatePg(suite: string): Promise<PrivatePg | null> {
  const initdb = pgBin("initdb");
  const pgCtl = pgBin("pg_ctl");
  if (!initdb || !pgCtl) {
    const why = `${suite}: PostgreSQL's initdb/pg_ctl are not installed`;
    if (process.env.CROWS_TEST_SERVICES_REQUIRED === "1")
      test(`${suite}: PostgreSQL is required here`, () => {
        throw new Error(why);
      });
    else test(`${suite}: SKIPPED (no PostgreSQL)`, () => console.warn(`\n!!! SKIPPED ${why}\n`));
    return null;
  }
  const root = mkdtempSync(path.join(os.tmpdir(), "crows-private-pg-"));
  const data = path.join(root, "pg");
  execFileSync("mkdir", ["-m", "700", data]);
  if (asRoot) {
    const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }));
    const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }));
    chownSync(root, uid, gid);
    chownSync(data, uid, gid);
  }
  asPg(initdb, ["-D", data, "-U", "crows", "-A", "trust", "--no-sync", "-E", "UTF8"]);
  const port = await freePort();
  const options = `-h 127.0.0.1 -p ${port} -k ${data} -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=100`;
  const start = () =>
    asPg(pgCtl, ["-D", data, "-l", path.join(data, "server.log"), "-w", "-t", "60", "-o", options, "start"]);
  start();
  const postmasterPid = () => Number(readFileSync(path.join(data, "postmaster.pid"), "utf8").split("\n")[0]);
  const family = (): number[] => {
    const pid = postmasterPid();
    const children = execFileSync("ps", ["-o", "pid=", "--ppid", String(pid)], { encoding: "utf8" })
      .split("\n")
      .map((l) => Number(l.trim()))
      .filter((n) => n > 0);
    return [pid, ...children];
  };
  // A backend can end between the listing and the signal (a connection closed as the pause began):
  // it needs no signal then.
  const signal = (sig: NodeJS.Signals, pids = family()) =>
    pids.forEach((pid) => {
      try {
        process.kill(pid, sig);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
      }
    });
  return {
    url: `postgresql://crows@127.0.0.1:${port}/postgres`,
    restart: () =>
      asPg(pgCtl, [
        "-D",
        data,
        "-l",
        path.join(data, "server.log"),
        "-m",
        "fast",
        "-w",
        "-t",
        "60",
        "-o",
        options,
        "restart",
      ]),
    // The postmaster is stopped first, then its children, listed again until none is new: a backend
    // forked between a listing and the postmaster's stop would otherwise go on serving queries.
    pause: () => {
      const stopped = new Set<number>();
      for (let round = 0; round < 10; round++) {
        const fresh = family().filter((pid) => !stopped.has(pid));
        if (fresh.length === 0) return;
        signal("SIGSTOP", fresh);
        for (const pid of fresh) stopped.add(pid);
      }
    },
    resume: () => signal("SIGCONT"),
    stop: () => {
      try {
        signal("SIGCONT");
        asPg(pgCtl, ["-D", data, "-m", "immediate", "-w", "stop"]);
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    },
  };
}

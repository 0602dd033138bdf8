// Drives bin/crows the way a user does (the command runner lives in harness/, shared with bench/),
// plus what only tests need: a long-running process, a pid probe, a polled wait.
import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import * as assert from "uvu/assert";

export { BIN, ROOT, baseEnv, crows, removeDir, tempDataDir, type CommandResult } from "../../harness/cli.ts";
import { ROOT } from "../../harness/cli.ts";

/** A process that runs until it exits on its own or is signalled; output collected. */
export function startProcess(command: string, args: string[], env: Record<string, string>) {
  const child: ChildProcess = spawn(command, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, exited, output: () => ({ stdout, stderr }) };
}

export function pidRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !/^[ZX]/.test(stat.slice(stat.lastIndexOf(")") + 2));
  } catch {
    return true;
  }
}

export async function waitFor<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The one JSON line a command printed (asserts there is exactly one). */
export function oneJsonLine(text: string): any {
  const lines = text.split("\n").filter((l) => l.trim() !== "");
  assert.is(lines.length, 1, `expected one line, got: ${text}`);
  return JSON.parse(lines[0]!);
}

/** Every file under a folder, for a test that searches a data folder byte by byte. */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? filesUnder(full) : [full];
  });
}

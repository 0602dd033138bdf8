// Drives bin/crows the way a user does: a real process per command, its one JSON line parsed,
// its exit code kept. Each test gets its own data folder (mode 700, as mkdtemp makes it).
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { childEnv } from "../../harness/child-env.ts";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const BIN = path.join(ROOT, "bin/crows");

export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The one JSON line on stdout (or on stderr when the command failed). */
  json: any;
  ms: number;
}

export function tempDataDir(): string {
  return mkdtempSync(path.join(os.tmpdir(), "crows-ops-"));
}

export function baseEnv(dataDir: string, env: Record<string, string> = {}): Record<string, string> {
  return childEnv({ CROWS_DATA_DIR: dataDir, CROWS_PORT: "0", ...env });
}

export function crows(args: string[], env: Record<string, string>): Promise<CommandResult> {
  const started = Date.now();
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => {
    child.on("close", (code) => {
      const text = (code === 0 ? stdout : stderr || stdout).trim();
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      resolve({ code, stdout, stderr, json, ms: Date.now() - started });
    });
  });
}

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

export async function waitFor<T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

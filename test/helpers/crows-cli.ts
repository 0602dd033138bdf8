// Drives bin/crows the way a user does: a real process per command, its one JSON line parsed,
// its exit code kept. Each test gets its own data folder (mode 700, as mkdtemp makes it).
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import * as assert from "uvu/assert";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

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
  const clean: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("CROWS_") && k !== "DATABASE_URL" && k !== "REDIS_URL") clean[k] = v;
  return { ...clean, CROWS_DATA_DIR: dataDir, CROWS_PORT: "0", ...env };
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

// Runs bin/crows the way a user does: a real process per command, its one JSON line parsed, its
// exit code kept; each caller gets its own data folder (mode 700, as mkdtemp makes it).
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { childEnv } from "./child-env.ts";

export const ROOT = fileURLToPath(new URL("..", import.meta.url));
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

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

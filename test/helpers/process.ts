// The server as a real child process, the way `npm start` runs it: waits for the ready line and
// gives back its URL, its exit and its output. kill("SIGKILL") is a crash: nothing is flushed.
// The child sees none of the caller's crows settings (DATABASE_URL, CROWS_TOKEN...): only `env`.
import { spawn, type ChildProcess } from "node:child_process";
import { childEnv } from "../../harness/child-env.ts";

export interface ServerProcess {
  child: ChildProcess;
  /** The ready line: one JSON object, {"state":"live","url",...}. */
  ready: Promise<string>;
  exited: Promise<number | null>;
  output(): { stdout: string; stderr: string };
}

/** `entry` is the server's entry file: src/main.ts, or a test fixture that starts it with more around it. */
export function startProcess(env: Record<string, string>, entry = "src/main.ts"): ServerProcess {
  const child = spawn(process.execPath, ["--import", "tsx", entry], {
    env: childEnv(env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const ready = new Promise<string>((resolve, reject) => {
    // Generous: a loaded machine compiles the whole server through tsx before it listens (and a
    // fixture may start a second process, an MCP server, first).
    const timer = setTimeout(() => reject(new Error(`no ready line; stderr: ${stderr}`)), 90_000);
    child.stdout.on("data", () => {
      const line = stdout.split("\n").find((l) => l.startsWith("{"));
      if (line) {
        clearTimeout(timer);
        resolve(line);
      }
    });
    child.on("exit", (code) => reject(new Error(`exited ${code} before ready; stderr: ${stderr}`)));
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, ready, exited, output: () => ({ stdout, stderr }) };
}

/** Starts the process and resolves with its base URL once it is ready. */
export async function startServerProcess(
  env: Record<string, string>,
  entry?: string,
): Promise<ServerProcess & { url: string }> {
  const proc = startProcess(env, entry);
  const line = await proc.ready;
  return { ...proc, url: (JSON.parse(line) as { url: string }).url };
}

/** kill -9, and wait until the process is gone. */
export async function crash(proc: ServerProcess): Promise<void> {
  if (proc.child.exitCode !== null || proc.child.signalCode !== null) return;
  proc.child.kill("SIGKILL");
  await proc.exited;
}

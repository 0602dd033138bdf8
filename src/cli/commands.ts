// What each `crows` command does, over the files in the data folder (src/ops/paths.ts). A command
// finds the server by the lock's live holder, never by a port or a process name.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { readOne, SERVER } from "../base/config.ts";
import { dataDirFromEnv, dataFiles, type DataFiles } from "../ops/paths.ts";
import { liveHolder } from "../ops/lock.ts";
import { readServerState, readStartError, writeServerState, type ServerState } from "../ops/state.ts";
import { sameProcessAlive } from "../ops/processes.ts";
import { LOG_FILES_KEPT } from "../ops/server-log.ts";
import { EXIT } from "../ops/exit.ts";
import { prepareDataDir } from "../storage/data-dir.ts";
import { StartError } from "../storage/start-error.ts";

export class CommandError extends Error {
  constructor(
    readonly exit: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const BIN = fileURLToPath(new URL("../../bin/crows", import.meta.url));
const UP_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 30_000;

type Env = Record<string, string | undefined>;

function files(env: Env = process.env): DataFiles {
  return dataFiles(dataDirFromEnv(env));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function ready(url: string, env: Env): Promise<boolean> {
  try {
    const token = readOne(env, SERVER.token);
    const response = await fetch(`${url}/readyz`, {
      headers: token ? { authorization: `Bearer ${token}` } : {},
      signal: AbortSignal.timeout(3000),
    });
    await response.body?.cancel();
    return response.status === 200;
  } catch {
    return false;
  }
}

function live(state: ServerState, server: "found" | "started") {
  const { url, pid, started, version, data_dir, log } = state;
  return { state: "live", url, pid, started, version, data_dir, log, server };
}

/** Waits until server.json describes `pid` and its /readyz answers 200. */
async function untilReady(
  f: DataFiles,
  pid: number,
  env: Env,
  deadline: number,
  gone: () => boolean,
): Promise<ServerState | undefined> {
  while (Date.now() < deadline) {
    const state = readServerState(f);
    if (state?.pid === pid && !state.stopped && (await ready(state.url, env))) return state;
    if (gone()) return undefined;
    await sleep(50);
  }
  throw new CommandError(
    EXIT.failed,
    "timeout",
    `the server (pid ${pid}) was not ready within ${UP_TIMEOUT_MS / 1000} s; see crows logs`,
  );
}

export async function up(extraEnv: Env = {}): Promise<ReturnType<typeof live>> {
  const env = { ...process.env, ...extraEnv };
  const f = files(env);
  const deadline = Date.now() + UP_TIMEOUT_MS;
  const holder = liveHolder(f);
  if (holder) {
    const state = await untilReady(f, holder.pid, env, deadline, () => !sameProcessAlive(holder.pid, holder.tick));
    if (state) return live(state, "found");
    throw new CommandError(
      EXIT.failed,
      "failed",
      `the server pid ${holder.pid} stopped while starting; run crows up again`,
    );
  }
  // A folder the server would refuse cannot hold start-error.json: say why here, exit 3 like serve.
  try {
    prepareDataDir(f.dir);
  } catch (error) {
    if (error instanceof StartError) throw new CommandError(EXIT.cannotRun, error.code, error.message);
    throw error;
  }
  const spawnedAt = Date.now();
  const child = spawn(process.execPath, [BIN, "serve"], { detached: true, stdio: "ignore", env });
  let exitCode: number | null | undefined;
  child.on("exit", (code) => (exitCode = code));
  child.unref();
  const pid = child.pid;
  if (pid === undefined) throw new CommandError(EXIT.failed, "failed", "the server process could not be started");
  const state = await untilReady(f, pid, env, deadline, () => exitCode !== undefined);
  if (state) return live(state, "started");
  const startError = readStartError(f);
  if (startError && Date.parse(startError.at) >= spawnedAt - 1000 && startError.pid === pid) {
    // Another `crows up` won the race for the lock: its server is the one to find.
    if (startError.code === "folder_busy" && liveHolder(f)) return up(extraEnv);
    throw new CommandError(EXIT.cannotRun, startError.code, startError.message);
  }
  throw new CommandError(
    EXIT.failed,
    "failed",
    `the server exited with code ${exitCode} before it was ready; see crows logs`,
  );
}

export async function status() {
  const f = files();
  const state = readServerState(f);
  const holder = liveHolder(f);
  const startError = readStartError(f);
  // A start error counts once the last server had stopped; a second server refused while it ran
  // (folder_busy) is not that server's error.
  const startErrorIsNewer =
    startError && (!state || Date.parse(startError.at) > Date.parse(state.stopped_at ?? state.started));
  const last_error = (startErrorIsNewer ? startError.message : state?.last_error) ?? null;
  if (holder) {
    const ours = state?.pid === holder.pid ? state : undefined;
    return {
      state: "live",
      pid: holder.pid,
      url: ours?.url ?? null,
      uptime_s: Math.max(0, Math.round((Date.now() - Date.parse(holder.started)) / 1000)),
      version: ours?.version ?? null,
      last_error: ours?.last_error ?? null,
    };
  }
  return {
    state: !state || state.stopped ? "stopped" : "gone",
    pid: state?.pid ?? null,
    url: state?.url ?? null,
    uptime_s: null,
    version: state?.version ?? null,
    last_error,
  };
}

export async function stop() {
  const f = files();
  const holder = liveHolder(f);
  if (!holder) {
    const now = await status();
    return { state: now.state, pid: now.pid, was_running: false };
  }
  try {
    process.kill(holder.pid, "SIGTERM");
  } catch (error) {
    throw new CommandError(
      EXIT.failed,
      "failed",
      `pid ${holder.pid} cannot be signalled (${(error as NodeJS.ErrnoException).code})`,
    );
  }
  const deadline = Date.now() + STOP_TIMEOUT_MS;
  while (sameProcessAlive(holder.pid, holder.tick)) {
    if (Date.now() > deadline)
      throw new CommandError(
        EXIT.failed,
        "stop_timeout",
        `pid ${holder.pid} did not stop within ${STOP_TIMEOUT_MS / 1000} s; it is still running`,
      );
    await sleep(25);
  }
  let state = readServerState(f);
  if (state && state.pid === holder.pid && !state.stopped) {
    // It died on the signal without recording it (a crash mid-stop): the stop was still asked for.
    state = {
      ...state,
      stopped: true,
      stopped_at: new Date().toISOString(),
      last_error: state.last_error ?? "exited during stop without recording it",
    };
    writeServerState(f, state);
  }
  return {
    state: "stopped",
    pid: holder.pid,
    stopped_at: state?.stopped_at ?? new Date().toISOString(),
    was_running: true,
  };
}

export async function restart(reason?: string) {
  const previous = readServerState(files());
  if (liveHolder(files())) await stop();
  const env: Env = {};
  if (previous?.port) env.CROWS_PORT = String(previous.port);
  if (reason?.trim()) env.CROWS_RESTART_REASON = reason.trim();
  return up(env);
}

export async function logs(count: number) {
  const f = files();
  const lines: string[] = [];
  for (let n = 0; n < LOG_FILES_KEPT && lines.length < count; n++) {
    let text: string;
    try {
      text = readFileSync(n === 0 ? f.log : `${f.log}.${n}`, "utf8");
    } catch {
      break;
    }
    const fileLines = text.split("\n").filter((l) => l !== "");
    lines.unshift(...fileLines.slice(Math.max(0, fileLines.length - (count - lines.length))));
  }
  return { log: f.log, lines };
}

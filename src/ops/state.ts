// server.json: what the last server of this data folder said about itself (pid, start time, port,
// url, version, whether it was stopped, the last error), read by `crows status` with the server
// down. start-error.json: why the last start failed. Both written whole (temp file + rename), so a
// reader never sees half a record.
import { readFileSync, renameSync, writeFileSync, rmSync } from "node:fs";
import type { DataFiles } from "./paths.ts";

export interface ServerState {
  pid: number;
  /** The process's start tick (see processes.ts), to tell it from a later process with its pid. */
  tick?: string;
  started: string;
  port: number;
  url: string;
  version: string;
  data_dir: string;
  log: string;
  /** True once the server stopped on request (crows stop, SIGTERM); false while it runs. */
  stopped: boolean;
  stopped_at?: string;
  last_error: string | null;
  restart_reason?: string;
}

export interface StartErrorRecord {
  code: string;
  message: string;
  at: string;
  pid: number;
}

function readJson<T>(file: string): T | undefined {
  try {
    return JSON.parse(readFileSync(file, "utf8")) as T;
  } catch {
    return undefined;
  }
}

function writeJson(file: string, value: unknown): void {
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, JSON.stringify(value, null, 2) + "\n", { mode: 0o600 });
  renameSync(temp, file);
}

export function readServerState(files: DataFiles): ServerState | undefined {
  const state = readJson<ServerState>(files.state);
  return state && typeof state.pid === "number" ? state : undefined;
}

export function writeServerState(files: DataFiles, state: ServerState): void {
  writeJson(files.state, state);
}

/** Merges `change` into server.json when it still describes this process. */
export function updateServerState(files: DataFiles, change: Partial<ServerState>): void {
  const state = readServerState(files);
  if (state && state.pid === process.pid) writeServerState(files, { ...state, ...change });
}

export function readStartError(files: DataFiles): StartErrorRecord | undefined {
  return readJson<StartErrorRecord>(files.startError);
}

export function writeStartError(files: DataFiles, record: StartErrorRecord): void {
  writeJson(files.startError, record);
}

export function clearStartError(files: DataFiles): void {
  rmSync(files.startError, { force: true });
}

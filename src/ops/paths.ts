// The files crows keeps beside its database in the data folder (docs/operations.md lists them).
import path from "node:path";
import { readOne, STORAGE } from "../base/config.ts";

export interface DataFiles {
  dir: string;
  lock: string;
  state: string;
  startError: string;
  log: string;
}

export function dataFiles(dataDir: string): DataFiles {
  return {
    dir: dataDir,
    lock: path.join(dataDir, "server.lock"),
    state: path.join(dataDir, "server.json"),
    startError: path.join(dataDir, "start-error.json"),
    log: path.join(dataDir, "server.log"),
  };
}

/** The data folder a command means: CROWS_DATA_DIR, or .crows in the working folder (its declaration). */
export function dataDirFromEnv(env: Record<string, string | undefined> = process.env): string {
  return readOne(env, STORAGE.dataDir);
}

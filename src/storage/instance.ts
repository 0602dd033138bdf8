// This instance's name on the lists it runs (TodoList.ownerId). Kept in the data folder, so a
// restarted server reclaims its own running lists at once instead of waiting for their leases to
// lapse; each instance sharing one database therefore needs its own CROWS_DATA_DIR (or its own
// CROWS_INSTANCE_ID).
import { readFileSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import os from "node:os";
import path from "node:path";
import type { Config } from "../base/config.ts";

export function instanceIdOf(config: Pick<Config, "dataDir" | "instanceId">): string {
  if (config.instanceId) return config.instanceId;
  const file = path.join(config.dataDir, "instance-id");
  const read = () => {
    try {
      return readFileSync(file, "utf8").trim();
    } catch {
      return "";
    }
  };
  const existing = read();
  if (existing) return existing;
  try {
    writeFileSync(file, `${os.hostname()}-${randomBytes(4).toString("hex")}\n`, { flag: "wx", mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  return read(); // whoever won the create, this is the id
}

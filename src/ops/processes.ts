// Is a recorded pid still the process that recorded it? A pid alone can be reused after a crash or
// a reboot, so a lock also records the process's start tick from /proc (Linux); where /proc is
// missing, a live pid is taken at its word.
import { readFileSync } from "node:fs";

export function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"; // alive, someone else's
  }
}

/** The kernel's start tick of `pid` (field 22 of /proc/<pid>/stat), or undefined without /proc. */
export function startTickOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return fields[19];
  } catch {
    return undefined;
  }
}

/** True when `pid` runs and, where /proc can tell, is the same process that recorded `tick`. */
export function sameProcessAlive(pid: number, tick: string | undefined): boolean {
  if (!pidAlive(pid)) return false;
  if (tick === undefined) return true;
  const now = startTickOf(pid);
  return now === undefined || now === tick;
}

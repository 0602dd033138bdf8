// Is a recorded pid still the process that recorded it? A pid alone can be reused after a crash or
// a reboot, so a lock also records the process's start tick from /proc (Linux); where /proc is
// missing, a live pid is taken at its word.
import { readFileSync } from "node:fs";

/** A live process: it exists and is not a zombie (an exited child nobody has reaped yet). */
export function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false; // EPERM: alive, someone else's
  }
  const state = procStat(pid)?.[0];
  return state !== "Z" && state !== "X";
}

/** The fields of /proc/<pid>/stat after the command name (field 3 onwards), or undefined. */
function procStat(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

/** The kernel's start tick of `pid` (field 22 of /proc/<pid>/stat), or undefined without /proc. */
export function startTickOf(pid: number): string | undefined {
  return procStat(pid)?.[19];
}

/** True when `pid` runs and, where /proc can tell, is the same process that recorded `tick`. */
export function sameProcessAlive(pid: number, tick: string | undefined): boolean {
  if (!pidAlive(pid)) return false;
  if (tick === undefined) return true;
  const now = startTickOf(pid);
  return now === undefined || now === tick;
}

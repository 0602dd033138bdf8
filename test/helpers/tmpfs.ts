// A small tmpfs of the test's own, for the disk-full faults: root mounts one; anyone else gets a
// registered, named skip (a test that says why). CI sets CROWS_TEST_TMPFS_REQUIRED=1, so there a
// mount that fails fails the run instead of skipping.
import { execFileSync } from "node:child_process";
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "uvu";

export interface Tmpfs {
  /** The mount point (755, root's). */
  mount: string;
  /** Fills the file system to the brim with one file; returns its path (remove it to free space). */
  fill(): string;
  unmount(): void;
}

export function tmpfs(suite: string, sizeBytes: number): Tmpfs | null {
  const mount = mkdtempSync(path.join(os.tmpdir(), "crows-tmpfs-"));
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${sizeBytes},mode=755`, "tmpfs", mount], { stdio: "pipe" });
  } catch (error) {
    rmSync(mount, { recursive: true, force: true });
    const why = `${suite}: cannot mount a tmpfs (${String((error as Error).message).split("\n")[0]}); it needs root`;
    if (process.env.CROWS_TEST_TMPFS_REQUIRED === "1") {
      test(`${suite}: a tmpfs is required here`, () => {
        throw new Error(`${why}, and CROWS_TEST_TMPFS_REQUIRED=1 (CI)`);
      });
    } else {
      test(`${suite}: SKIPPED (no tmpfs)`, () => console.warn(`\n!!! SKIPPED ${why}\n`));
    }
    return null;
  }
  return {
    mount,
    fill() {
      const file = path.join(mount, `filler-${Date.now()}`);
      const fd = openSync(file, "w");
      try {
        // Big blocks, then ever smaller ones, until not one byte more fits.
        for (let block = 1 << 20; block >= 1; block >>= 1) {
          const chunk = Buffer.alloc(block, 1);
          for (;;) {
            try {
              writeSync(fd, chunk);
            } catch {
              break;
            }
          }
        }
      } finally {
        closeSync(fd);
      }
      return file;
    },
    unmount() {
      try {
        execFileSync("umount", ["-l", mount], { stdio: "pipe" });
      } finally {
        rmSync(mount, { recursive: true, force: true });
      }
    },
  };
}

/** A folder crows accepts as its data folder (700) inside `parent`. */
export function dataFolderIn(parent: string, name = "data"): string {
  const dir = path.join(parent, name);
  mkdirSync(dir, { mode: 0o700 });
  return dir;
}

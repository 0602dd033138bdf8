// Whether writes are failing right now, for /readyz and the write gate. Two states:
// - failing: a request met storage trouble (trouble.ts). It lasts until a write succeeds again, or
//   until a probe (a small file written and synced in the data folder, for SQLite) succeeds once
//   the last failure is CLEAR_AFTER_MS old, so a full disk that was freed turns ready again.
// - fenced: the data folder is gone or replaced (ops/folder-watch.ts); it never clears, the
//   server is on its way out and refuses every write.
import { closeSync, fsyncSync, openSync, rmSync, writeSync } from "node:fs";
import path from "node:path";
import { describeError } from "../base/describe-error.ts";
import { StorageTroubleError, storageTroubleOf, TROUBLE_MESSAGE, type StorageTroubleKind } from "./trouble.ts";

const CLEAR_AFTER_MS = 5_000;
const PROBE_BYTES = 64 * 1024;

export class StorageHealth {
  private failing: { kind: StorageTroubleKind; at: number } | undefined;
  private fenced: StorageTroubleError | undefined;
  private loggedKind: StorageTroubleKind | undefined;

  constructor(
    /** The data folder a probe may write into, or undefined (PostgreSQL: readiness asks the database). */
    private readonly probeDir: string | undefined,
    private readonly logLine: (line: string) => void = () => {},
  ) {}

  /** Records `error` if it is storage trouble, and returns its kind (undefined for any other error). */
  note(error: unknown): StorageTroubleKind | undefined {
    const kind = storageTroubleOf(error);
    if (kind === undefined || kind === "folder_lost") return kind;
    this.failing = { kind, at: Date.now() };
    // One line per change of trouble, not one per failed request.
    if (this.loggedKind !== kind) {
      this.loggedKind = kind;
      this.logLine(`storage: writes failing (${kind}): ${describeError(error)}`);
    }
    return kind;
  }

  /** A write went through: the trouble, if any, is over. */
  recovered(): void {
    if (this.failing === undefined) return;
    this.logLine(`storage: writes succeed again after ${this.failing.kind}`);
    this.failing = undefined;
    this.loggedKind = undefined;
  }

  fence(kind: StorageTroubleKind, message: string): void {
    this.fenced ??= new StorageTroubleError(kind, message);
  }

  get fencedBy(): StorageTroubleError | undefined {
    return this.fenced;
  }

  /** Throws when no write may be tried (the folder is fenced). */
  assertWritable(): void {
    if (this.fenced) throw new StorageTroubleError(this.fenced.kind);
  }

  /** "ok", or why writes fail, for /readyz. */
  check(): string {
    if (this.fenced) return this.fenced.message;
    if (this.failing === undefined) return "ok";
    if (Date.now() - this.failing.at >= CLEAR_AFTER_MS && this.probe()) {
      this.recovered();
      return "ok";
    }
    return `writes failing: ${this.failing.kind}`;
  }

  private probe(): boolean {
    if (this.probeDir === undefined) return this.failing?.kind === "database_unavailable";
    const file = path.join(this.probeDir, `.write-probe.${process.pid}`);
    let fd: number | undefined;
    try {
      fd = openSync(file, "w", 0o600);
      writeSync(fd, Buffer.alloc(PROBE_BYTES));
      fsyncSync(fd);
      return true;
    } catch {
      return false;
    } finally {
      if (fd !== undefined) closeSync(fd);
      rmSync(file, { force: true });
    }
  }
}

/** The message a client gets for trouble of `kind`. */
export function troubleMessage(kind: StorageTroubleKind): string {
  return TROUBLE_MESSAGE[kind];
}

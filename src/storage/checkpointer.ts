// SQLite's WAL grows with every commit and is copied back into the database file by a checkpoint.
// Left to SQLite, the connection whose commit takes the WAL past 1,000 pages runs that checkpoint
// inside the commit, fsync included: on the server's connection that stops the event loop (a
// 50-item list writes ~3,300 pages, so ~3 checkpoints of several ms each), and on the webhook
// sender's connection it happens while the sender holds the file's writer lock, so the flock waits
// for it (writer-lock.ts). Here the server's own connections never checkpoint (wal_autocheckpoint =
// 0) and a thread of this module's runs PASSIVE checkpoints beside them (checkpoint-thread.mjs),
// taking the writer lock only for a short last copy that lets the WAL start over.
// If the thread cannot start, or ends, the server's connection checkpoints as SQLite would.
import { Worker } from "node:worker_threads";
import { describeError } from "../base/describe-error.ts";
import { CHECKPOINT_THREAD, WriterLock } from "./writer-lock.ts";

const THREAD = new URL("./checkpoint-thread.mjs", import.meta.url);
/** How often the thread looks for pages to copy. */
export const CHECKPOINT_EVERY_MS = 250;
/** SQLite's own default: what the server's connection goes back to without the thread. */
export const SQLITE_AUTOCHECKPOINT_PAGES = 1000;

type FromThread =
  | { kind: "started" }
  | { kind: "failed"; reason: string }
  | { kind: "round"; log: number; checkpointed: number; restarted: boolean }
  | { kind: "error"; message: string }
  | { kind: "stopped" };

export interface CheckpointerDeps {
  file: string;
  /** The file's writer lock (writer-lock.ts): held for the short second copy that lets the WAL start over. */
  writerLock?: SharedArrayBuffer | undefined;
  /** Sets wal_autocheckpoint on the server's connections (0: never checkpoint in a commit). */
  autocheckpoint: (pages: number) => void;
  logLine: (line: string) => void;
  /** Told when the thread takes the checkpoints over (true) and when it hands them back (false). */
  onRunning?: (running: boolean) => void;
  everyMs?: number;
}

export class Checkpointer {
  private worker: Worker | undefined;
  private stopping = false;
  private stoppedSignal: Promise<void> = Promise.resolve();
  private starting: Promise<void> = Promise.resolve();
  /** Rounds that copied pages, for tests and diagnostics. */
  rounds = 0;
  /** Rounds that copied every frame under the writer lock, so the WAL starts over. */
  restarts = 0;
  /** Whether the thread runs the checkpoints now (else the server's connection does). */
  running = false;

  constructor(private readonly deps: CheckpointerDeps) {}

  /**
   * Starts the thread; until it has, and if it cannot, the server's connection checkpoints itself.
   * Nobody needs to wait for it (the server opens and serves meanwhile): the promise is for tests.
   */
  start(): Promise<void> {
    // Never rejects: nobody awaits it, and a failure here only means the connection checkpoints itself.
    this.starting = this.spawn().catch((error: unknown) =>
      this.deps.logLine(
        `storage: the checkpoint thread could not take over (${describeError(error)}); the server's connection checkpoints the WAL itself`,
      ),
    );
    return this.starting;
  }

  /** Settles once the thread is up, or could not start. */
  get started(): Promise<void> {
    return this.starting;
  }

  private async spawn(): Promise<void> {
    const workerData = {
      file: this.deps.file,
      everyMs: this.deps.everyMs ?? CHECKPOINT_EVERY_MS,
      writerLock: this.deps.writerLock,
      holder: CHECKPOINT_THREAD,
      restartPages: SQLITE_AUTOCHECKPOINT_PAGES,
    };
    let worker: Worker;
    try {
      worker = new Worker(THREAD, { workerData, execArgv: [] });
    } catch (error) {
      this.deps.logLine(
        `storage: the checkpoint thread could not start (${describeError(error)}); the server's connection checkpoints the WAL itself`,
      );
      return;
    }
    let stopped!: () => void;
    this.stoppedSignal = new Promise((resolve) => (stopped = resolve));
    const reason = await new Promise<string | undefined>((resolve) => {
      worker.on("message", (message: FromThread) => {
        if (message.kind === "started") {
          // Held open only while it starts (a few tens of ms); then a background thread must never
          // hold the process open. After the listeners: adding one refs the thread's port.
          worker.unref();
          resolve(undefined);
        } else if (message.kind === "failed") resolve(message.reason);
        else if (message.kind === "round") {
          this.rounds += 1;
          if (message.restarted) this.restarts += 1;
        } else if (message.kind === "error")
          this.deps.logLine(
            `storage: a WAL checkpoint failed (tried again in ${this.deps.everyMs ?? CHECKPOINT_EVERY_MS} ms): ${message.message}`,
          );
        else stopped();
      });
      worker.on("error", (error) => {
        resolve(describeError(error));
        if (this.running) this.deps.logLine(`storage: the checkpoint thread failed: ${describeError(error)}`);
      });
      worker.on("exit", (code) => {
        // A thread ended while holding the file's writer lock cannot free it: free it for it.
        if (this.deps.writerLock) new WriterLock(this.deps.writerLock).releaseIfHeldBy(CHECKPOINT_THREAD);
        stopped();
        resolve(`it ended with code ${code}`);
        if (this.worker === worker) this.worker = undefined;
        if (this.running) this.handBack(`the checkpoint thread ended (code ${code})`);
      });
    });
    if (reason !== undefined) {
      this.deps.logLine(
        `storage: the checkpoint thread could not start (${reason}); the server's connection checkpoints the WAL itself`,
      );
      return;
    }
    this.worker = worker;
    if (this.stopping) return; // stopped while it started: stop() ends it, the server's connection keeps checkpointing
    this.deps.autocheckpoint(0);
    this.running = true;
    this.deps.onRunning?.(true);
  }

  /** The server's connection checkpoints again, as SQLite would on its own. */
  private handBack(why: string): void {
    this.running = false;
    this.deps.autocheckpoint(SQLITE_AUTOCHECKPOINT_PAGES);
    this.deps.onRunning?.(false);
    if (!this.stopping)
      this.deps.logLine(`storage: ${why}; the server's connection checkpoints the WAL itself from now on`);
  }

  /** Stops the thread (before the connections close: the last one to close checkpoints everything). */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.starting;
    const worker = this.worker;
    if (!worker) return;
    if (this.running) this.handBack("stopping");
    worker.postMessage("stop");
    const cap = setTimeout(() => void worker.terminate(), 5_000);
    await this.stoppedSignal;
    clearTimeout(cap);
    await worker.terminate();
    this.worker = undefined;
  }

  /** Whether the thread is alive (started and not yet ended or stopped). */
  get alive(): boolean {
    return this.worker !== undefined;
  }
}

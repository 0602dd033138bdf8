// The server's side of the webhook sender (docs/webhooks.md "Sending"): with a database file or
// PostgreSQL, the sender runs in a thread of its own (sender-thread.ts), so ten endpoints' sends,
// signatures and attempt records never take the flock's event loop; an in-memory database cannot
// be opened twice, so there it runs in-process. Either way the rest of the server sees one
// WebhookSender. A thread that ends unasked is started again; its deliveries are in the database
// and its leases lapse, so nothing is lost meanwhile.
import { Worker } from "node:worker_threads";
import { describeError } from "../base/describe-error.ts";
import type { SenderDatabase } from "../storage/webhooks/own-connections.ts";
import { SENDER_THREAD, WriterLock } from "../storage/writer-lock.ts";
import { Sender, type SenderDeps } from "./sender.ts";
import { WakeSignal } from "./wake-signal.ts";
import { FlockWork } from "./flock-work.ts";
import type { FromSender, SenderThreadData, ToSender } from "./thread-protocol.ts";

export interface WebhookSender {
  /** Where the sends run: a thread of their own, or the server's (an in-memory database, or a thread that could not start). */
  readonly runsIn: "own-thread" | "server-thread";
  /** Starts sending; decide links point at CROWS_PUBLIC_URL, else `listenUrl`. */
  start(listenUrl: string): Promise<void>;
  /** Something may be due now (an append that fans out, a redeliver, a recover). */
  wake(): void;
  /** An endpoint changed: read them afresh. */
  forgetEndpoints(): void;
  /** The flock appended an event now: sends wait while it works (sender.ts "yieldToFlock"). */
  flockWorked(): void;
  /** Stops taking deliveries and waits for the sends in flight (each bounded by the send timeout). */
  stop(): Promise<void>;
}

const RESTART_AFTER_MS = 1_000;
const WAKE_AFTER_MS = 5;
const BOOT = new URL("./sender-thread-boot.mjs", import.meta.url);

export class ThreadedSender implements WebhookSender {
  private worker: Worker | undefined;
  private listenUrl: string | undefined;
  private readonly signal = new WakeSignal();
  private readonly flockWork = new FlockWork();
  private wakeTimer: NodeJS.Timeout | undefined;
  private stopping = false;
  private restartTimer: NodeJS.Timeout | undefined;
  /** Set when the thread could not start: the sender then runs here. */
  private fallback: Sender | undefined;
  private stopped: Promise<void> | undefined;
  private signalStopped: (() => void) | undefined;

  constructor(
    private readonly database: SenderDatabase,
    private readonly deps: Omit<SenderDeps, "now">,
  ) {}

  get runsIn(): "own-thread" | "server-thread" {
    return this.fallback ? "server-thread" : "own-thread";
  }

  /** The thread sending now, if any (a supervisor or a test may end it: it is started again). */
  currentThread(): Worker | undefined {
    return this.worker;
  }

  async start(listenUrl: string): Promise<void> {
    this.listenUrl = listenUrl;
    const reason = await this.spawn();
    if (reason === undefined) return;
    this.deps.logLine(
      `webhooks: the sender thread could not start (${reason}); sending from the server's thread instead`,
    );
    this.fallback = new Sender(this.deps);
    await this.fallback.start(listenUrl);
  }

  wake(): void {
    if (this.fallback) {
      this.fallback.wake();
      return;
    }
    // A wake goes out a few milliseconds after the first append that finds the thread listening,
    // with every append of those milliseconds: a message costs the flock's thread far more than a count.
    if (!this.signal.appended() || this.wakeTimer) return;
    this.wakeTimer = setTimeout(() => {
      this.wakeTimer = undefined;
      this.send({ kind: "wake" });
    }, WAKE_AFTER_MS);
    this.wakeTimer.unref();
  }

  flockWorked(): void {
    if (this.fallback) {
      this.fallback.flockWorked();
      return;
    }
    this.flockWork.worked(Date.now());
  }

  forgetEndpoints(): void {
    if (this.fallback) {
      this.fallback.forgetEndpoints();
      return;
    }
    this.send({ kind: "forget-endpoints" });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.restartTimer);
    clearTimeout(this.wakeTimer);
    if (this.fallback) return this.fallback.stop();
    const worker = this.worker;
    if (!worker) return;
    this.send({ kind: "stop" });
    // The thread finishes its sends in flight (each bounded by the timeout), then answers.
    const cap = setTimeout(() => void worker.terminate(), this.deps.config.timeoutMs + 5_000);
    await this.stopped;
    clearTimeout(cap);
    await worker.terminate();
  }

  private send(message: ToSender): void {
    this.worker?.postMessage(message);
  }

  /** Starts the thread; resolves undefined once it sends, or the reason it could not start. */
  private async spawn(): Promise<string | undefined> {
    const data: SenderThreadData = {
      database: this.database,
      wakeSignal: this.signal.buffer,
      flockWork: this.flockWork.buffer,
      config: this.deps.config,
      approvalWindowMs: this.deps.approvalWindowMs,
      instanceId: this.deps.instanceId,
      linkKey: new Uint8Array(await this.deps.linkKey()),
      listenUrl: this.listenUrl!,
    };
    // No inherited flags: a parent run with --import tsx would register the loader twice.
    const worker = new Worker(BOOT, { workerData: data, execArgv: [] });
    worker.unref();
    this.stopped = new Promise((resolve) => (this.signalStopped = resolve));
    return new Promise((resolve) => {
      let started = false;
      worker.on("message", (message: FromSender) => {
        if (message.kind === "log") this.deps.logLine(message.line);
        else if (message.kind === "started") {
          started = true;
          this.worker = worker;
          resolve(undefined);
        } else if (message.kind === "failed") resolve(message.reason);
        else if (message.kind === "stopped") this.signalStopped?.();
      });
      worker.on("error", (error) => {
        if (!started) resolve(describeError(error));
        else this.deps.logLine(`webhooks: the sender thread failed: ${describeError(error)}`);
      });
      worker.on("exit", (code) => {
        // A thread ended mid-transaction cannot release the file's writer lock: release it for it.
        if (this.database.writerLock) new WriterLock(this.database.writerLock).releaseIfHeldBy(SENDER_THREAD);
        this.signalStopped?.();
        if (!started) return resolve(`it ended with code ${code}`);
        if (this.worker === worker) this.worker = undefined;
        if (this.stopping) return;
        this.deps.logLine(
          `webhooks: the sender thread ended (code ${code}); starting it again in ${RESTART_AFTER_MS / 1000} s`,
        );
        this.restartTimer = setTimeout(() => void this.respawn(), RESTART_AFTER_MS);
        this.restartTimer.unref();
      });
    });
  }

  private async respawn(): Promise<void> {
    if (this.stopping) return;
    const reason = await this.spawn().catch((error: unknown) => describeError(error));
    if (reason !== undefined && !this.stopping) {
      this.deps.logLine(
        `webhooks: the sender thread could not start again (${reason}); trying again in ${RESTART_AFTER_MS / 1000} s`,
      );
      this.restartTimer = setTimeout(() => void this.respawn(), RESTART_AFTER_MS);
      this.restartTimer.unref();
    }
  }
}

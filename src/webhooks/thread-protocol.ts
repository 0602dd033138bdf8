// What the server and the webhook sender thread say to each other (sender-host.ts, sender-thread.ts).
//   server -> thread: wake (something may be due), forget-endpoints (one changed), stop (finish the
//                     sends in flight, close the connections, answer stopped).
//   thread -> server: started (sending), failed (could not start; the server sends in-process),
//                     log (a line for the server's log), stopped.
// Everything crosses by structured clone; the SQLite writer lock (writer-lock.ts), the wake signal
// (wake-signal.ts: a wake is sent only while the thread listens) and the flock's work
// (flock-work.ts: sends wait while it works) are shared memory.
import type { WebhookConfig } from "../base/webhook-config.ts";
import type { SenderDatabase } from "../storage/webhooks/own-connections.ts";

export interface SenderThreadData {
  database: SenderDatabase;
  /** Appends counted by the server, and whether the thread listens for a wake (wake-signal.ts). */
  wakeSignal: SharedArrayBuffer;
  /** When the flock last appended, and since when it has worked without a rest (flock-work.ts). */
  flockWork: SharedArrayBuffer;
  config: WebhookConfig;
  approvalWindowMs: number;
  instanceId: string;
  linkKey: Uint8Array;
  listenUrl: string;
}

export type ToSender = { kind: "wake" } | { kind: "forget-endpoints" } | { kind: "stop" };

export type FromSender =
  | { kind: "started" }
  | { kind: "failed"; reason: string }
  | { kind: "log"; line: string }
  | { kind: "stopped" };

// The webhook sender in a thread of its own (sender-host.ts starts it and speaks to it): its HTTP
// sends, signing, JSON and bookkeeping run beside the flock, on the other core, on connections of
// its own (src/storage/webhooks/own-connections.ts). The protocol, both ways, is in thread-protocol.ts.
import { parentPort, workerData } from "node:worker_threads";
import { describeError } from "../base/describe-error.ts";
import { openSenderConnections } from "../storage/webhooks/own-connections.ts";
import { Sender } from "./sender.ts";
import { WakeSignal } from "./wake-signal.ts";
import { FlockWork } from "./flock-work.ts";
import type { FromSender, SenderThreadData, ToSender } from "./thread-protocol.ts";

const port = parentPort!;

const data = workerData as SenderThreadData;
const tell = (message: FromSender) => port.postMessage(message);
const logLine = (line: string) => tell({ kind: "log", line });

try {
  const connections = openSenderConnections(data.database, logLine);
  const key = Buffer.from(data.linkKey);
  const signal = new WakeSignal(data.wakeSignal);
  const sender: Sender = new Sender({
    store: connections.store,
    config: data.config,
    approvalWindowMs: data.approvalWindowMs,
    instanceId: data.instanceId,
    linkKey: async () => key,
    logLine,
    onSweep: () => signal.sweeping(),
    onIdle: () => {
      if (signal.listen()) sender.wake();
    },
    flockWork: new FlockWork(data.flockWork),
  });
  port.on("message", (message: ToSender) => {
    if (message.kind === "wake") sender.wake();
    else if (message.kind === "forget-endpoints") sender.forgetEndpoints();
    else if (message.kind === "stop") {
      void sender
        .stop()
        .then(() => connections.close())
        .catch((error) => logLine(`webhooks: the sender thread did not stop cleanly: ${describeError(error)}`))
        .finally(() => {
          tell({ kind: "stopped" });
          port.close();
        });
    }
  });
  await sender.start(data.listenUrl);
  tell({ kind: "started" });
} catch (error) {
  tell({ kind: "failed", reason: describeError(error) });
  port.close();
}

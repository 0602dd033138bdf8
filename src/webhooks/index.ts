// Webhooks, as the app holds them: the endpoints the owner manages and the sender that delivers
// the outbox (docs/webhooks.md). The outbox rows themselves are written by storage, in the
// transaction of the event that causes them, under the rule of event-types.ts.
import type { PrismaClient } from "../generated/prisma/client.ts";
import type { Config } from "../base/config.ts";
import type { WebhookStore } from "../storage/webhooks/types.ts";
import type { SenderDatabase } from "../storage/webhooks/own-connections.ts";
import { Endpoints } from "./endpoints.ts";
import { Sender } from "./sender.ts";
import { ThreadedSender, type WebhookSender } from "./sender-host.ts";
import { webhookTypeOf } from "./event-types.ts";
import { linkKey } from "./links.ts";
import { A2aPushes } from "./a2a-push.ts";

export { webhookTypeOf };

export class Webhooks {
  readonly endpoints: Endpoints;
  readonly sender: WebhookSender;
  /** A2A push configs and the pushes queued for them: deliveries the same sender sends. */
  readonly pushes: A2aPushes;

  private key: Promise<Buffer> | undefined;

  /** `senderDatabase`: how the sender's thread opens the database; without it, or with CROWS_WEBHOOK_SENDER=server, the sender runs in-process. */
  constructor(
    private readonly deps: {
      config: Config;
      prisma: PrismaClient;
      store: WebhookStore;
      senderDatabase: SenderDatabase | undefined;
      instanceId: string;
      logLine: (line: string) => void;
    },
  ) {
    this.endpoints = new Endpoints(deps.prisma, deps.config.webhooks);
    const senderDeps = {
      store: deps.store,
      config: deps.config.webhooks,
      approvalWindowMs: deps.config.approvalWindowMs,
      instanceId: deps.instanceId,
      linkKey: () => this.linkKey(),
      logLine: deps.logLine,
    };
    this.sender =
      deps.senderDatabase && deps.config.webhooks.senderThread
        ? new ThreadedSender(deps.senderDatabase, senderDeps)
        : new Sender(senderDeps);
    this.endpoints.changed = () => this.sender.forgetEndpoints();
    this.pushes = new A2aPushes(
      deps.prisma,
      deps.config.webhooks,
      () => this.sender.wake(),
      () => this.sender.forgetEndpoints(),
    );
  }

  /** The decide links' key (made once, kept in the database). */
  linkKey(): Promise<Buffer> {
    this.key ??= linkKey(this.deps.prisma).catch((error) => {
      this.key = undefined; // read again next time: the database may have been busy
      throw error;
    });
    return this.key;
  }

  /** Tells the sender of an event this process committed: the flock works; and wakes it when the event fans out. */
  appended(event: { name: string; payload: string }): void {
    this.sender.flockWorked();
    if (webhookTypeOf(event.name, event.payload)) this.sender.wake();
  }
}

// Webhooks, as the app holds them: the endpoints the owner manages and the sender that delivers
// the outbox (docs/webhooks.md). The outbox rows themselves are written by storage, in the
// transaction of the event that causes them, under the rule of event-types.ts.
import type { PrismaClient } from "../generated/prisma/client.ts";
import type { Config } from "../base/config.ts";
import type { WebhookStore } from "../storage/webhook-deliveries.ts";
import { Endpoints } from "./endpoints.ts";
import { Sender } from "./sender.ts";
import { webhookTypeOf } from "./event-types.ts";
import { linkKey } from "./links.ts";

export { webhookTypeOf };

export class Webhooks {
  readonly endpoints: Endpoints;
  readonly sender: Sender;

  private key: Promise<Buffer> | undefined;

  constructor(private readonly deps: { config: Config; prisma: PrismaClient; store: WebhookStore; instanceId: string; logLine: (line: string) => void }) {
    this.endpoints = new Endpoints(deps.prisma, deps.config.webhooks);
    this.sender = new Sender({ prisma: deps.prisma, store: deps.store, config: deps.config.webhooks, approvalWindowMs: deps.config.approvalWindowMs, instanceId: deps.instanceId, linkKey: () => this.linkKey(), logLine: deps.logLine });
    this.endpoints.changed = () => this.sender.forgetEndpoints();
  }

  /** The decide links' key (made once, kept in the database). */
  linkKey(): Promise<Buffer> {
    this.key ??= linkKey(this.deps.prisma).catch((error) => {
      this.key = undefined; // read again next time: the database may have been busy
      throw error;
    });
    return this.key;
  }

  /** Tells the sender of an event this process committed: wakes it when the event fans out. */
  appended(event: { name: string; payload: string }): void {
    if (webhookTypeOf(event.name, event.payload)) this.sender.wake();
  }
}

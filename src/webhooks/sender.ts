// The webhook sender (docs/webhooks.md "Deliveries"): finds due deliveries in the outbox, takes
// each under a short lease (several instances share the table: one sends it, and a dead
// instance's lease lapses so another takes it over), sends it (send.ts), records the attempt and
// what follows: delivered, retried on the schedule (retry.ts), failed, or the endpoint disabled
// (410 Gone, or failing for longer than CROWS_WEBHOOK_DISABLE_AFTER_S).
// Order: for one endpoint and one stream (a list, a nest) a delivery is sent only once every earlier
// one is done, so a receiver sees a list's events in log order. Sends run beside the flock, never
// in its way: the flock only inserted rows; a hanging receiver holds its own sends, up to the timeout.
// Not LeaseKeeper (src/engine/lease.ts): that renews leases on rows held for minutes; a send holds
// its row for at most the timeout, so a lease of timeout + margin, taken per send, needs no renewal.
import type { PrismaClient } from "../generated/prisma/client.ts";
import type { DueDelivery, WebhookStore } from "../storage/webhook-deliveries.ts";
import type { WebhookConfig } from "../base/webhook-config.ts";
import { describeError } from "../base/describe-error.ts";
import { dataOf, type DataContext, type LinkSubject } from "./event-types.ts";
import { signLink } from "./links.ts";
import { nextAttemptAt, retryAfterSeconds } from "./retry.ts";
import { send, sendAgents, type SendResult } from "./send.ts";
import { signatureHeader } from "./signature.ts";

const MAX_IN_FLIGHT = 16;
/** Due deliveries read per sweep: a few times the free slots, so one slow stream does not starve the rest. */
const BATCH = 100;
/** A lease outlasts its send's timeout by this much: time to record the attempt. */
const LEASE_MARGIN_MS = 5_000;

export interface SenderDeps {
  prisma: PrismaClient;
  /** The hot statements (take, send, record), around Prisma. */
  store: WebhookStore;
  config: WebhookConfig;
  approvalWindowMs: number;
  instanceId: string;
  /** The decide links' key. */
  linkKey: () => Promise<Buffer>;
  logLine: (line: string) => void;
  now?: () => number;
}

type EndpointRow = Awaited<ReturnType<PrismaClient["webhookEndpoint"]["findUniqueOrThrow"]>>;
type DeliveryRow = DueDelivery;

export class Sender {
  private readonly now: () => number;
  private readonly inFlight = new Map<string, Promise<void>>();
  /** endpoint + stream of each send in flight: the next of that pair waits for it. */
  private readonly busyPairs = new Set<string>();
  private baseUrl: string | undefined;
  private key: Buffer | undefined;
  /** The sweep under way, if any. */
  private sweeping: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private poller: NodeJS.Timeout | undefined;
  private dueTimer: NodeJS.Timeout | undefined;
  private readonly agents = sendAgents();
  /** Enabled endpoints, read at most once per poll interval: every sweep needs them. */
  private endpointCache: { at: number; rows: Map<string, EndpointRow> } | undefined;
  /** What a delivery's data is built from, kept for the other endpoints the same event goes to. */
  private readonly lookups = new BoundedCache();

  constructor(private readonly deps: SenderDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** Starts sending; decide links point at CROWS_PUBLIC_URL, else `listenUrl`. */
  async start(listenUrl: string): Promise<void> {
    this.baseUrl = this.deps.config.publicUrl ?? listenUrl;
    this.key = await this.deps.linkKey();
    this.poller = setInterval(() => this.wake(), this.deps.config.pollMs);
    this.poller.unref();
    this.wake();
  }

  /** Something may be due now (an append that fans out, a send that finished, a redeliver). */
  wake(): void {
    if (this.stopped || this.baseUrl === undefined) return;
    if (this.sweeping) {
      this.again = true;
      return;
    }
    this.sweeping = this.sweep()
      .catch((error) => {
        if (!this.stopped) this.deps.logLine(`webhooks: looking for due deliveries failed (tried again shortly): ${describeError(error)}`);
      })
      .finally(() => {
        this.sweeping = undefined;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** Stops taking deliveries and waits for the sends in flight (each bounded by the timeout). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.poller);
    clearTimeout(this.dueTimer);
    // A sweep may still start sends, and a send may chain the next of its stream: wait until both are done.
    while (this.sweeping || this.inFlight.size > 0) {
      await this.sweeping;
      await Promise.allSettled([...this.inFlight.values()]);
    }
    this.agents.destroy();
  }

  private async sweep(): Promise<void> {
    const now = new Date(this.now());
    const room = MAX_IN_FLIGHT - this.inFlight.size;
    if (room > 0) {
      const due = await this.deps.store.due(now, this.deps.instanceId, BATCH);
      const candidates = due.filter((d) => !this.inFlight.has(d.id));
      if (candidates.length > 0) await this.takeAndSend(candidates, now);
    }
    await this.armDueTimer();
  }

  /** Takes and starts up to the free slots of `due`: only the oldest pending delivery of each endpoint and stream. */
  private async takeAndSend(due: DeliveryRow[], now: Date): Promise<void> {
    const endpointIds = [...new Set(due.map((d) => d.endpointId))];
    const [endpoints, headOf] = await Promise.all([
      this.enabledEndpoints(),
      // The oldest pending event of each endpoint and stream: only it may be sent now (log order).
      this.deps.store.heads(endpointIds),
    ]);
    for (const delivery of due) {
      if (this.stopped || this.inFlight.size >= MAX_IN_FLIGHT) break;
      const endpoint = endpoints.get(delivery.endpointId);
      const pair = `${delivery.endpointId}\u0000${delivery.stream}`;
      if (!endpoint || this.busyPairs.has(pair) || headOf.get(pair) !== delivery.eventId) continue;
      if (!(await this.claim(delivery.id, now))) continue;
      this.launch(delivery, endpoint, pair);
    }
  }

  /**
   * Sends a claimed delivery; when it is done for good (delivered, failed, dropped), goes straight
   * on to the next delivery of the same endpoint and stream, without a sweep: a stream's events go
   * out one after another at the pace of the receiver.
   */
  private launch(delivery: DeliveryRow, endpoint: EndpointRow, pair: string): void {
    this.busyPairs.add(pair);
    const task = this.deliver(delivery, endpoint)
      .then(async (final) => (final && !this.stopped ? this.nextOf(delivery) : undefined))
      .catch((error) => {
        this.deps.logLine(`webhooks: delivery ${delivery.id} could not be recorded (its lease lapses and it is sent again): ${describeError(error)}`);
        return undefined;
      })
      .then((next) => {
        this.inFlight.delete(delivery.id);
        this.busyPairs.delete(pair);
        if (next && !this.stopped) this.launch(next, endpoint, pair);
        else this.wake();
      });
    this.inFlight.set(delivery.id, task);
  }

  /** The pair's next pending delivery, claimed, when it is due now; else undefined (a sweep finds it later). */
  private async nextOf(done: DeliveryRow): Promise<DeliveryRow | undefined> {
    const now = new Date(this.now());
    const next = await this.deps.store.next(done.endpointId, done.stream, done.eventId);
    if (!next || next.nextAttemptAt > now || this.inFlight.has(next.id)) return undefined;
    return (await this.claim(next.id, now)) ? next : undefined;
  }

  /** Drops the copy of the endpoints: this process changed one (its next send reads them afresh). */
  forgetEndpoints(): void {
    this.endpointCache = undefined;
  }

  /**
   * The enabled endpoints, as of at most one poll interval ago (another instance's change is seen
   * within it; this one's disabling an endpoint drops the copy at once).
   */
  private async enabledEndpoints(): Promise<Map<string, EndpointRow>> {
    const cached = this.endpointCache;
    if (cached && this.now() - cached.at < Math.min(this.deps.config.pollMs, 1000)) return cached.rows;
    const rows = new Map((await this.deps.prisma.webhookEndpoint.findMany({ where: { disabledAt: null } })).map((e) => [e.id, e]));
    this.endpointCache = { at: this.now(), rows };
    return rows;
  }

  /** Wakes at the next retry that falls due (the poll would find it too, later). */
  private async armDueTimer(): Promise<void> {
    const next = await this.deps.store.nextDueAt(new Date(this.now()));
    clearTimeout(this.dueTimer);
    if (!next || this.stopped) return;
    const delay = Math.max(0, next.getTime() - this.now()) + 5;
    if (delay > this.deps.config.pollMs) return;
    this.dueTimer = setTimeout(() => this.wake(), delay);
    this.dueTimer.unref();
  }

  /**
   * Leases a delivery for one send: the lease outlasts the send's timeout. It may take a delivery
   * unleased, with a lapsed lease, or leased by this instance's own name but not in flight here (a
   * restarted server takes its own back at once; the sweep skips those in flight).
   */
  private claim(id: string, now: Date): Promise<boolean> {
    return this.deps.store.claim(id, this.deps.instanceId, now, new Date(now.getTime() + this.deps.config.timeoutMs + LEASE_MARGIN_MS));
  }

  /** Sends one delivery and records it; true when it is done for good (not waiting for a retry). */
  private async deliver(delivery: DeliveryRow, endpoint: EndpointRow): Promise<boolean> {
    const event = await this.lookups.get(`event:${delivery.eventId}`, () => this.deps.store.event(delivery.eventId));
    const data = event ? await dataOf(delivery.type, event.payload, this.context(endpoint.id)) : null;
    if (!event || !data) {
      // Nothing to send after all (an owner reply that resolved no ask): done, with no attempt.
      await this.deps.prisma.webhookDelivery.updateMany({ where: { id: delivery.id, ownerId: this.deps.instanceId }, data: { state: "dropped", ownerId: null, leaseUntil: null } });
      return true;
    }
    const body = JSON.stringify({ type: delivery.type, timestamp: event.ts.toISOString(), data });
    const nowMs = this.now();
    const secrets = [endpoint.secret];
    if (endpoint.previousSecret && endpoint.previousSecretUntil && endpoint.previousSecretUntil.getTime() > nowMs) secrets.push(endpoint.previousSecret);
    const timestamp = Math.floor(nowMs / 1000);
    const headers = { "webhook-id": delivery.id, "webhook-timestamp": String(timestamp), "webhook-signature": signatureHeader(secrets, delivery.id, timestamp, body) };
    const result = await send(new URL(endpoint.url), headers, body, { timeoutMs: this.deps.config.timeoutMs, allowPrivate: this.deps.config.allowPrivate, secrets: [endpoint.secret, endpoint.previousSecret ?? ""], agents: this.agents });
    return this.record(delivery, endpoint, result);
  }

  /** The attempt, and what it leads to, in one transaction; nothing moves if the lease was lost meanwhile. */
  private async record(delivery: DeliveryRow, endpoint: EndpointRow, result: SendResult): Promise<boolean> {
    const nowMs = this.now();
    const at = new Date(nowMs);
    const ok = result.status !== null && result.status >= 200 && result.status < 300;
    const gone = result.status === 410;
    const attempts = delivery.attempts + 1;
    const next = ok || gone ? null : nextAttemptAt(this.deps.config.retryScheduleS, attempts, nowMs, retryAfterSeconds(result.retryAfter, nowMs));
    const failingSince = ok ? null : (endpoint.failingSince ?? at);
    const tooLong = !ok && nowMs - failingSince!.getTime() >= this.deps.config.disableAfterMs;
    const disabledReason = gone
      ? `The receiver answered 410 Gone at ${at.toISOString()}: it asked for no more deliveries.`
      : tooLong
        ? `Failing since ${failingSince!.toISOString()} with no success (last: ${result.error ?? "no answer"}); disabled after ${Math.round(this.deps.config.disableAfterMs / 1000)} s.`
        : null;
    await this.deps.store.record({
      deliveryId: delivery.id,
      owner: this.deps.instanceId,
      at,
      status: result.status,
      durationMs: result.durationMs,
      error: result.error ?? null,
      state: ok ? "delivered" : next ? "pending" : "failed",
      attempts,
      nextAttemptAt: next,
      endpointId: endpoint.id,
      failingSince,
      disabledReason,
    });
    if (disabledReason) {
      this.endpointCache = undefined;
      this.deps.logLine(`webhooks: endpoint ${endpoint.id} disabled: ${disabledReason}`);
    }
    return next === null && !disabledReason;
  }

  /** What `dataOf` looks up, for deliveries to one endpoint (its decide links name it). */
  private context(endpointId: string): DataContext {
    const prisma = this.deps.prisma;
    return {
      approval: (itemId, target) =>
        this.lookups.get(`approval:${itemId}|${target}`, async () => {
          const row = await prisma.approval.findUnique({ where: { itemId_target: { itemId, target } }, include: { item: { select: { text: true } } } });
          return row ? { text: row.item.text, deadline: row.deadline, pending: row.status === "pending" } : null;
        }),
      askResolvedBy: (askId, replyId) =>
        this.lookups.get(`ask:${askId}|${replyId}`, async () => {
          const ask = await prisma.message.findUnique({ where: { id: askId } });
          return ask && ask.kind === "ask_owner" && ask.approvedBy === replyId ? { phrase: ask.approvalPhrase } : null;
        }),
      askDeadline: (ts) => new Date((Number.isNaN(Date.parse(ts)) ? this.now() : Date.parse(ts)) + this.deps.approvalWindowMs),
      links: (subject: LinkSubject, deadline: Date) => {
        const link = (action: "approve" | "reject") => this.baseUrl! + signLink(this.key!, { subject, action, webhookId: endpointId, expiresMs: deadline.getTime() });
        return subject.kind === "approval" ? { approve_url: link("approve"), reject_url: link("reject") } : { approve_url: link("approve") };
      },
    };
  }
}

/**
 * The last few hundred lookups a delivery's data needs (an event's payload, an approval's text and
 * deadline, whether a reply resolved an ask): none of them changes once the event is logged, and
 * an event going to ten endpoints is read once, not ten times.
 */
class BoundedCache {
  private readonly values = new Map<string, Promise<unknown>>();
  constructor(private readonly size = 500) {}

  get<T>(key: string, load: () => Promise<T>): Promise<T> {
    const found = this.values.get(key);
    if (found) return found as Promise<T>;
    const loading = load();
    loading.catch(() => this.values.delete(key)); // a failed read is not kept; the next send reads again
    this.values.set(key, loading);
    if (this.values.size > this.size) this.values.delete(this.values.keys().next().value!);
    return loading;
  }
}

// Over 400 lines: the sending loop, its leases and its retries are one state machine over the
// outbox; the retry policy and signing already live apart (retry.ts, signature.ts).
// The webhook sender (docs/webhooks.md "Deliveries"): finds due deliveries in the outbox, takes
// each under a short lease (several instances share the table: one sends it, and a dead
// instance's lease lapses so another takes it over), sends it (send.ts), records the attempt and
// what follows: delivered, retried on the schedule (retry.ts), failed, or the endpoint disabled
// (410 Gone, or failing for longer than CROWS_WEBHOOK_DISABLE_AFTER_MS).
// Order: for one endpoint and one stream (a list, a nest) a delivery is sent only once every earlier
// one is done, so a receiver sees a list's events in log order. Sends run beside the flock, never
// in its way: the flock only inserted rows; a hanging receiver holds its own sends, up to the timeout.
// Nor do sends take the flock's CPU while it works: they wait until it rests (flock-work.ts), for
// at most CROWS_WEBHOOK_YIELD_MS of its work without a rest (yieldToFlock). A flock waiting on an
// owner or a model rests, so what the owner must answer goes out at once.
// Not LeaseKeeper (src/engine/lease.ts): that renews leases on rows held for minutes; a send holds
// its row for at most the timeout, so a lease of timeout + margin, taken per send, needs no renewal.
import type { AttemptRecord, DueDelivery, SenderEndpoint, WebhookStore } from "../storage/webhooks/types.ts";
import { Batcher } from "../base/util/batch.ts";
import type { WebhookConfig } from "../base/webhook-config.ts";
import { describeError } from "../base/describe-error.ts";
import { dataOf } from "./event-types.ts";
import { BoundedCache, dataContext } from "./context.ts";
import { nextAttemptAt, retryAfterSeconds } from "./retry.ts";
import { send, sendAgents, type SendResult } from "./send.ts";
import { signatureHeader } from "./signature.ts";
import { FLOCK_QUIET_MS, FlockWork } from "./flock-work.ts";
import { formatBody, isWebhookFormat, type FormattedBody as Built } from "./formats.ts";

const MAX_IN_FLIGHT = 16;
/** Due deliveries read per sweep: a few times the free slots, so one slow stream does not starve the rest. */
const BATCH = 100;
/** The least time between two sweeps. */
const SWEEP_GAP_MS = 10;
/** Outbox events turned into deliveries per transaction. */
const EXPAND_BATCH = 500;
/** A lease outlasts its send's timeout by this much: time to record the attempt. */
const LEASE_MARGIN_MS = 5_000;

export interface SenderDeps {
  /** Every statement the sender runs (take, send, record, and what a delivery's data looks up). */
  store: WebhookStore;
  config: WebhookConfig;
  approvalWindowMs: number;
  instanceId: string;
  /** The decide links' key. */
  linkKey: () => Promise<Buffer>;
  logLine: (line: string) => void;
  now?: () => number;
  /** A sweep is about to read what is due. */
  onSweep?: () => void;
  /** The last sweep ended with none queued after it. */
  onIdle?: () => void;
  /** The flock's work as the server notes it (the thread's, in shared memory); else the sender's own, told by flockWorked(). */
  flockWork?: FlockWork;
}

type EndpointRow = SenderEndpoint;
type DeliveryRow = DueDelivery;

export class Sender {
  /** As the server sees it: the in-process sender runs in the server's thread (sender-host.ts runs one in a thread of its own). */
  readonly runsIn = "server-thread" as const;
  private readonly now: () => number;
  /** The chain running for each endpoint and stream (launch): one send at a time each. */
  private readonly chains = new Map<string, Promise<void>>();
  /** Deliveries a chain sent or is sending whose attempt may not be written yet: no sweep takes them. */
  private readonly busyIds = new Set<string>();
  /** endpoint + stream of each send in flight: the next of that pair waits for it. */
  private readonly busyPairs = new Set<string>();
  private baseUrl: string | undefined;
  private key: Buffer | undefined;
  /** The sweep under way, if any. */
  private sweeping: Promise<void> | undefined;
  private again = false;
  private lastSweepAt = Number.NEGATIVE_INFINITY;
  private gapTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  private poller: NodeJS.Timeout | undefined;
  private dueTimer: NodeJS.Timeout | undefined;
  private readonly agents = sendAgents();
  /** Enabled endpoints, read at most once per poll interval: every sweep needs them. */
  private endpointCache: { at: number; rows: Map<string, EndpointRow> } | undefined;
  /** What a delivery's data is built from, kept for the other endpoints the same event goes to. */
  private readonly lookups = new BoundedCache();
  private readonly flockWork: FlockWork;

  constructor(private readonly deps: SenderDeps) {
    this.now = deps.now ?? Date.now;
    this.flockWork = deps.flockWork ?? new FlockWork();
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
    // Sweeps come at most every SWEEP_GAP_MS: under a burst each finished send asks for one, and a
    // sweep reads every due delivery; a stream's next delivery goes out without one (launch).
    const wait = this.lastSweepAt + SWEEP_GAP_MS - this.now();
    if (wait > 0) {
      this.gapTimer ??= setTimeout(() => {
        this.gapTimer = undefined;
        this.wake();
      }, wait);
      return;
    }
    this.lastSweepAt = this.now();
    this.deps.onSweep?.();
    this.sweeping = this.sweep()
      .catch((error) => {
        if (!this.stopped)
          this.deps.logLine(
            `webhooks: looking for due deliveries failed (tried again shortly): ${describeError(error)}`,
          );
      })
      .finally(() => {
        this.sweeping = undefined;
        if (this.again) {
          this.again = false;
          this.wake();
        } else this.deps.onIdle?.();
      });
  }

  /** The flock appended an event now (the in-process sender's signal; the thread's is shared memory). */
  flockWorked(): void {
    this.flockWork.worked(this.now());
  }

  /**
   * Waits while the flock works: a burst of its work (a list on a fast model) finishes before the
   * sends it caused take a core from it. Bounded: once the flock has worked config.yieldMs without
   * a rest, sends go while it works on, so a flock that never rests delays them by that much once
   * per stretch, not for good.
   */
  private async yieldToFlock(): Promise<void> {
    const bound = this.deps.config.yieldMs;
    if (bound <= 0) return;
    for (;;) {
      const { restingMs, workingMs } = this.flockWork.seen(this.now());
      if (restingMs >= FLOCK_QUIET_MS || workingMs >= bound || this.stopped) return;
      await new Promise((resolve) =>
        setTimeout(resolve, Math.max(1, Math.min(FLOCK_QUIET_MS - restingMs, bound - workingMs))),
      );
    }
  }

  /** Stops taking deliveries and waits for the sends in flight (each bounded by the timeout). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.poller);
    clearTimeout(this.dueTimer);
    clearTimeout(this.gapTimer);
    // A sweep may still start sends, and a send may chain the next of its stream: wait until both are done.
    while (this.sweeping || this.chains.size > 0) {
      await this.sweeping;
      await Promise.allSettled([...this.chains.values()]);
    }
    this.agents.destroy();
  }

  private async sweep(): Promise<void> {
    await this.yieldToFlock();
    // The outbox's events become deliveries first (a few batches at most: the flock only adds to it).
    while ((await this.deps.store.expand(EXPAND_BATCH)) === EXPAND_BATCH && !this.stopped);
    const now = new Date(this.now());
    const room = MAX_IN_FLIGHT - this.chains.size;
    if (room > 0) {
      const due = await this.deps.store.due(now, this.deps.instanceId, BATCH);
      const candidates = due.filter((d) => !this.busyIds.has(d.id));
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
    const picked: Array<{ delivery: DeliveryRow; endpoint: EndpointRow; pair: string }> = [];
    for (const delivery of due) {
      if (this.chains.size + picked.length >= MAX_IN_FLIGHT) break;
      const endpoint = endpoints.get(delivery.endpointId);
      const pair = `${delivery.endpointId}\u0000${delivery.stream}`;
      if (!endpoint || this.busyPairs.has(pair) || headOf.get(pair) !== delivery.eventId) continue;
      this.busyPairs.add(pair); // held while the claim is out, so nothing else starts this pair
      picked.push({ delivery, endpoint, pair });
    }
    if (picked.length === 0) return;
    // One transaction for the whole sweep's claims.
    const taken = await this.deps.store
      .claim(
        picked.map((p) => p.delivery.id),
        this.deps.instanceId,
        now,
        this.leaseEnd(now),
      )
      .catch((error: unknown) => {
        for (const p of picked) this.busyPairs.delete(p.pair);
        throw error;
      });
    for (const { delivery, endpoint, pair } of picked) {
      if (taken.has(delivery.id) && !this.stopped) this.launch(delivery, endpoint, pair);
      else this.busyPairs.delete(pair);
    }
  }

  /**
   * Runs a stream's chain for one endpoint: sends a claimed delivery and, when it is done for good
   * (delivered, failed, dropped), goes straight on to the next delivery of the same endpoint and
   * stream, without a sweep: a stream's events go out one after another at the pace of the
   * receiver. The next is sent once the receiver has answered the one before; the attempts are
   * written meanwhile, several in one transaction, and the chain lets its stream go (to a sweep,
   * or another instance) only once they are written.
   */
  private launch(first: DeliveryRow, endpoint: EndpointRow, pair: string): void {
    this.busyPairs.add(pair);
    const chain = this.runChain(first, endpoint).finally(() => {
      this.chains.delete(pair);
      this.busyPairs.delete(pair);
      this.wake();
    });
    this.chains.set(pair, chain);
  }

  private async runChain(first: DeliveryRow, endpoint: EndpointRow): Promise<void> {
    const writes: Array<Promise<void>> = [];
    const held: string[] = [];
    let delivery: DeliveryRow | undefined = first;
    try {
      while (delivery) {
        if (delivery !== first) await this.yieldToFlock();
        const current: DeliveryRow = delivery;
        held.push(current.id);
        this.busyIds.add(current.id);
        const { final, written } = await this.deliver(current, endpoint);
        writes.push(
          written.catch((error) => {
            this.deps.logLine(
              `webhooks: delivery ${current.id} could not be recorded (its lease lapses and it is sent again): ${describeError(error)}`,
            );
          }),
        );
        delivery = final && !this.stopped ? await this.nextOf(current) : undefined;
      }
    } catch (error) {
      this.deps.logLine(
        `webhooks: a delivery of ${endpoint.id} stopped short (its lease lapses and it is sent again): ${describeError(error)}`,
      );
    } finally {
      await Promise.all(writes);
      for (const id of held) this.busyIds.delete(id);
    }
  }

  /** The pair's next pending delivery, claimed, when it is due now; else undefined (a sweep finds it later). */
  private async nextOf(done: DeliveryRow): Promise<DeliveryRow | undefined> {
    const now = new Date(this.now());
    const next = await this.deps.store.next(done.endpointId, done.stream, done.eventId);
    if (!next || next.nextAttemptAt > now || this.busyIds.has(next.id)) return undefined;
    return (await this.claim(next.id)) ? next : undefined;
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
    const rows = new Map((await this.deps.store.endpoints()).map((e) => [e.id, e]));
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
   * restarted server takes its own back at once; the sweep skips those in flight). Claims made in
   * one turn (several streams' next deliveries) go in one transaction.
   */
  private claim(id: string): Promise<boolean> {
    return this.claims.add(id);
  }

  private readonly claims = new Batcher<string, boolean>(async (ids) => {
    const now = new Date(this.now());
    const taken = await this.deps.store.claim(ids, this.deps.instanceId, now, this.leaseEnd(now));
    return ids.map((id) => taken.has(id));
  });

  private leaseEnd(now: Date): Date {
    return new Date(now.getTime() + this.deps.config.timeoutMs + LEASE_MARGIN_MS);
  }

  /** Attempts finished in one turn are recorded in one transaction. */
  private readonly records = new Batcher<AttemptRecord, void>(async (attempts) => {
    await this.deps.store.record(attempts);
    return attempts.map(() => undefined);
  });

  /** Sends one delivery and records it. */
  private async deliver(delivery: DeliveryRow, endpoint: EndpointRow): Promise<Outcome> {
    const built = endpoint.push ? await this.pushOf(delivery) : await this.webhookOf(delivery, endpoint);
    if (!built) {
      // Nothing to send after all (an owner reply that resolved no ask; a push gone): done, with no attempt.
      return { final: true, written: this.deps.store.drop(delivery.id, this.deps.instanceId) };
    }
    const { body, contentType } = built;
    const nowMs = this.now();
    const secrets = [endpoint.secret];
    if (endpoint.previousSecret && endpoint.previousSecretUntil && endpoint.previousSecretUntil.getTime() > nowMs)
      secrets.push(endpoint.previousSecret);
    const timestamp = Math.floor(nowMs / 1000);
    const headers: Record<string, string> = {
      ...built.headers,
      "webhook-id": delivery.id,
      "webhook-timestamp": String(timestamp),
      "webhook-signature": signatureHeader(secrets, delivery.id, timestamp, body),
    };
    if (endpoint.push?.authorization) headers.authorization = endpoint.push.authorization;
    const result = await send(new URL(endpoint.url), headers, body, {
      timeoutMs: this.deps.config.timeoutMs,
      allowPrivate: this.deps.config.allowPrivate,
      secrets: [endpoint.secret, endpoint.previousSecret ?? "", ...(endpoint.push?.redact ?? [])],
      agents: this.agents,
      contentType,
    });
    return this.record(delivery, endpoint, result);
  }

  /** A webhook's body: the log event's data, as its type fills it (event-types.ts); null when there is nothing to send. */
  private async webhookOf(delivery: DeliveryRow, endpoint: EndpointRow): Promise<Built | null> {
    const event = await this.lookups.get(`event:${delivery.eventId}`, () => this.deps.store.event(delivery.eventId));
    const context = dataContext({
      store: this.deps.store,
      lookups: this.lookups,
      approvalWindowMs: this.deps.approvalWindowMs,
      now: this.now,
      baseUrl: this.baseUrl!,
      key: this.key!,
      endpointId: endpoint.id,
    });
    const data = event ? await dataOf(delivery.type, event.payload, context) : null;
    if (!event || !data) return null;
    // The endpoint's format shapes the body (formats.ts); the signature is over the body as sent.
    return formatBody(
      isWebhookFormat(endpoint.format) ? endpoint.format : "standard",
      { type: delivery.type, timestamp: event.ts.toISOString(), data },
      this.now(),
    );
  }

  /** An A2A push's body: stored as the protocol writes it (src/webhooks/a2a-push.ts). */
  private async pushOf(delivery: DeliveryRow): Promise<Built | null> {
    const push = await this.deps.store.pushBody(delivery.eventId);
    return push ? { body: push.body, contentType: "application/a2a+json", headers: {} } : null;
  }

  /**
   * The attempt, and what it leads to, written with the other attempts of its turn in one
   * transaction; nothing moves if the lease was lost meanwhile.
   */
  private record(delivery: DeliveryRow, endpoint: EndpointRow, result: SendResult): Outcome {
    const nowMs = this.now();
    const at = new Date(nowMs);
    const ok = result.status !== null && result.status >= 200 && result.status < 300;
    const gone = result.status === 410;
    const attempts = delivery.attempts + 1;
    const next =
      ok || gone
        ? null
        : nextAttemptAt(this.deps.config.retryScheduleS, attempts, nowMs, retryAfterSeconds(result.retryAfter, nowMs));
    const failingSince = ok ? null : (endpoint.failingSince ?? at);
    const tooLong = !ok && nowMs - failingSince!.getTime() >= this.deps.config.disableAfterMs;
    // An A2A push config is no endpoint: nothing to disable (a 410 ends that push, not the config).
    const disabledReason = endpoint.push
      ? null
      : gone
        ? `The receiver answered 410 Gone at ${at.toISOString()}: it asked for no more deliveries.`
        : tooLong
          ? `Failing since ${failingSince!.toISOString()} with no success (last: ${result.error ?? "no answer"}); disabled after ${Math.round(this.deps.config.disableAfterMs / 1000)} s.`
          : null;
    const written = this.records.add({
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
    return { final: next === null && !disabledReason, written };
  }
}

/** What a send comes to: whether the delivery is done for good (not waiting for a retry), and its attempt's write. */
interface Outcome {
  final: boolean;
  written: Promise<void>;
}

// What the webhook sender reads and writes, as one interface with a store per database (sqlite.ts,
// postgres.ts), around Prisma as the log's statements are (docs/architecture.md "Storage and
// migrations" says why: a Prisma query costs about a millisecond of CPU, and a delivery is several).
// The sender runs in its own thread on its own connections (own-connections.ts), so nothing here
// may need Prisma.

/**
 * A delivery's state: pending (due, or waiting for its next attempt), delivered, failed (the
 * retries ran out), or dropped (nothing to send after all: an owner reply that resolved no ask).
 */
export const DELIVERY_STATES = ["pending", "delivered", "failed", "dropped"] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

export interface DueDelivery {
  id: string;
  endpointId: string;
  eventId: number;
  stream: string;
  type: string;
  attempts: number;
  nextAttemptAt: Date;
}

/** One attempt and what it leads to, written in one transaction. */
export interface AttemptRecord {
  deliveryId: string;
  owner: string;
  at: Date;
  status: number | null;
  durationMs: number;
  error: string | null;
  state: Exclude<DeliveryState, "dropped">;
  attempts: number;
  /** The next attempt (state pending). */
  nextAttemptAt: Date | null;
  endpointId: string;
  /** The endpoint's failingSince after this attempt (null: it succeeded). */
  failingSince: Date | null;
  disabledReason: string | null;
}

/** An enabled endpoint, as the sender signs and sends with it. */
export interface SenderEndpoint {
  id: string;
  url: string;
  /** The body's shape: standard, slack, discord or ntfy (src/webhooks/formats.ts). */
  format: string;
  secret: string;
  previousSecret: string | null;
  previousSecretUntil: Date | null;
  failingSince: Date | null;
  /**
   * An A2A push config rather than an endpoint (src/webhooks/a2a-push.ts): its deliveries' bodies
   * are stored (pushBody), it adds its Authorization header, and `redact` are its secrets as given.
   */
  push?: { authorization: string | null; redact: string[] };
}

/** An A2A push config as either database returns it: what the sender needs to send to it. */
export interface StoredPushConfig {
  id: string;
  url: string;
  token: string;
  authScheme: string;
  authCredentials: string;
}

/** A push config as the sender sends to it: signed with its token as the key (whsec_ + base64 of the token). */
export const pushEndpointOf = (r: StoredPushConfig): SenderEndpoint => ({
  id: r.id,
  url: r.url,
  format: "standard", // unused: a push's body is stored as the protocol writes it
  secret: `whsec_${Buffer.from(r.token, "utf8").toString("base64")}`,
  previousSecret: null,
  previousSecretUntil: null,
  failingSince: null,
  push: {
    authorization: r.authScheme ? `${r.authScheme} ${r.authCredentials}`.trim() : null,
    redact: [r.token, r.authCredentials].filter((s) => s !== ""),
  },
});

/** An endpoint row as either database returns it, moments as text. */
export type StoredEndpoint = Omit<SenderEndpoint, "previousSecretUntil" | "failingSince" | "push"> & {
  previousSecretUntil: string | null;
  failingSince: string | null;
};

const dateOrNull = (text: string | null): Date | null => (text === null ? null : new Date(text));
export const endpointOf = (r: StoredEndpoint): SenderEndpoint => ({
  ...r,
  previousSecretUntil: dateOrNull(r.previousSecretUntil),
  failingSince: dateOrNull(r.failingSince),
});

/** What an approval.requested delivery adds from the approval row. */
export interface ApprovalFacts {
  text: string;
  deadline: Date;
  pending: boolean;
}

/** What an ask.resolved delivery needs of the ask a reply refers to. */
export interface AskFacts {
  kind: string;
  approvedBy: string;
  approvalPhrase: string;
}

export interface WebhookStore {
  /** Turns up to `limit` of the outbox's oldest events into deliveries (../webhook-outbox.ts); how many it took. */
  expand(limit: number): Promise<number>;
  /** The endpoints not disabled, and the A2A push configs. */
  endpoints(): Promise<SenderEndpoint[]>;
  /** A stored A2A push's body and moment (src/webhooks/a2a-push.ts). */
  pushBody(id: number): Promise<{ body: string; ts: Date } | undefined>;
  /** The approval of one item and target, with its item's text. */
  approval(itemId: string, target: string): Promise<ApprovalFacts | undefined>;
  /** A nest message, as an ask. */
  ask(messageId: string): Promise<AskFacts | undefined>;
  /** Ends a delivery with nothing to send (state dropped), if `owner` still holds it. */
  drop(id: string, owner: string): Promise<void>;
  /** Pending deliveries due by `now` that `owner` may take (unleased, lapsed, or its own), oldest event first. */
  due(now: Date, owner: string, limit: number): Promise<DueDelivery[]>;
  /** The oldest pending event id of each endpoint and stream of `endpointIds` ("<endpoint>\0<stream>" -> id). */
  heads(endpointIds: string[]): Promise<Map<string, number>>;
  /** Leases a pending delivery to `owner` until `until` if it may take it; true when it did. */
  /** Leases each pending delivery of `ids` to `owner` until `until` that it may take, in one transaction; the ids it took. */
  claim(ids: readonly string[], owner: string, now: Date, until: Date): Promise<Set<string>>;
  /** The pending delivery after `afterEventId` of one endpoint and stream, if any. */
  next(endpointId: string, stream: string, afterEventId: number): Promise<DueDelivery | undefined>;
  /** When the next pending delivery not due by `now` falls due (null: none waits). */
  nextDueAt(now: Date): Promise<Date | null>;
  /** A stored event's payload and moment. */
  event(id: number): Promise<{ payload: string; ts: Date } | undefined>;
  /** Attempts and what each leads to, in one transaction. */
  record(attempts: readonly AttemptRecord[]): Promise<void>;
}

/** A due delivery as either database returns it: ids and counts may come back as text, moments as text. */
export type DueRow = Omit<DueDelivery, "nextAttemptAt"> & { nextAttemptAt: string | Date };
export const rowOf = (r: DueRow): DueDelivery => ({
  ...r,
  eventId: Number(r.eventId),
  attempts: Number(r.attempts),
  nextAttemptAt: new Date(r.nextAttemptAt),
});

/**
 * What a batch of attempts leaves on each endpoint: the last attempt's failingSince, and the first
 * reason to disable it. One update per endpoint, in id order, so two instances recording batches
 * at once lock the endpoint rows in the same order (PostgreSQL would otherwise find a deadlock).
 */
export function endpointOutcomes(
  attempts: readonly AttemptRecord[],
): Array<{ endpointId: string; failingSince: Date | null; disabledAt: Date | null; disabledReason: string | null }> {
  const byEndpoint = new Map<
    string,
    { endpointId: string; failingSince: Date | null; disabledAt: Date | null; disabledReason: string | null }
  >();
  for (const a of attempts) {
    const seen = byEndpoint.get(a.endpointId);
    const disabled = seen?.disabledReason
      ? { disabledAt: seen.disabledAt, disabledReason: seen.disabledReason }
      : { disabledAt: a.disabledReason ? a.at : null, disabledReason: a.disabledReason };
    byEndpoint.set(a.endpointId, { endpointId: a.endpointId, failingSince: a.failingSince, ...disabled });
  }
  return [...byEndpoint.values()].sort((x, y) =>
    x.endpointId < y.endpointId ? -1 : x.endpointId > y.endpointId ? 1 : 0,
  );
}

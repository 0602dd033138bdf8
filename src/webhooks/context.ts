// What a delivery's data is filled from (dataOf in event-types.ts): the approval an
// approval.requested is about, the ask a reply resolves, the decide links signed for the endpoint
// the delivery goes out on. Read through the sender's store, and kept: none of it changes once the
// event is logged, and an event going to ten endpoints is looked up once, not ten times.
import type { WebhookStore } from "../storage/webhooks/types.ts";
import type { DataContext, LinkSubject } from "./event-types.ts";
import { signLink } from "./links.ts";

export function dataContext(deps: {
  store: WebhookStore;
  lookups: BoundedCache;
  approvalWindowMs: number;
  now: () => number;
  baseUrl: string;
  key: Buffer;
  endpointId: string;
}): DataContext {
  const { store, lookups } = deps;
  return {
    // Keyed by the announcement too: a rework opens the same approval again with a new deadline.
    approval: (itemId, target, announcedAt = "") =>
      lookups.get(`approval:${itemId}|${target}|${announcedAt}`, async () => {
        const row = await store.approval(itemId, target);
        return row ? { text: row.text, deadline: row.deadline, pending: row.pending } : null;
      }),
    askResolvedBy: (askId, replyId) =>
      lookups.get(`ask:${askId}|${replyId}`, async () => {
        const ask = await store.ask(askId);
        return ask && ask.kind === "ask_owner" && ask.approvedBy === replyId ? { phrase: ask.approvalPhrase } : null;
      }),
    askDeadline: (ts) => new Date((Number.isNaN(Date.parse(ts)) ? deps.now() : Date.parse(ts)) + deps.approvalWindowMs),
    links: (subject: LinkSubject, deadline: Date) => {
      const link = (action: "approve" | "reject") =>
        deps.baseUrl +
        signLink(deps.key, { subject, action, webhookId: deps.endpointId, expiresMs: deadline.getTime() });
      return subject.kind === "ask"
        ? { approve_url: link("approve") }
        : { approve_url: link("approve"), reject_url: link("reject") };
    },
  };
}

/** The last few hundred lookups, by key; a failed read is not kept (the next send reads again). */
export class BoundedCache {
  private readonly values = new Map<string, Promise<unknown>>();
  constructor(private readonly size = 500) {}

  get<T>(key: string, load: () => Promise<T>): Promise<T> {
    const found = this.values.get(key);
    if (found) return found as Promise<T>;
    const loading = load();
    loading.catch(() => this.values.delete(key));
    this.values.set(key, loading);
    if (this.values.size > this.size) this.values.delete(this.values.keys().next().value!);
    return loading;
  }
}

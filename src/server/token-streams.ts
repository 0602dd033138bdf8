// Open responses of named tokens, so a revoked or expired token's streams end within a heartbeat:
// a token.revoked event (from this instance or, over Redis, any other) cuts its streams at once;
// every heartbeat the rows of the tokens with something open are read again, which also catches an
// expiry and a revocation whose signal was lost.
import type http from "node:http";
import type { Bus, BusEvent } from "../log/bus.ts";
import { topicOf } from "../log/bus.ts";
import { TOKEN_REVOKED, TOKENS_STREAM, type TokenStore } from "../access/token-store.ts";

export class TokenStreams {
  private readonly open = new Map<string, Set<http.ServerResponse>>();
  private readonly timer: NodeJS.Timeout;
  private readonly onAppend = (event: BusEvent) => {
    if (event.detail.seq === 0) return void this.sweep(); // a nudge: something may have been missed
    if (event.detail.name !== TOKEN_REVOKED) return;
    const id = (JSON.parse(event.detail.payload) as { token_id?: unknown }).token_id;
    if (typeof id !== "string") return;
    this.store.forget(id);
    this.cut(id);
  };

  constructor(
    private readonly store: TokenStore,
    private readonly bus: Bus,
    heartbeatMs: number,
  ) {
    bus.addEventListener(topicOf(TOKENS_STREAM), this.onAppend);
    this.timer = setInterval(() => void this.sweep(), heartbeatMs);
    this.timer.unref();
  }

  /** Remembers a response of `tokenId` until it closes. */
  track(tokenId: string, res: http.ServerResponse): void {
    let set = this.open.get(tokenId);
    if (!set) this.open.set(tokenId, (set = new Set()));
    set.add(res);
    res.once("close", () => {
      set.delete(res);
      if (set.size === 0 && this.open.get(tokenId) === set) this.open.delete(tokenId);
    });
  }

  /** Ends every open response of a token (its socket: a stream has no way to answer "revoked" mid-way). */
  cut(tokenId: string): void {
    for (const res of [...(this.open.get(tokenId) ?? [])]) res.destroy();
  }

  async sweep(): Promise<void> {
    for (const id of [...this.open.keys()]) {
      const valid = await this.store.stillValid(id).catch(() => true); // a failed read is no revocation
      if (!valid) this.cut(id);
    }
  }

  close(): void {
    clearInterval(this.timer);
    this.bus.removeEventListener(topicOf(TOKENS_STREAM), this.onAppend);
  }
}

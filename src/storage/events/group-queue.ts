// Group commit: the appends that arrive in one turn of the event loop are handed to the store's
// flush together, to share one transaction (docs/architecture.md "Storage and migrations").
import type { EventRow, NewEvent } from "./types.ts";

export interface Pending {
  stream: string;
  events: NewEvent[];
  resolve: (rows: EventRow[]) => void;
  reject: (error: unknown) => void;
}

/** Collects appends made in one turn of the event loop and hands them to `flush` together. */
export class GroupQueue {
  private pending: Pending[] = [];
  private scheduled = false;
  constructor(private readonly flush: (batch: Pending[]) => Promise<void>) {}

  add(stream: string, events: NewEvent[]): Promise<EventRow[]> {
    return new Promise((resolve, reject) => {
      this.pending.push({ stream, events, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          const batch = this.pending;
          this.pending = [];
          this.flush(batch).catch((error) =>
            batch.forEach((p) => {
              p.reject(error);
            }),
          );
        });
      }
    });
  }
}

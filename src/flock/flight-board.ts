// What the owner may watch of the flights in the air, beside the contract's stream: which flights
// wait on the provider and why, and each flight's text as the provider streams it. A view held in
// this process's memory, never stored: the contract's events and the stored answer are the record
// (docs/rules.md, "Provider weather"). With several instances each shows the flights it runs.
export interface WaitingFlight {
  flightId: string;
  listId: string;
  itemId: string;
  crow: string;
  /** The last trouble, safe to show ("model provider answered HTTP 503"). */
  reason: string;
  /** When the next try goes out (ms since the epoch). */
  retryAt: number;
  /** When the patience ends and the item fails (ms since the epoch). */
  deadline: number;
  /** When this flight began to wait. */
  since: number;
}

export interface FlightText {
  flightId: string;
  listId: string;
  itemId: string;
  crow: string;
  delta: string;
  /** The first piece of a try: a retried flight's text starts again here. */
  first: boolean;
}

/** What a change on the board says: a flight began (or went on) waiting, or its wait ended. */
export const BOARD_CHANGE_KINDS = ["waiting", "resumed"] as const;
export type BoardChangeKind = (typeof BOARD_CHANGE_KINDS)[number];

export type BoardChange =
  | { kind: Extract<BoardChangeKind, "waiting">; flight: WaitingFlight }
  | { kind: Extract<BoardChangeKind, "resumed">; flightId: string; listId: string; itemId: string; crow: string };

type Listener<T> = (value: T) => void;

export class FlightBoard {
  private readonly waits = new Map<string, WaitingFlight>();
  private readonly changeListeners = new Set<Listener<BoardChange>>();
  private readonly textListeners = new Set<Listener<FlightText>>();
  private counter = 0;

  nextFlightId(itemId: string): string {
    return `${itemId}#${++this.counter}`;
  }

  /** Flights waiting on the provider now, optionally of one list, oldest wait first. */
  waiting(listId?: string): WaitingFlight[] {
    return [...this.waits.values()]
      .filter((w) => listId === undefined || w.listId === listId)
      .sort((a, b) => a.since - b.since);
  }

  wait(flight: Omit<WaitingFlight, "since">): void {
    const since = this.waits.get(flight.flightId)?.since ?? Date.now();
    const entry = { ...flight, since };
    const before = this.waits.get(flight.flightId);
    this.waits.set(flight.flightId, entry);
    // The gate repeats its notice while a circuit stays open; only a change is news.
    if (
      before &&
      before.retryAt === entry.retryAt &&
      before.reason === entry.reason &&
      before.deadline === entry.deadline
    )
      return;
    this.emit(this.changeListeners, { kind: "waiting", flight: entry });
  }

  resume(flightId: string): void {
    const was = this.waits.get(flightId);
    if (!was) return;
    this.waits.delete(flightId);
    this.emit(this.changeListeners, {
      kind: "resumed",
      flightId,
      listId: was.listId,
      itemId: was.itemId,
      crow: was.crow,
    });
  }

  text(piece: FlightText): void {
    this.emit(this.textListeners, piece);
  }

  onChange(listener: Listener<BoardChange>): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  onText(listener: Listener<FlightText>): () => void {
    this.textListeners.add(listener);
    return () => this.textListeners.delete(listener);
  }

  private emit<T>(listeners: Set<Listener<T>>, value: T): void {
    for (const listener of listeners) {
      try {
        listener(value);
      } catch {
        // a watcher's trouble is never the flight's
      }
    }
  }
}

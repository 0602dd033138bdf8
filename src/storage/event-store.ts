// The event store's old entry point: the store lives in src/storage/events/, the gate in gate.ts.
// The pairing of a store onto its Prisma client stays here until openDatabase returns one handle.
import type { PrismaClient } from "../generated/prisma/client.ts";
import type { EventStore } from "./events/types.ts";

export type { EventRow, EventStore, NewEvent, RenderedPage, RowTemplate, Tx } from "./events/types.ts";
export { Gate } from "./gate.ts";
export { SqliteEventStore } from "./events/sqlite.ts";
export { PgEventStore } from "./events/postgres.ts";

const stores = new WeakMap<object, EventStore>();

/** The store opened with this client (src/storage/db.ts pairs them). */
export function eventStoreOf(prisma: PrismaClient): EventStore {
  const store = stores.get(prisma);
  if (!store) throw new Error("This PrismaClient was not opened by openDatabase: it has no event store.");
  return store;
}

export function pairEventStore(prisma: PrismaClient, store: EventStore): void {
  stores.set(prisma, store);
}

// Flights in the air, beside the contract's stream (src/flock/flight-board.ts): which wait on the
// provider and why (a query and a subscription), and each flight's text as the provider streams
// it (a subscription). A view of this instance's flights, never stored: the events and the stored
// answer stay the record, exactly as they were.
import { builder } from "./builder.ts";
import { TodoList } from "./lists.ts";
import { FlightWaitChangeKind } from "./enums.ts";
import type {
  BoardChange,
  BoardChangeKind,
  FlightText as FlightTextValue,
  WaitingFlight as WaitingFlightValue,
} from "../src/flock/flight-board.ts";

export const WaitingFlight = builder.objectRef<WaitingFlightValue>("WaitingFlight").implement({
  description: "A flight waiting on its model provider (a rate limit, an outage, an open circuit).",
  fields: (t) => ({
    flightId: t.exposeString("flightId", { description: "This flight, for matching its resumption and its text." }),
    listId: t.exposeString("listId"),
    itemId: t.exposeString("itemId"),
    crow: t.exposeString("crow"),
    reason: t.exposeString("reason", { description: 'The last trouble, e.g. "model provider answered HTTP 429".' }),
    retryAt: t.field({
      type: "DateTime",
      description: "When the next try goes out.",
      resolve: (w) => new Date(w.retryAt),
    }),
    retryInSeconds: t.int({
      description: "Whole seconds until the next try, at the moment of reading.",
      resolve: (w) => Math.max(0, Math.ceil((w.retryAt - Date.now()) / 1000)),
    }),
    deadline: t.field({
      type: "DateTime",
      description: "When the patience ends and the item fails (CROWS_MODEL_PATIENCE_MS from its first wait).",
      resolve: (w) => new Date(w.deadline),
    }),
    since: t.field({
      type: "DateTime",
      description: "When this flight began to wait.",
      resolve: (w) => new Date(w.since),
    }),
  }),
});

interface WaitChange {
  kind: BoardChangeKind;
  flightId: string;
  listId: string;
  itemId: string;
  crow: string;
  wait: WaitingFlightValue | null;
}

const FlightWaitChange = builder.objectRef<WaitChange>("FlightWaitChange").implement({
  description: "A flight began (or went on) waiting on the provider, or its wait ended.",
  fields: (t) => ({
    kind: t.field({ type: FlightWaitChangeKind, resolve: (c) => c.kind }),
    flightId: t.exposeString("flightId"),
    listId: t.exposeString("listId"),
    itemId: t.exposeString("itemId"),
    crow: t.exposeString("crow"),
    wait: t.field({
      type: WaitingFlight,
      nullable: true,
      description: "The wait, when kind is waiting.",
      resolve: (c) => c.wait,
    }),
  }),
});

const FlightText = builder.objectRef<FlightTextValue>("FlightText").implement({
  description: "A piece of a flight's answer as the provider streams it. The answer itself arrives in item.answered.",
  fields: (t) => ({
    flightId: t.exposeString("flightId"),
    listId: t.exposeString("listId"),
    itemId: t.exposeString("itemId"),
    crow: t.exposeString("crow"),
    delta: t.exposeString("delta"),
    first: t.exposeBoolean("first", {
      description: "The first piece of a try: a flight asked again after trouble starts its text afresh.",
    }),
  }),
});

builder.queryFields((t) => ({
  waitingFlights: t.field({
    authScopes: { read: true },
    type: [WaitingFlight],
    description: "Flights waiting on the model provider now, of one list or all; oldest wait first.",
    args: { listId: t.arg.id() },
    resolve: (_root, args, ctx) => ctx.app.board.waiting(args.listId ? String(args.listId) : undefined),
  }),
}));

builder.objectField(TodoList, "waitingFlights", (t) =>
  t.field({
    type: [WaitingFlight],
    description: "This list's flights waiting on the model provider now.",
    resolve: (list, _args, ctx) => ctx.app.board.waiting(list.id),
  }),
);

/** A live feed from a board listener: values queued until read, the listener dropped when the client goes. */
async function* feed<T>(subscribe: (push: (value: T) => void) => () => void, first: T[] = []): AsyncGenerator<T> {
  const queue: T[] = [...first];
  let wake: (() => void) | undefined;
  const unsubscribe = subscribe((value) => {
    queue.push(value);
    wake?.();
  });
  try {
    for (;;) {
      while (queue.length > 0) yield queue.shift()!;
      await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
    }
  } finally {
    unsubscribe();
  }
}

const asChange = (change: BoardChange): WaitChange =>
  change.kind === "waiting"
    ? {
        kind: "waiting",
        flightId: change.flight.flightId,
        listId: change.flight.listId,
        itemId: change.flight.itemId,
        crow: change.flight.crow,
        wait: change.flight,
      }
    : {
        kind: "resumed",
        flightId: change.flightId,
        listId: change.listId,
        itemId: change.itemId,
        crow: change.crow,
        wait: null,
      };

builder.subscriptionFields((t) => ({
  flightWaits: t.field({
    authScopes: { read: true },
    type: FlightWaitChange,
    description: "A list's flights waiting on the provider: those waiting now first, then each change as it happens.",
    args: { listId: t.arg.id({ required: true }) },
    subscribe: (_root, args, ctx) => {
      const listId = String(args.listId);
      const now = ctx.app.board.waiting(listId).map((flight) => asChange({ kind: "waiting", flight }));
      return feed<WaitChange>(
        (push) =>
          ctx.app.board.onChange((change) => {
            const mapped = asChange(change);
            if (mapped.listId === listId) push(mapped);
          }),
        now,
      );
    },
    resolve: (change) => change,
  }),
  flightText: t.field({
    authScopes: { read: true },
    type: FlightText,
    description:
      "A list's flights' answers as the provider streams them, piece by piece. Nothing of it is stored: a client that joins late sees only what comes after.",
    args: { listId: t.arg.id({ required: true }) },
    subscribe: (_root, args, ctx) => {
      const listId = String(args.listId);
      return feed<FlightTextValue>((push) =>
        ctx.app.board.onText((piece) => {
          if (piece.listId === listId) push(piece);
        }),
      );
    },
    resolve: (piece) => piece,
  }),
}));

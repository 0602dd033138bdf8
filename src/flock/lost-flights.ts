// The new owner tells the story (docs/rules.md "One owner's story"): a flight the list's last owner
// left in the air (its instance frozen, paused, killed or restarted) never lands from there, since
// the fence refuses the old owner's writes. So the run that claims the list next lands each one as
// `ok: false`, tokens 0, with an error saying its instance was lost, before any item flies again:
// every crow.flying on a stream has exactly one crow.landed, after it.
import type { EventDraft, EventLog, StateTx } from "../log/event-log.ts";
import { listStream } from "../base/streams.ts";
import { listEventPayload } from "./events.ts";

/** The error a lost flight lands with. */
export const LOST_FLIGHT_ERROR = "instance lost: the instance flying it stopped or stalled past its lease";

const PAGE = 1000;

/** The flights of `listId` with no landing yet, oldest first: one entry per open crow.flying. */
export async function openFlights(log: EventLog, listId: string): Promise<Array<{ itemId: string; crow: string }>> {
  // Landings pair with flights by item and crow; a crow may fly several subtasks of one item at
  // once, so each key counts its open flights.
  const open = new Map<string, Array<{ itemId: string; crow: string }>>();
  const stream = listStream(listId);
  for (let after = 0; ; ) {
    const page = await log.read(stream, after, PAGE);
    for (const event of page) {
      if (event.name !== "crow.flying" && event.name !== "crow.landed") continue;
      const { item_id: itemId, crow } = JSON.parse(event.payload) as { item_id: string; crow: string };
      const key = `${itemId}\u0000${crow}`;
      const flights = open.get(key) ?? [];
      if (event.name === "crow.flying") flights.push({ itemId, crow });
      else flights.shift();
      open.set(key, flights);
    }
    if (page.length < PAGE) break;
    after = page[page.length - 1]!.seq;
  }
  return [...open.values()].flat();
}

/**
 * Lands every open flight of the list as lost, in one write of the new owner's (`write` is fenced
 * by its epoch, so a later owner refuses it in turn).
 */
export async function landLostFlights(
  log: EventLog,
  listId: string,
  write: (build: (tx: StateTx) => Promise<EventDraft[]>) => Promise<void>,
): Promise<number> {
  const lost = await openFlights(log, listId);
  if (lost.length === 0) return 0;
  await write(async () =>
    lost.map(({ itemId, crow }) => ({
      name: "crow.landed",
      payload: listEventPayload<"crow.landed">(listId, {
        item_id: itemId,
        crow,
        ok: false,
        tokens: 0,
        error: LOST_FLIGHT_ERROR,
      }),
    })),
  );
  return lost.length;
}

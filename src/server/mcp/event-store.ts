// Resumption for one MCP session (Streamable HTTP: a client whose stream dropped reconnects with
// Last-Event-ID and gets what it missed). Bounded and in memory, per session: the newest
// MAX_EVENTS messages the session was sent. Why not crows's own log: these are the session's
// JSON-RPC messages (progress, results), not flock events, and a session lives on one instance
// and ends with it; what a list did stays readable from the log through read_list.
import type { EventStore, EventId, StreamId } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/** How many messages a session keeps for replay; older ones are dropped (a resume past them gets the rest). */
export const MAX_EVENTS = 2_000;

export class BoundedEventStore implements EventStore {
  private readonly events: Array<{ id: number; streamId: StreamId; message: JSONRPCMessage }> = [];
  private next = 1;

  async storeEvent(streamId: StreamId, message: JSONRPCMessage): Promise<EventId> {
    const id = this.next++;
    this.events.push({ id, streamId, message });
    if (this.events.length > MAX_EVENTS) this.events.splice(0, this.events.length - MAX_EVENTS);
    return `${streamId}~${id}`;
  }

  async getStreamIdForEventId(eventId: EventId): Promise<StreamId | undefined> {
    return parse(eventId)?.streamId;
  }

  async replayEventsAfter(
    lastEventId: EventId,
    { send }: { send: (eventId: EventId, message: JSONRPCMessage) => Promise<void> },
  ): Promise<StreamId> {
    const last = parse(lastEventId);
    if (!last) return "";
    for (const event of this.events)
      if (event.streamId === last.streamId && event.id > last.id)
        await send(`${event.streamId}~${event.id}`, event.message);
    return last.streamId;
  }
}

function parse(eventId: EventId): { streamId: StreamId; id: number } | undefined {
  const at = eventId.lastIndexOf("~");
  const id = Number(eventId.slice(at + 1));
  if (at < 1 || !Number.isSafeInteger(id)) return undefined;
  return { streamId: eventId.slice(0, at), id };
}

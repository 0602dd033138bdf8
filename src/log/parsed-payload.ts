// A stored event's payload, parsed once per event however many readers ask: every live follower of
// a stream is handed the same event object from the bus, so GraphQL subscribers share one parse.
import type { AppendedEvent } from "./bus.ts";

const parsed = new WeakMap<AppendedEvent, unknown>();

export function parsedPayload<T = unknown>(event: AppendedEvent): T {
  if (parsed.has(event)) return parsed.get(event) as T;
  const value = JSON.parse(event.payload) as unknown;
  parsed.set(event, value);
  return value as T;
}

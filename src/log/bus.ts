// Live fan-out of appended events. One process: a plain EventTarget. Several instances: Yoga's
// Redis event target (Redis pub/sub), so every instance's streams hear every instance's appends.
// The bus only says "this was appended"; the durable log stays the source of truth, and a reader
// that sees a gap re-reads the log (src/log/event-log.ts).
import type { TypedEventTarget } from "@graphql-yoga/typed-event-target";

export interface AppendedEvent {
  /** The log's global id: commit order across every stream. */
  id: number;
  stream: string;
  seq: number;
  name: string;
  payload: string;
  ts: string;
}

export type BusEvent = CustomEvent<AppendedEvent>;
export type Bus = TypedEventTarget<BusEvent> & { close(): Promise<void> };

export function topicOf(stream: string): string {
  return `crows:${stream}`;
}

/** Every append is also announced by event name, for followers across streams (trust changes). */
export function nameTopicOf(name: string): string {
  return `crows-name:${name}`;
}

export function createLocalBus(): Bus {
  const target = new EventTarget() as unknown as Bus;
  target.close = async () => {};
  return target;
}

export async function createRedisBus(url: string): Promise<Bus> {
  const [{ Redis }, { createRedisEventTarget }] = await Promise.all([
    import("ioredis"),
    import("@graphql-yoga/redis-event-target"),
  ]);
  const publishClient = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 2 });
  const subscribeClient = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 2 });
  await Promise.all([publishClient.connect(), subscribeClient.connect()]);
  const target = createRedisEventTarget<BusEvent>({ publishClient, subscribeClient }) as Bus;
  target.close = async () => {
    publishClient.disconnect();
    subscribeClient.disconnect();
  };
  return target;
}

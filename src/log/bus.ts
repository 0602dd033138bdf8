// Live fan-out of appended events. One process: a plain EventTarget. Several instances: Yoga's
// Redis event target (Redis pub/sub), so every instance's streams hear every instance's appends.
// The bus only says "this was appended"; the durable log stays the source of truth, and a reader
// that sees a gap re-reads the log (src/log/event-log.ts).
import { setMaxListeners } from "node:events";
import type { TypedEventTarget } from "@graphql-yoga/typed-event-target";
import type { EventRow } from "../storage/events/types.ts";
import { StartError } from "../storage/start-error.ts";

/** A committed event as the bus carries it: the stored row itself. */
export type AppendedEvent = EventRow;

export type BusEvent = CustomEvent<AppendedEvent>;
export type Bus = TypedEventTarget<BusEvent> & {
  close(): Promise<void>;
  /** Whether a networked bus can reach its server now (readiness); absent for the local bus. */
  isConnected?(): boolean;
};

export function topicOf(stream: string): string {
  return `crows:${stream}`;
}

/** Every append is also announced by event name, for followers across streams (trust changes). */
export function nameTopicOf(name: string): string {
  return `crows-name:${name}`;
}

export function createLocalBus(): Bus {
  const eventTarget = new EventTarget();
  // One listener per open stream and waiting approval: many on a busy list is normal, not a leak.
  setMaxListeners(0, eventTarget);
  const target = eventTarget as unknown as Bus;
  target.close = async () => {};
  return target;
}

/**
 * The detail of a nudge: not an event but "something may have been missed, re-read the log".
 * Every listener re-reads on any signal (follow, approvals), so a nudge needs no special case.
 */
export const NUDGE = { id: 0, stream: "", seq: 0, name: "", payload: "", ts: "" } as AppendedEvent;

/** How long the first connection to Redis may take, answer included. */
const REDIS_CONNECT_TIMEOUT_MS = 5_000;

export async function createRedisBus(url: string, logLine: (line: string) => void = () => {}): Promise<Bus> {
  const [{ Redis }, { createRedisEventTarget }] = await Promise.all([
    import("ioredis"),
    import("@graphql-yoga/redis-event-target"),
  ]);
  const publishClient = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 2 });
  const subscribeClient = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 2 });
  // ioredis reconnects by itself; an 'error' with no listener would crash the process instead.
  let lastError = "";
  const onError = (error: Error) => {
    if (error.message !== lastError) logLine(`bus: redis: ${error.message}`);
    lastError = error.message;
  };
  publishClient.on("error", onError);
  subscribeClient.on("error", onError);
  let timer: NodeJS.Timeout | undefined;
  const silent = new Error(`no answer within ${REDIS_CONNECT_TIMEOUT_MS / 1000} s`);
  try {
    // A server that accepts and never answers (not Redis, or a stuck one) would hold the start forever.
    const silence = new Promise<never>(
      (_, reject) => (timer = setTimeout(() => reject(silent), REDIS_CONNECT_TIMEOUT_MS)),
    );
    await Promise.race([Promise.all([publishClient.connect(), subscribeClient.connect()]), silence]);
  } catch (error) {
    // Else ioredis goes on reconnecting in the background and holds the process open.
    publishClient.disconnect();
    subscribeClient.disconnect();
    // ioredis's own rejection says only "Connection is closed."; the cause is the last error it saw.
    const cause =
      error === silent ? silent.message : lastError || (error instanceof Error ? error.message : String(error));
    throw new StartError(
      "redis",
      `Redis at ${redisAddress(url)} could not be reached (${cause.slice(0, 160)}); check REDIS_URL`,
    );
  } finally {
    clearTimeout(timer);
  }

  // Pub/sub delivers only to confirmed subscriptions and drops what is published while a
  // connection is down. SUBSCRIBE is asynchronous (a follower attached just before an append could
  // miss it) and ioredis re-subscribes after a reconnect through the same method: so whenever Redis
  // confirms a subscription, nudge that topic's listeners to re-read the durable log.
  const listeners = new Map<string, Set<EventListenerOrEventListenerObject>>();
  const nudge = (topics: unknown[]) => {
    for (const topic of topics.flat()) {
      if (typeof topic !== "string") continue;
      for (const listener of [...(listeners.get(topic) ?? [])]) {
        const event = new CustomEvent(topic, { detail: NUDGE });
        if (typeof listener === "function") listener(event);
        else listener.handleEvent(event);
      }
    }
  };
  const subscribe = subscribeClient.subscribe.bind(subscribeClient);
  subscribeClient.subscribe = ((...topics: Parameters<typeof subscribe>) => {
    const confirmed = subscribe(...topics);
    confirmed.then(
      () => nudge(topics),
      (e: Error) => onError(e),
    );
    return confirmed;
  }) as typeof subscribe;
  // A SUBSCRIBE sent while Redis is down fails, and ioredis re-subscribes after a reconnect only to
  // channels it had confirmed: a follower attached during an outage would be stranded. So on every
  // reconnection subscribe again to every topic followed here (a no-op where still subscribed);
  // the confirmation nudges those followers to re-read the log.
  // (Registered after the first connect, so every "ready" seen here is a reconnection.)
  subscribeClient.on("ready", () => {
    const topics = [...listeners.keys()];
    // A refusal means Redis went down again: the next "ready" subscribes again, so drop it.
    if (topics.length > 0) void subscribeClient.subscribe(...topics).catch(() => {});
  });
  // The event target ignores these promises; a rejection (Redis down) must not go unhandled.
  const unsubscribe = subscribeClient.unsubscribe.bind(subscribeClient);
  subscribeClient.unsubscribe = ((...topics: Parameters<typeof unsubscribe>) => {
    const done = unsubscribe(...topics);
    done.catch(() => {}); // Redis down: a topic left subscribed only delivers what nobody listens to
    return done;
  }) as typeof unsubscribe;
  const publish = publishClient.publish.bind(publishClient);
  publishClient.publish = ((...args: Parameters<typeof publish>) => {
    const sent = publish(...args);
    sent.catch(onError); // followers elsewhere catch up on their next signal or resubscribe nudge
    return sent;
  }) as typeof publish;

  const target = createRedisEventTarget<BusEvent>({ publishClient, subscribeClient });
  const bus: Bus = {
    addEventListener(topic, listener) {
      if (listener) {
        const set = listeners.get(topic) ?? new Set();
        set.add(listener as EventListenerOrEventListenerObject);
        listeners.set(topic, set);
      }
      target.addEventListener(topic, listener);
    },
    removeEventListener(topic, listener) {
      const set = listeners.get(topic);
      if (set && listener) {
        set.delete(listener as EventListenerOrEventListenerObject);
        if (set.size === 0) listeners.delete(topic);
      }
      target.removeEventListener(topic, listener);
    },
    dispatchEvent: (event) => target.dispatchEvent(event),
    isConnected: () => publishClient.status === "ready" && subscribeClient.status === "ready",
    close: async () => {
      publishClient.disconnect();
      subscribeClient.disconnect();
    },
  };
  return bus;
}

/** Where a Redis URL points, without its password. */
function redisAddress(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || "6379"}`;
  } catch {
    return "the REDIS_URL given";
  }
}

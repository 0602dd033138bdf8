// The SSE core, transport-agnostic: it turns a stream of the durable log into `[body, init]`, where
// init is the status and headers and body starts writing onto a sink (the node:http adapter is
// src/http/sse/node-writer.ts). The wire rules are in SSE-PROTOCOL.md.
//
// Fan-out: one channel per stream, whatever the number of subscribers. It listens to the
// stream's one shared follower (src/log/stream-tap.ts), builds each frame once, as a Buffer, and
// writes it to every subscriber that has caught up. A subscriber whose write() returns false is
// behind: it leaves the live set and reads the log from its own cursor, one page per write, until
// it has caught up again; so nothing is buffered for a slow client beyond one page in its socket.
// One timer per heartbeat interval (src/base/util/shared-interval.ts) beats for every live subscriber.
import type { EventLog, RowTemplate, StoredEvent } from "../src/log/event-log.ts";
import type { StreamTap } from "../src/log/stream-tap.ts";
import type { SseBody, SseInit, SseSink } from "../src/http/sse/types.ts";
import { joinSharedInterval } from "../src/base/util/shared-interval.ts";

export type { SseBody, SseInit, SseSink };

export interface SseOptions {
  log: EventLog;
  stream: string;
  afterSeq: number;
  heartbeatMs: number;
  signal: AbortSignal;
  /** What goes before the seq in a frame's `id:` (a nest's msg ids are `<nest>-<n>`); none: the seq alone. */
  idPrefix?: string;
  onError?: (error: unknown) => void;
}

export function frame(id: string, name: string, data: string): string {
  return `id: ${id}\nevent: ${name}\ndata: ${data}\n\n`;
}

/**
 * `frame` as a template the log lays a replay page out with (EventLog.readRendered), so a page is
 * built in the database as one block of bytes. Must write exactly what `frame` writes:
 * test/replay-bytes.test.ts pins a replay's bytes against `frame`.
 */
export function frameTemplate(idPrefix: string): RowTemplate {
  return { beforeSeq: `id: ${idPrefix}`, beforeName: "\nevent: ", beforePayload: "\ndata: ", after: "\n\n" };
}

export const HEARTBEAT = ": heartbeat\n\n";
const HEARTBEAT_BYTES = Buffer.from(HEARTBEAT);

/** How long a client waits before it reconnects after a dropped stream (SSE-PROTOCOL.md). */
export const RETRY_MS = 2000;

/** The first thing a stream sends: the reconnection delay, as its own field block (no event). */
export const OPENING = `retry: ${RETRY_MS}\n\n`;
const OPENING_BYTES = Buffer.from(OPENING);

const PAGE = 1000;

export function eventStream(options: SseOptions): [SseBody, SseInit] {
  const init: SseInit = {
    status: 200,
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    },
  };
  return [{ start: (sink) => subscribe(options, sink) }, init];
}

class Subscriber {
  stopped = false;
  constructor(
    readonly sink: SseSink,
    public cursor: number,
    readonly stop: () => void,
  ) {}
}

class Channel {
  readonly members = new Set<Subscriber>();
  readonly live = new Set<Subscriber>();
  readonly tap: StreamTap;
  /** Each member's place on its heartbeat's shared timer (left when it leaves). */
  private readonly heartbeatOf = new Map<Subscriber, () => void>();
  private readonly template: RowTemplate;

  constructor(
    readonly log: EventLog,
    readonly stream: string,
    private readonly idPrefix: string,
    private readonly onError: (error: unknown) => void,
  ) {
    this.template = frameTemplate(idPrefix);
    this.tap = log.openTap(stream, onError);
    this.tap.add(this.onEvent);
  }

  render(event: StoredEvent): string {
    return frame(this.idPrefix + event.seq, event.name, event.payload);
  }

  private readonly onEvent = (event: StoredEvent) => {
    if (this.live.size === 0) return;
    const bytes = Buffer.from(this.render(event)); // built once for every live subscriber
    for (const subscriber of this.live) {
      if (event.seq <= subscriber.cursor) continue; // resumed past it (Last-Event-ID ahead)
      subscriber.cursor = event.seq;
      if (!subscriber.sink.write(bytes)) this.fallBehind(subscriber);
    }
  };

  join(subscriber: Subscriber, heartbeatMs: number): void {
    this.members.add(subscriber);
    // Only a live subscriber beats: one that is behind is reading pages, and bytes reach it anyway.
    const beat = () => {
      if (this.live.has(subscriber) && !subscriber.sink.write(HEARTBEAT_BYTES)) this.fallBehind(subscriber);
    };
    this.heartbeatOf.set(subscriber, joinSharedInterval(heartbeatMs, beat));
    void this.catchUp(subscriber);
  }

  leave(subscriber: Subscriber): void {
    this.members.delete(subscriber);
    this.live.delete(subscriber);
    this.heartbeatOf.get(subscriber)?.();
    this.heartbeatOf.delete(subscriber);
  }

  /** The last subscriber left: let go of the stream's follower. */
  dispose(): void {
    this.tap.delete(this.onEvent);
    this.log.releaseTap(this.tap);
  }

  private fallBehind(subscriber: Subscriber): void {
    if (!this.live.delete(subscriber)) return;
    void subscriber.sink.drained().then(() => this.catchUp(subscriber));
  }

  /** Reads the log from the subscriber's cursor until it is level with the stream, then goes live. */
  private async catchUp(subscriber: Subscriber): Promise<void> {
    try {
      await this.tap.ready;
      while (!subscriber.stopped && !subscriber.sink.closed) {
        // Checked and joined in one turn: the tap hands on events synchronously, so none slips by.
        if (this.tap.cursor !== undefined && subscriber.cursor >= this.tap.cursor) {
          this.live.add(subscriber);
          return;
        }
        // A page in one write, its frames laid out by the database as one Buffer.
        const page = await this.log.readRendered(this.stream, subscriber.cursor, PAGE, this.template);
        if (subscriber.stopped || subscriber.sink.closed) return;
        if (page.count === 0) {
          await new Promise((resolve) => setTimeout(resolve, 5)); // announced, not yet visible here
          continue;
        }
        subscriber.cursor = page.lastSeq;
        if (!subscriber.sink.write(page.bytes)) await subscriber.sink.drained();
        // A socket that takes a page at once drains on the next tick, so without this a long replay
        // would hold the event loop (every other client) until its last page was written.
        await new Promise((resolve) => setImmediate(resolve));
      }
    } catch (error) {
      this.onError(error);
      subscriber.stop();
      subscriber.sink.end();
    }
  }
}

const channelsOf = new WeakMap<EventLog, Map<string, Channel>>();

function subscribe(options: SseOptions, sink: SseSink): () => void {
  const { log, stream, afterSeq, heartbeatMs, signal } = options;
  const onError = options.onError ?? (() => {});
  let channels = channelsOf.get(log);
  if (!channels) channelsOf.set(log, (channels = new Map()));
  let channel = channels.get(stream);
  if (!channel) {
    channel = new Channel(log, stream, options.idPrefix ?? "", onError);
    channels.set(stream, channel);
  }
  const joined = channel;
  let cancelClose = () => {};
  const stop = () => {
    if (subscriber.stopped) return;
    subscriber.stopped = true;
    cancelClose();
    signal.removeEventListener("abort", stop);
    joined.leave(subscriber);
    if (joined.members.size === 0) {
      joined.dispose();
      if (channels!.get(stream) === joined) channels!.delete(stream);
    }
  };
  const subscriber = new Subscriber(sink, afterSeq, stop);
  if (signal.aborted || log.isClosed) {
    sink.end();
    return () => {};
  }
  signal.addEventListener("abort", stop, { once: true });
  // Shutdown ends the response; the adapter then sees the close and stops.
  cancelClose = log.onClose(() => {
    stop();
    sink.end();
  });
  sink.write(OPENING_BYTES);
  joined.join(subscriber, heartbeatMs);
  return stop;
}

// Several subscriptions over one SSE connection: a POST to /graphql/stream (Accept:
// text/event-stream, a JSON body) whose body is {"operations": {"<id>": {query, variables?,
// operationName?}, ...}} instead of one {query}. A browser keeps at most six HTTP/1.1 connections
// per host: a console page following four streams on four connections left a second tab none. Each
// operation runs exactly as a distinct graphql-sse subscription would (openSubscription: the same
// envelop, scopes, limits, projector and resume cursors); its frames are relabelled with its id:
//
//   event: next      data: {"id":"<id>","payload":<the result graphql-sse would send>}
//   event: complete  data: {"id":"<id>"}
//
// An operation refused before it streams (a bad cursor, a scope, a parse or validation error) sends
// one `next` carrying {"errors": [...]} and its `complete`; the others go on. The connection takes
// one stream slot (src/server/stream-caps.ts) and ends when every operation has completed. To change
// the set, a client opens a new connection (with each operation's resume cursor) and closes the old.
import type { SseBody, SseInit, SseSink } from "../../http/sse/types.ts";
import { type EnvelopSource, openSubscription, type SubscriptionParams } from "./subscriptions.ts";

/** More than this many operations in one connection is a 400: a page needs a handful. */
export const MAX_MULTIPLEXED = 10;

const HEADERS = {
  connection: "keep-alive",
  "cache-control": "no-cache",
  "content-encoding": "none",
  "content-type": "text/event-stream; charset=utf-8",
};
const PING = Buffer.from(":\n\n");
const ID_SHAPE = /^[A-Za-z0-9_.:-]{1,64}$/;

export class MultiplexRefusal extends Error {}

/**
 * The operations of a multiplexed request, or undefined when the body is not one (then the single
 * subscription path answers it). Throws MultiplexRefusal for a body that names operations badly.
 */
export function multiplexedOperations(
  method: string | undefined,
  headers: Record<string, string | string[] | undefined>,
  body: Buffer | undefined,
): Map<string, SubscriptionParams> | undefined {
  if (method !== "POST" || !body || headers.accept !== "text/event-stream") return undefined;
  if ((String(headers["content-type"] ?? "").split(";")[0] ?? "").trim().toLowerCase() !== "application/json")
    return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString("utf8"));
  } catch {
    return undefined;
  }
  if (parsed === null || typeof parsed !== "object" || !("operations" in parsed)) return undefined;
  const { operations, ...others } = parsed as { operations: unknown };
  if (Object.keys(others).length > 0)
    throw new MultiplexRefusal(`A multiplexed stream's body holds only "operations".`);
  if (operations === null || typeof operations !== "object" || Array.isArray(operations))
    throw new MultiplexRefusal(`"operations" must be an object of id to {query, variables?, operationName?}.`);
  const entries = Object.entries(operations as Record<string, unknown>);
  if (entries.length === 0 || entries.length > MAX_MULTIPLEXED)
    throw new MultiplexRefusal(`"operations" must hold 1 to ${MAX_MULTIPLEXED} operations.`);
  const result = new Map<string, SubscriptionParams>();
  for (const [id, op] of entries) {
    if (!ID_SHAPE.test(id))
      throw new MultiplexRefusal(`An operation id is 1-64 letters, digits or "_.:-"; "${id.slice(0, 64)}" is not.`);
    const { query, variables, operationName, ...rest } = (op ?? {}) as Record<string, unknown>;
    const isObject = (v: unknown) => v === undefined || v === null || (typeof v === "object" && !Array.isArray(v));
    if (
      typeof query !== "string" ||
      Object.keys(rest).length > 0 ||
      !isObject(variables) ||
      (operationName != null && typeof operationName !== "string")
    )
      throw new MultiplexRefusal(`Operation "${id}" must be {query, variables?, operationName?}.`);
    result.set(id, {
      query,
      variables: variables as SubscriptionParams["variables"],
      operationName: operationName as string | null | undefined,
    });
  }
  return result;
}

/** Opens every operation and writes their frames, each labelled with its id, onto one stream. */
export async function openMultiplexed<C extends object>(
  yoga: EnvelopSource,
  operations: Map<string, SubscriptionParams>,
  serverContext: C,
  onError: (error: unknown) => void,
): Promise<[SseBody, SseInit]> {
  const opened = await Promise.all(
    [...operations].map(async ([id, params]) => {
      try {
        return [id, await openSubscription(yoga, "graphql-sse", params, serverContext, onError)] as const;
      } catch (error) {
        onError(error);
        return [id, undefined] as const;
      }
    }),
  );
  const body: SseBody = {
    start(sink) {
      let open = opened.length;
      const stops: Array<() => void> = [];
      const done = () => {
        open -= 1;
        if (open === 0 && !sink.closed) sink.end();
      };
      sink.write(PING);
      for (const [id, subscription] of opened) {
        if (!subscription) {
          refuse(sink, id, "Not a subscription this stream serves: a parse or validation error, or a query.");
          done();
          continue;
        }
        const [inner, init] = subscription;
        stops.push(inner.start(labelled(sink, id, init.status === 200 ? "sse" : "json", done)));
      }
      return () => {
        for (const stop of stops) stop();
      };
    },
  };
  return [body, { status: 200, headers: { ...HEADERS } }];
}

function refuse(sink: SseSink, id: string, message: string): void {
  const payload = JSON.stringify({ errors: [{ message }] });
  sink.write(Buffer.from(`event: next\ndata: {"id":${JSON.stringify(id)},"payload":${payload}}\n\n${complete(id)}`));
}

const complete = (id: string) => `event: complete\ndata: {"id":${JSON.stringify(id)}}\n\n`;

/**
 * A sink for one operation: its SSE frames (whole frames per write, as subscriptions.ts writes
 * them) relabelled with its id; a refusal's JSON body becomes one `next` and a `complete`. Its end
 * is the operation's, not the connection's.
 */
function labelled(outer: SseSink, id: string, kind: "sse" | "json", done: () => void): SseSink {
  let ended = false;
  let json = "";
  const label = JSON.stringify(id);
  return {
    write(chunk) {
      if (kind === "json") {
        json += chunk.toString("utf8");
        return true;
      }
      let text = "";
      for (const frame of chunk.toString("utf8").split("\n\n")) {
        if (frame === "") continue;
        if (frame.startsWith(":"))
          text += ":\n\n"; // each operation's heartbeat keeps the connection's
        else if (frame.startsWith("event: next\ndata: "))
          text += `event: next\ndata: {"id":${label},"payload":${frame.slice("event: next\ndata: ".length)}}\n\n`;
        else if (frame.startsWith("event: complete")) text += complete(id);
      }
      return text === "" || outer.closed ? !outer.closed : outer.write(Buffer.from(text));
    },
    drained: () => outer.drained(),
    end() {
      if (ended) return;
      ended = true;
      if (kind === "json" && !outer.closed)
        outer.write(Buffer.from(`event: next\ndata: {"id":${label},"payload":${json || "{}"}}\n\n${complete(id)}`));
      done();
    },
    get closed() {
      return ended || outer.closed;
    },
  };
}

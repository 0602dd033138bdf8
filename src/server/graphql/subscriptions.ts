// GraphQL subscriptions over SSE without a whatwg Request, Response and ReadableStream per
// connection (measured: those were most of an idle subscription's memory, and the stream's chunk per
// frame most of a replay's time). One transport-agnostic core serves both wire protocols, Yoga's
// SSE at /graphql and graphql-sse's distinct connections at /graphql/stream; it returns
// `[body, init]` like compat/sse.ts, and the node:http adapter is the same (src/http/sse/node-writer.ts).
// The wire rules are in GRAPHQL-SSE-PROTOCOL.md beside this file.
//
// Only the common case comes here: a POST of a JSON body {query, variables?, operationName?,
// extensions?} with `Accept: text/event-stream` whose operation parses, validates and is a
// subscription. Anything else (GET, another Accept, a parse or validation error, a query, a
// graphql-sse token) returns undefined and is answered by Yoga or graphql-stream.ts as before.
// The operation runs through Yoga's envelop (the same context, limits, masking, read-only tokens,
// metrics); CSRF needs nothing here (a JSON body is not a request a browser sends cross-site
// without a preflight).
import {
  getOperationAST,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type GraphQLError,
  type GraphQLSchema,
} from "graphql";
import { getSSEProcessor, isAsyncIterable, type YogaServerInstance } from "graphql-yoga";
import type { SseBody, SseInit, SseSink } from "../../http/sse/types.ts";
import { joinSharedInterval } from "../../base/util/shared-interval.ts";
import { ProjectedPage, projectedText, WRITES_PAGES } from "./projection/results.ts";
import { refusal } from "./stream.ts";

export type Protocol = "yoga" | "graphql-sse";

/** What this transport uses of Yoga: its envelop (parse, validate, context, subscribe) and fetch API. */
interface Enveloped {
  schema: GraphQLSchema;
  parse(source: string): DocumentNode;
  validate(schema: GraphQLSchema, document: DocumentNode): readonly GraphQLError[];
  contextFactory(): unknown;
  subscribe(args: ExecutionArgs): unknown;
}
export interface EnvelopSource {
  getEnveloped(initialContext: never): Enveloped;
  fetchAPI: YogaServerInstance<object, object>["fetchAPI"];
}

export interface SubscriptionParams {
  query: string;
  variables?: Record<string, unknown> | null;
  operationName?: string | null;
}

/**
 * The parameters of a request this transport serves, or undefined (Yoga's or graphql-sse's own
 * handling answers it, errors included).
 */
export function subscriptionParamsOf(
  method: string | undefined,
  headers: Record<string, string | string[] | undefined>,
  search: URLSearchParams,
  body: Buffer | undefined,
): SubscriptionParams | undefined {
  if (method !== "POST" || !body) return undefined;
  if (headers.accept !== "text/event-stream") return undefined;
  if ((String(headers["content-type"] ?? "").split(";")[0] ?? "").trim().toLowerCase() !== "application/json")
    return undefined;
  if (headers["x-graphql-event-stream-token"] !== undefined || search.has("token")) return undefined; // graphql-sse's reserved streams
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString("utf8"));
  } catch {
    return undefined;
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return undefined;
  const { query, variables, operationName, extensions, ...others } = parsed as Record<string, unknown>;
  if (Object.keys(others).length > 0 || typeof query !== "string") return undefined;
  const isObject = (value: unknown) =>
    value === undefined || value === null || (typeof value === "object" && !Array.isArray(value));
  if (!isObject(variables) || !isObject(extensions)) return undefined;
  if (operationName !== undefined && operationName !== null && typeof operationName !== "string") return undefined;
  return {
    query,
    variables: variables as SubscriptionParams["variables"],
    operationName: operationName as string | null | undefined,
  };
}

// Yoga writes its header names as given; graphql-sse's come lower-case. Kept as each sends them.
const YOGA_HEADERS = {
  "Content-Type": "text/event-stream",
  Connection: "keep-alive",
  "Cache-Control": "no-cache",
  "Content-Encoding": "none",
};
const GRAPHQL_SSE_HEADERS = {
  connection: "keep-alive",
  "cache-control": "no-cache",
  "content-encoding": "none",
  "content-type": "text/event-stream; charset=utf-8",
};

const PING = Buffer.from(":\n\n");
const COMPLETE = "event: complete\ndata:\n\n";
/** A replay's frames are gathered into one write up to this many characters. */
const WRITE_AT = 64 * 1024;

/** Both protocols ping every 12 s (Yoga: every 300 ms when NODE_ENV is test, as its own writer does). */
function pingIntervalMs(protocol: Protocol): number {
  return protocol === "yoga" && process.env.NODE_ENV === "test" ? 300 : 12_000;
}

/**
 * Opens the subscription in `params`; undefined when it is not one this transport serves (see the
 * top of the file). `serverContext` is what Yoga's context factory reads (the node request).
 */
export async function openSubscription<C extends object>(
  yoga: EnvelopSource,
  protocol: Protocol,
  params: SubscriptionParams,
  serverContext: C,
  onError: (error: unknown) => void,
): Promise<[SseBody, SseInit] | undefined> {
  // Yoga's own envelop plugins recognize one of its requests by `request` (usePreventMutationViaGET
  // codes a parse error GRAPHQL_PARSE_FAILED only then, and caches the error as coded): they read
  // its method. A stand-in, not a whatwg Request kept for the subscription's life.
  const request = { method: "POST" };
  const enveloped = yoga.getEnveloped({ ...serverContext, request, params, [WRITES_PAGES]: true } as never);
  let document: ReturnType<typeof enveloped.parse>;
  try {
    document = enveloped.parse(params.query);
  } catch {
    return undefined;
  }
  if (getOperationAST(document, params.operationName ?? undefined)?.operation !== "subscription") return undefined;
  if (enveloped.validate(enveloped.schema, document).length > 0) return undefined;
  const contextValue = (await enveloped.contextFactory()) as object;
  const result = (await enveloped.subscribe({
    schema: enveloped.schema,
    document,
    contextValue,
    variableValues: params.variables ?? undefined,
    operationName: params.operationName ?? undefined,
  })) as AsyncIterable<ExecutionResult> | ExecutionResult;
  if (!isAsyncIterable(result)) return protocol === "yoga" ? yogaRefusal(yoga, result) : graphqlSseRefusal(result);
  const iterator = result[Symbol.asyncIterator]();
  const init: SseInit = { status: 200, headers: { ...(protocol === "yoga" ? YOGA_HEADERS : GRAPHQL_SSE_HEADERS) } };
  const stringify = protocol === "yoga" ? yogaText : graphqlSseText;
  return [{ start: (sink) => pump(iterator, stringify, sink, pingIntervalMs(protocol), onError) }, init];
}

/** Yoga's SSE answer to a subscription refused before it streams: its own writer, run once, in full. */
async function yogaRefusal(yoga: EnvelopSource, result: ExecutionResult): Promise<[SseBody, SseInit]> {
  const response = await getSSEProcessor()(result, yoga.fetchAPI, "text/event-stream");
  const text = await response.text(); // one event and `complete`: it ends by itself
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  return [fixedBody(text), { status: response.status, headers }];
}

/** graphql-stream.ts's answer to the same: a 4xx with the errors as JSON. */
function graphqlSseRefusal(result: ExecutionResult): [SseBody, SseInit] {
  if (!("data" in result) && result.errors?.length) {
    const [body, init] = refusal(result.errors as readonly GraphQLError[]);
    return [fixedBody(body), { status: init.status, headers: init.headers }];
  }
  // A single result (no stream): graphql-sse streams it as one event, then completes.
  return [
    fixedBody(`:\n\nevent: next\ndata: ${graphqlSseText(result)}\n\n${COMPLETE}`),
    { status: 200, headers: { ...GRAPHQL_SSE_HEADERS } },
  ];
}

function fixedBody(text: string): SseBody {
  return {
    start(sink) {
      sink.write(Buffer.from(text));
      sink.end();
      return () => {};
    },
  };
}

/** A result's JSON as Yoga writes it (internal error extensions left out). */
function yogaText(result: ExecutionResult): string {
  return projectedText(result) ?? jsonStringifyResultWithoutInternals(result);
}

/** A result's JSON as graphql-sse writes it (JSON.stringify of the result as it is). */
function graphqlSseText(result: ExecutionResult): string {
  return projectedText(result) ?? JSON.stringify(result);
}

/**
 * Yoga's `jsonStringifyResultWithoutInternals` (graphql-yoga's result-processor/stringify.js, not
 * exported): errors lose the `http` and `unexpected` extensions, the result its `extensions.http`.
 */
function jsonStringifyResultWithoutInternals(result: ExecutionResult & { stringify?: (r: unknown) => string }): string {
  let sanitized: ExecutionResult = result;
  if (result.errors?.length || (result.extensions as { http?: unknown } | undefined)?.http) {
    sanitized = { ...result };
    if (sanitized.errors) sanitized.errors = sanitized.errors.map(withoutInternals);
    if (sanitized.extensions) {
      const { http: _http, ...extensions } = result.extensions as Record<string, unknown>;
      sanitized.extensions = Object.keys(extensions).length ? extensions : undefined;
    }
  }
  return (result.stringify ?? JSON.stringify)(sanitized);
}

function withoutInternals(error: GraphQLError): GraphQLError {
  const json = error.toJSON();
  const { http: _http, unexpected: _unexpected, ...extensions } = (json.extensions ?? {}) as Record<string, unknown>;
  return { ...json, extensions: Object.keys(extensions).length ? extensions : undefined } as unknown as GraphQLError;
}

/**
 * Writes the results onto the sink: `:` first (some browsers wait for a first byte), an `event:
 * next` per result, `event: complete` when the stream ends. Frames that arrive together (a replay
 * page) go out in one write, at the end of the event-loop turn or every WRITE_AT characters; while
 * the client is behind (write() false) no further result is pulled until it drains.
 */
function pump(
  iterator: AsyncIterator<ExecutionResult>,
  stringify: (result: ExecutionResult) => string,
  sink: SseSink,
  pingMs: number,
  onError: (error: unknown) => void,
): () => void {
  let stopped = false;
  /** Set when a write returned false: resolves once the client drained (listened for at once, not to miss it). */
  let behind: Promise<void> | undefined;
  let pending = "";
  let flushScheduled = false;
  const flush = () => {
    flushScheduled = false;
    if (pending === "" || stopped || sink.closed) return;
    const chunk = pending;
    pending = "";
    if (!sink.write(Buffer.from(chunk))) behind ??= sink.drained();
  };
  const leaveHeartbeat = joinSharedInterval(pingMs, () => {
    if (!behind && !stopped && !sink.closed && !sink.write(PING)) behind = sink.drained();
  });
  const stop = () => {
    if (stopped) return;
    stopped = true;
    leaveHeartbeat();
    void Promise.resolve(iterator.return?.()).catch(onError);
  };
  sink.write(PING);
  void (async () => {
    try {
      for (;;) {
        if (behind) {
          await behind;
          behind = undefined;
        }
        if (stopped || sink.closed) return;
        const step = await iterator.next();
        if (stopped || sink.closed) return;
        if (step.done) {
          pending += COMPLETE;
          flush();
          stopped = true;
          leaveHeartbeat();
          sink.end();
          return;
        }
        if (step.value instanceof ProjectedPage)
          for (const text of step.value.texts) pending += `event: next\ndata: ${text}\n\n`;
        else pending += `event: next\ndata: ${stringify(step.value)}\n\n`;
        if (pending.length >= WRITE_AT) flush();
        else if (!flushScheduled) {
          flushScheduled = true;
          setImmediate(flush);
        }
      }
    } catch (error) {
      onError(error);
      flush();
      stop();
      sink.end();
    }
  })();
  return stop;
}

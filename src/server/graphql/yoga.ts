// GraphQL over one node:http handler: Yoga at /graphql (queries and mutations, GraphiQL with its
// assets inline so a closed network can load it, and Yoga's own SSE subscriptions) and the
// graphql-sse protocol at /graphql/stream (src/server/graphql/stream.ts runs it through the same
// envelop, so it gets the same context, limits and error masking). http.ts sends only those two
// paths here. The limits live in src/server/graphql/plugins/limits.ts; the body is read here with the one
// size limit REST uses. A subscription POSTed with `Accept: text/event-stream` to either path is
// written by src/server/graphql/subscriptions.ts through the same envelop (the same bytes, without
// a whatwg Request/Response/ReadableStream per connection).
import type http from "node:http";
import { GraphQLError } from "graphql";
import { createYoga, maskError, type Plugin } from "graphql-yoga";
import { renderGraphiQL } from "@graphql-yoga/render-graphiql";
import type { App } from "../../app.ts";
import { BadInputError, CrowsError, RateLimitedError } from "../../base/errors.ts";
import { PothosValidationError } from "@pothos/core";
import { HttpError, STATUS_OF } from "../../http/http-error.ts";
import { RETRY_AFTER_S, TROUBLE_MESSAGE } from "../../storage/trouble.ts";
import { schema } from "../../../schema/index.ts";
import type { Context } from "../../../schema/builder.ts";
import { readBody } from "../../http/body.ts";
import { principalOf } from "../access.ts";
import type { Principal } from "../../access/principal.ts";
import { graphqlScopes } from "./plugins/scopes.ts";
import { graphqlLimits } from "./plugins/limits.ts";
import { decodeBody, refuseUnstorableText } from "../../http/unstorable-text.ts";
import { MAX_JSON_DEPTH, tooDeep, tooDeepError } from "../../http/json-depth.ts";
import { useGraphQLStream } from "./stream.ts";
import { MultiplexRefusal, multiplexedOperations, openMultiplexed } from "./multiplex.ts";
import { openSubscription, subscriptionParamsOf } from "./subscriptions.ts";
import { writeSse } from "../../http/sse/node-writer.ts";
import { asksForStream, type StreamGate } from "../stream-caps.ts";
import { graphqlMetricsPlugin } from "../../telemetry/metrics.ts";
import { describeError } from "../../base/describe-error.ts";
import { compiledQueries } from "./plugins/compiled-queries.ts";
import { useProjectedSubscriptions } from "./projection/plugin.ts";
import { projectableSubscriptions } from "../../../schema/events.ts";
import { graphqlReadCache } from "./plugins/read-cache.ts";
import { executionBounds, guardResolvers, queryCostLimit } from "./plugins/bounds.ts";

export const GRAPHQL_PATH = "/graphql";
export const GRAPHQL_SSE_PATH = "/graphql/stream";

const GRAPHQL_METHODS = new Set(["GET", "HEAD", "POST"]);

export const isGraphQLPath = (pathname: string): boolean => pathname === GRAPHQL_PATH || pathname === GRAPHQL_SSE_PATH;

/** What the node adapter hands Yoga as its server context. */
interface ServerContext {
  req: http.IncomingMessage;
  res: http.ServerResponse;
}

export const EXAMPLE_QUERY = `# Submit a list, then paste its listId into the subscription below.
mutation Submit {
  submitList(text: "buy milk\\nwrite a haiku about crows", requester: "owner") {
    __typename
    ... on SubmittedList { listId }
    ... on Error { code message }
  }
}

subscription Follow($listId: ID!) {
  listEvents(listId: $listId, after: 0) { seq name ts payload }
}
`;

/** What Yoga's log arguments may say in server.log: an error's shape, never its message (it can quote input). */
function logSafe(arg: unknown): string {
  if (arg instanceof GraphQLError)
    return `${describeError(arg.originalError ?? arg)}${arg.path ? ` at ${arg.path.join(".")}` : ""}`;
  return arg instanceof Error ? describeError(arg) : typeof arg === "string" ? arg : typeof arg;
}

/**
 * Masking stays on: unexpected failures read "Unexpected error." A domain refusal that reaches the
 * top level (a field without an error union, or a subscription's arguments) is expected, so it
 * keeps its message and carries its code and HTTP status instead.
 */
const maskCrowsError =
  (app: App) =>
  (error: unknown, message: string, isDev?: boolean): Error => {
    let original = error instanceof GraphQLError ? error.originalError : error;
    // Pothos refuses connection arguments it cannot read (a malformed cursor, before with first):
    // the client's mistake, so a bad_input like any other.
    if (original instanceof PothosValidationError) original = new BadInputError(original.message);
    // Storage trouble is named, as on REST: a coded error with the 503 and Retry-After.
    const trouble = app.database.health.note(original);
    if (trouble !== undefined) {
      return new GraphQLError(TROUBLE_MESSAGE[trouble], {
        ...(error instanceof GraphQLError
          ? { nodes: error.nodes, path: error.path, source: error.source, positions: error.positions }
          : {}),
        extensions: {
          code: "STORAGE_UNAVAILABLE",
          storage: trouble,
          http: { status: 503, headers: { "retry-after": String(RETRY_AFTER_S[trouble]) } },
        },
      });
    }
    if (original instanceof CrowsError) {
      const extensions: Record<string, unknown> = { code: original.code, http: { status: STATUS_OF[original.code] } };
      if (original instanceof RateLimitedError) {
        extensions.cooldownS = original.cooldownS;
        extensions.http = { status: 429, headers: { "retry-after": String(original.cooldownS) } };
      }
      return new GraphQLError(original.message, {
        ...(error instanceof GraphQLError
          ? { nodes: error.nodes, path: error.path, source: error.source, positions: error.positions }
          : {}),
        extensions,
      });
    }
    return maskError(error, message, isDev);
  };

/**
 * Yoga's CSRF prevention (the rule of @graphql-yoga/plugin-csrf-prevention, which is not installed
 * here): a request a browser could send cross-site without a preflight (a form or text/plain body)
 * is refused unless it carries x-graphql-yoga-csrf. GET needs nothing: over GET Yoga runs queries
 * only (a mutation is a 405), and a cross-site page cannot read the answer.
 */
const SIMPLE_CONTENT_TYPES = ["application/x-www-form-urlencoded", "multipart/form-data", "text/plain"];
const csrfPrevention: Plugin = {
  onRequestParse({ request }) {
    if (request.method === "GET" || request.method === "HEAD") return;
    const mediaType = (request.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
    if (mediaType !== "" && !SIMPLE_CONTENT_TYPES.includes(mediaType)) return;
    if (request.headers.has("x-graphql-yoga-csrf")) return;
    throw new GraphQLError("Required CSRF header(s) not present", {
      extensions: { code: "CSRF_PREVENTED", http: { status: 403 } },
    });
  },
};

/** GET's variables and extensions are JSON in the query string: broken JSON is the client's 400. */
const queryStringJson: Plugin = {
  onRequestParse({ request, url }) {
    if (request.method !== "GET") return;
    for (const name of ["variables", "extensions"]) {
      const raw = url.searchParams.get(name);
      if (raw === null || raw === "") continue;
      try {
        JSON.parse(raw);
      } catch {
        throw new GraphQLError(`The "${name}" parameter is not valid JSON.`, {
          extensions: { code: "BAD_REQUEST", http: { status: 400 } },
        });
      }
    }
  },
};

/**
 * A request error (a variable of the wrong type or missing: the result has errors and no `data`) is
 * coded BAD_USER_INPUT, as graphql-tools' subscribe already codes it; its execute leaves it uncoded.
 */
const requestErrorsCoded: Plugin = {
  onExecute: () => ({
    onExecuteDone({ result }) {
      for (const single of Array.isArray(result) ? result : [result]) {
        if (!single || "data" in single || Symbol.asyncIterator in single) continue;
        const coded = single as { errors?: GraphQLError[] };
        // Rebuilt, not edited: graphql-jit's request errors carry no extensions object at all.
        coded.errors = coded.errors?.map((error) =>
          error.extensions?.code !== undefined
            ? error
            : new GraphQLError(error.message, {
                nodes: error.nodes,
                source: error.source,
                positions: error.positions,
                path: error.path,
                extensions: { http: { status: 400 }, ...error.extensions, code: "BAD_USER_INPUT" },
              }),
        );
      }
    },
  }),
};

export interface GraphQLHandlerOptions {
  /**
   * Serve SSE subscriptions through src/server/graphql/subscriptions.ts, events written by the
   * projector (default). Off: Yoga's and graphql-sse's own writers serve them and graphql executes
   * every event, as before: the reference test/graphql-sse-transport.test.ts compares against.
   */
  nativeSubscriptions?: boolean;
  /** The stream caps a subscription over SSE takes a slot from (none: uncapped, as in-process tests use it). */
  streams?: StreamGate;
}

/** The Yoga instance behind both paths: its envelop is also what the SSE subscription writer runs. */
export function createGraphQLYoga(app: App, options: { projectedSubscriptions?: boolean } = {}) {
  guardResolvers(schema);
  const bounds = { deadlineMs: app.config.graphqlDeadlineMs, maxAnswerBytes: app.config.graphqlMaxAnswerBytes };
  return createYoga<ServerContext, Context & { principal: Principal }>({
    schema,
    graphqlEndpoint: GRAPHQL_PATH,
    context: ({ req }) => ({ app, principal: principalOf(req) }),
    cors: false, // CORS is decided once, for every path, by the access check (src/server/access.ts)
    graphiql: { title: "crows", defaultQuery: EXAMPLE_QUERY, subscriptionsProtocol: "SSE" },
    renderGraphiQL,
    landingPage: false,
    maskedErrors: { maskError: maskCrowsError(app) },
    plugins: [
      csrfPrevention,
      queryStringJson,
      ...graphqlLimits(),
      graphqlScopes,
      refuseUnstorableText,
      requestErrorsCoded,
      useGraphQLStream(GRAPHQL_SSE_PATH, (line) => app.logLine(line)),
      graphqlMetricsPlugin(app.metrics),
      queryCostLimit(),
      graphqlReadCache(() => app.database.readVersion),
      compiledQueries,
      useProjectedSubscriptions(options.projectedSubscriptions === false ? {} : projectableSubscriptions),
      executionBounds(bounds),
    ],
    logging: {
      debug: () => {},
      info: () => {},
      warn: (...args: unknown[]) => app.logLine(`graphql: ${args.map(logSafe).join(" ")}`),
      // Yoga logs every resolver error before masking; a domain refusal is an answer, not a fault.
      error: (...args: unknown[]) => {
        if (args.some((a) => a instanceof GraphQLError && a.originalError instanceof CrowsError)) return;
        app.logLine(`graphql: ${args.map(logSafe).join(" ")}`);
      },
    },
  });
}

/** The JSON-depth 400 with a GraphQL `errors` entry beside its message, so either kind of client reads it. */
function graphqlTooDeep(where: string): HttpError {
  const refusal = tooDeepError(where);
  const errors = [{ message: refusal.message, extensions: { code: "JSON_TOO_DEEP", limit: MAX_JSON_DEPTH } }];
  return new HttpError(refusal.status, refusal.message, { ...refusal.extra, errors });
}

export function createGraphQLHandler(
  app: App,
  options: GraphQLHandlerOptions = {},
): (req: http.IncomingMessage, res: http.ServerResponse, url?: URL) => Promise<void> {
  const native = options.nativeSubscriptions ?? true;
  const yoga = createGraphQLYoga(app, { projectedSubscriptions: native });
  return async (req, res, url = new URL(req.url ?? "/", "http://crows.invalid")) => {
    const method = req.method ?? "GET";
    if (!GRAPHQL_METHODS.has(method)) {
      // Before Yoga: it would answer OPTIONS, PUT or DELETE with a CSRF 403 (or, on /graphql/stream,
      // keep a reservation in memory). A CORS preflight never gets here: the access check answers it.
      throw new HttpError(
        405,
        `${method} is not allowed here. GraphQL takes GET and POST (one POST or GET per subscription).`,
        {},
        { allow: "GET, POST" },
      );
    }
    // JSON nested past MAX_JSON_DEPTH anywhere (a GET's variables or extensions, any part of a
    // body, used or not) is refused before Yoga, graphql-sse or a scan of ours parses it.
    for (const name of ["variables", "extensions"]) {
      const raw = url.searchParams.get(name);
      if (raw !== null && tooDeep(raw)) throw graphqlTooDeep(`The "${name}" parameter`);
    }
    let body: Buffer | undefined;
    if (method !== "GET" && method !== "HEAD") {
      // Read here, under the shared limit (a 413 past it); Yoga takes a body already read from req.body.
      body = await readBody(req);
      const text = decodeBody(body); // a 400 when it is not UTF-8 (Yoga would read the bad bytes as U+FFFD)
      if (tooDeep(text)) throw graphqlTooDeep("The body");
      (req as http.IncomingMessage & { body?: Buffer }).body = body;
    }
    // A subscription over SSE takes a stream slot before it opens (a 429 or 503 past a cap).
    if (
      options.streams &&
      asksForStream(
        url.pathname,
        req.headers.accept,
        () => body?.toString("utf8") ?? url.searchParams.get("query") ?? "",
      )
    )
      options.streams.admit(req, res);
    if (native && url.pathname === GRAPHQL_SSE_PATH) {
      // Several subscriptions on one connection (multiplex.ts): a page's streams, one socket.
      let operations: ReturnType<typeof multiplexedOperations>;
      try {
        operations = multiplexedOperations(req.method, req.headers, body);
      } catch (error) {
        if (!(error instanceof MultiplexRefusal)) throw error;
        throw new HttpError(400, error.message, { errors: [{ message: error.message }] });
      }
      if (operations)
        return writeSse(
          res,
          ...(await openMultiplexed(yoga, operations, { req, res }, (error) =>
            app.logLine(`graphql: subscription failed: ${describeError(error)}`),
          )),
        );
    }
    const params = native ? subscriptionParamsOf(req.method, req.headers, url.searchParams, body) : undefined;
    if (params) {
      const protocol = url.pathname === GRAPHQL_SSE_PATH ? "graphql-sse" : "yoga";
      const opened = await openSubscription(yoga, protocol, params, { req, res }, (error) =>
        app.logLine(`graphql: subscription failed: ${describeError(error)}`),
      );
      if (opened) return writeSse(res, ...opened);
    }
    // Yoga's request listener sends the response itself and logs its own failures.
    await yoga.requestListener(req, res);
  };
}

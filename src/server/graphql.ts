// GraphQL over one node:http handler: Yoga at /graphql (queries and mutations, GraphiQL with its
// assets inline so a closed network can load it, and Yoga's own SSE subscriptions) and the
// graphql-sse protocol at /graphql/stream (useGraphQLSSE runs it through the same envelop, so it
// gets the same context and error masking). Any other path is a 404.
import type http from "node:http";
import { GraphQLError } from "graphql";
import { createYoga, maskError } from "graphql-yoga";
import { renderGraphiQL } from "@graphql-yoga/render-graphiql";
import { useGraphQLSSE } from "@graphql-yoga/plugin-graphql-sse";
import type { App } from "../app.ts";
import { CrowsError, RateLimitedError, type ErrorCode } from "../errors.ts";
import { schema } from "../../schema/index.ts";
import type { Context } from "../../schema/builder.ts";
import { graphqlMetricsPlugin } from "../ops/metrics.ts";
import { describeError } from "../ops/describe-error.ts";

export const GRAPHQL_PATH = "/graphql";
export const GRAPHQL_SSE_PATH = "/graphql/stream";

/** The status the REST API gives each domain refusal (compat/http-error.ts says the same). */
const STATUS: Record<ErrorCode, number> = {
  bad_input: 400,
  not_found: 404,
  conflict: 409,
  forbidden: 403,
  rate_limited: 429,
};

const EXAMPLE_QUERY = `# Submit a list, then paste its listId into the subscription below.
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
  if (arg instanceof GraphQLError) return `${describeError(arg.originalError ?? arg)}${arg.path ? ` at ${arg.path.join(".")}` : ""}`;
  return arg instanceof Error ? describeError(arg) : typeof arg === "string" ? arg : typeof arg;
}

/**
 * Masking stays on: unexpected failures read "Unexpected error." A domain refusal that reaches the
 * top level (a field without an error union, or a subscription's arguments) is expected, so it
 * keeps its message and carries its code and HTTP status instead.
 */
function maskCrowsError(error: unknown, message: string, isDev?: boolean): Error {
  const original = error instanceof GraphQLError ? error.originalError : error;
  if (original instanceof CrowsError) {
    const extensions: Record<string, unknown> = { code: original.code, http: { status: STATUS[original.code] } };
    if (original instanceof RateLimitedError) extensions.cooldownS = original.cooldownS;
    return new GraphQLError(original.message, {
      ...(error instanceof GraphQLError ? { nodes: error.nodes, path: error.path, source: error.source, positions: error.positions } : {}),
      extensions,
    });
  }
  return maskError(error, message, isDev);
}

export function createGraphQLHandler(app: App): (req: http.IncomingMessage, res: http.ServerResponse) => void {
  const yoga = createYoga<Record<string, unknown>, Context>({
    schema,
    graphqlEndpoint: GRAPHQL_PATH,
    context: () => ({ app }),
    graphiql: { title: "crows", defaultQuery: EXAMPLE_QUERY, subscriptionsProtocol: "SSE" },
    renderGraphiQL,
    landingPage: false,
    maskedErrors: { maskError: maskCrowsError },
    plugins: [useGraphQLSSE({ endpoint: GRAPHQL_SSE_PATH }), graphqlMetricsPlugin(app.metrics)],
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

  return (req, res) => {
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    if (path !== GRAPHQL_PATH && path !== GRAPHQL_SSE_PATH) {
      res.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end("Not found. GraphQL lives at /graphql.\n");
      return;
    }
    // Yoga's request listener sends the response itself and logs its own failures.
    void yoga.requestListener(req, res);
  };
}

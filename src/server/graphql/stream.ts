// The graphql-sse protocol at /graphql/stream, run through Yoga's envelop (same context, limits and
// masking as /graphql). This is @graphql-yoga/plugin-graphql-sse's wiring with two fixes: a
// document that does not parse or validate (a syntax error, a limit) is a 400 carrying its coded
// GraphQL errors, where the plugin let the throw become a 500 with a stack trace, or answered
// "Unable to detect operation AST" (an operation refused before it runs, such as a bad variable or
// a subscription cursor its stream never sent, is such a 4xx too); and anything thrown inside the handler is a masked 500.
import { GraphQLError, getOperationAST } from "graphql";
import { createHandler } from "graphql-sse/lib/use/fetch";
import type { Plugin } from "graphql-yoga";
import { describeError } from "../../base/describe-error.ts";

type GraphQLSseHandler = (request: Request) => Promise<Response>;

// A fresh object each time: the fetch adapter writes content-length into the one it is given.
const jsonHeaders = () => ({ "content-type": "application/json; charset=utf-8" });

export function refusal(
  errors: readonly GraphQLError[],
): readonly [string, { status: number; statusText: string; headers: Record<string, string> }] {
  // toJSON keeps message, locations and extensions, never a stack; the http hint is for Yoga only.
  const body = errors.map((error) => {
    const { http: _http, ...extensions } = error.extensions as Record<string, unknown>;
    return { ...error.toJSON(), extensions };
  });
  // The status an error asks for (Yoga's "mutation over GET" is a 405), else 400.
  const status = Math.max(
    400,
    ...errors.map((error) => Number((error.extensions as { http?: { status?: number } }).http?.status ?? 0)),
  );
  return [JSON.stringify({ errors: body }), { status, statusText: "", headers: jsonHeaders() }];
}

export function useGraphQLStream(endpoint: string, log: (line: string) => void): Plugin {
  const serverContextOf = new WeakMap<Request, Record<string, unknown>>();
  let handler: GraphQLSseHandler | undefined;
  return {
    onYogaInit({ yoga }) {
      handler = createHandler(
        {
          onSubscribe(req, params) {
            const enveloped = yoga.getEnveloped({ ...serverContextOf.get(req.raw), request: req.raw, params });
            let document: ReturnType<typeof enveloped.parse>;
            try {
              document = enveloped.parse(params.query);
            } catch (error) {
              if (error instanceof GraphQLError) return refusal([error]);
              throw error;
            }
            const errors = enveloped.validate(enveloped.schema, document);
            if (errors.length > 0) return refusal(errors);
            return Promise.resolve(enveloped.contextFactory()).then(async (contextValue) => {
              const args = {
                schema: enveloped.schema,
                document,
                contextValue,
                variableValues: params.variables,
                operationName: params.operationName,
              };
              const operation = getOperationAST(document, params.operationName);
              const result =
                operation?.operation === "subscription"
                  ? await enveloped.subscribe(args)
                  : await enveloped.execute(args);
              // An operation refused before it runs (a variable of the wrong type; for a subscription
              // also a cursor its stream never sent, an unknown nest) is a result with errors and no
              // `data`: answer it as the 4xx its errors name, as Yoga's own SSE does, instead of
              // handing graphql-sse a result it reads as arguments ("Unable to detect operation AST").
              if (!(Symbol.asyncIterator in result) && !("data" in result) && result.errors?.length)
                return refusal(result.errors);
              return result;
            });
          },
        },
        yoga.fetchAPI,
      );
    },
    onRequest({ request, url, endResponse, serverContext, fetchAPI }) {
      if (url.pathname !== endpoint || !handler) return;
      if (request.method === "PUT" || request.method === "DELETE") {
        // Single-connection mode's reservations (PUT) live in the handler's memory until a client
        // connects to them, with no bound: any caller could pile them up. Distinct connections (a
        // POST or GET per subscription) are all crows serves.
        const body = JSON.stringify({
          errors: [{ message: "Use one POST (or GET) per subscription; reserved streams are not served here." }],
        });
        endResponse(new fetchAPI.Response(body, { status: 405, headers: { ...jsonHeaders(), allow: "GET, POST" } }));
        return;
      }
      serverContextOf.set(request, serverContext as Record<string, unknown>);
      return handler(request).then(
        (r) => {
          endResponse(r);
        },
        (error: unknown) => {
          log(`graphql-sse: unexpected error: ${describeError(error)}`); // its shape: a message can quote input
          endResponse(
            new fetchAPI.Response(JSON.stringify({ errors: [{ message: "Unexpected error." }] }), {
              status: 500,
              headers: jsonHeaders(),
            }),
          );
        },
      );
    },
  };
}

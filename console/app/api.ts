// The console's only ways out: GraphQL over plain fetch (POST /graphql) and subscriptions, all of a
// tab's on one multiplexed connection to /graphql/stream (streams.ts), both same-origin with the
// session cookie (no token in JS). Every stream keeps the last cursor it delivered and, after a drop
// or a server restart, subscribes again from it: the server replays exactly what was missed, and
// anything at or before the cursor is ignored, so a row never appears twice.

export class GraphQLRequestError extends Error {}

export async function gql<T = any>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
  let response: Response;
  try {
    response = await fetch("/graphql", {
      method: "POST",
      credentials: "same-origin",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ query, variables }),
    });
  } catch (error) {
    throw new GraphQLRequestError(`The server did not answer: ${(error as Error).message}`);
  }
  let body: any;
  try {
    body = await response.json();
  } catch {
    throw new GraphQLRequestError(`The server answered ${response.status} without JSON.`);
  }
  if (body?.errors?.length)
    throw new GraphQLRequestError(body.errors.map((e: { message: string }) => e.message).join("; "));
  if (!response.ok) throw new GraphQLRequestError(body?.message ?? `The server answered ${response.status}.`);
  return body.data as T;
}

/** Runs a mutation whose result is an error union: returns the success, throws the refusal's message. */
export async function mutate<T = any>(field: string, query: string, variables: Record<string, unknown>): Promise<T> {
  const data = await gql(query, variables);
  const result = data[field];
  if (result && typeof result.code === "string" && typeof result.message === "string")
    throw new GraphQLRequestError(result.message);
  return result as T;
}

// Streams: every subscription of the tab on one connection (streams.ts).
export { follow, type StreamOptions } from "./streams.ts";

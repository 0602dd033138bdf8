// The console's only ways out: GraphQL over plain fetch (POST /graphql) and subscriptions over the
// graphql-sse protocol (/graphql/stream), both same-origin with the session cookie (no token in JS).
// Every stream keeps the last cursor it delivered and, after a drop or a server restart, subscribes
// again from it: the server replays exactly what was missed, and anything at or before the cursor
// is ignored, so a row never appears twice.
import { createClient } from "graphql-sse";
import { reportError, setStreamState } from "./status.ts";

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

const client = createClient({ url: "/graphql/stream", credentials: "same-origin", retryAttempts: 0 });

export interface StreamOptions<T> {
  /** Shown in the connection line and in errors. */
  name: string;
  query: string;
  /** The variables for a (re)subscription resuming after `cursor` (null: from the start). */
  variables: (cursor: number | string | null) => Record<string, unknown>;
  /** The field the subscription returns. */
  field: string;
  /** The resume cursor an item carries, as a number that rises. */
  cursorOf: (item: T) => number;
  /** The cursor value to resume with (defaults to the number). */
  resumeWith?: (item: T) => number | string;
  onItem: (item: T) => void;
}

/** Follows a resumable subscription until stop() is called; reconnects with backoff, resuming. */
export function follow<T>(options: StreamOptions<T>): () => void {
  let stopped = false;
  let last = -Infinity;
  let resume: number | string | null = null;
  let unsubscribe: (() => void) | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let attempt = 0;

  const reconnectLater = () => {
    if (stopped) return;
    const delay = Math.min(5000, 250 * 2 ** attempt++);
    setStreamState(options.name, "reconnecting");
    timer = setTimeout(connect, delay);
  };

  const connect = () => {
    if (stopped) return;
    let refused = false;
    setStreamState(options.name, attempt === 0 ? "connecting" : "reconnecting");
    unsubscribe = client.subscribe<Record<string, T>>(
      { query: options.query, variables: options.variables(resume) },
      {
        next: (result) => {
          if (result.errors?.length) {
            refused = true;
            reportError(`${options.name}: ${result.errors.map((e) => e.message).join("; ")}`);
            return;
          }
          const item = result.data?.[options.field];
          if (!item) return;
          const cursor = options.cursorOf(item);
          if (cursor <= last) return; // already shown: never twice
          last = cursor;
          resume = options.resumeWith ? options.resumeWith(item) : cursor;
          options.onItem(item);
        },
        error: (error) => {
          // A dropped connection or a server that is down: try again, from the last cursor. A
          // refusal (401 without the session cookie, 400 from a query limit) is also the owner's
          // to see, once per streak rather than on every retry.
          const status = (error as { response?: { status?: number } } | undefined)?.response?.status;
          if (status !== undefined && status >= 400 && attempt === 0)
            reportError(`${options.name}: the server refused the stream (${status}).`);
          // A 400 refuses the subscription itself (a resume point the stream never sent, a limit):
          // asking again with the same arguments would only be refused again.
          if (status === 400) setStreamState(options.name, "stopped");
          else reconnectLater();
        },
        complete: () => {
          // The server ends streams when it shuts down; an in-band refusal is not retried.
          if (refused) setStreamState(options.name, "stopped");
          else reconnectLater();
        },
      },
      {
        connected: () => {
          attempt = 0;
          setStreamState(options.name, "live");
        },
      },
    );
  };

  connect();
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    unsubscribe?.();
    setStreamState(options.name, null);
  };
}

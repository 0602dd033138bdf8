// Every live stream of a tab on ONE connection. A browser keeps at most six HTTP/1.1 connections
// per host, and a list page follows four streams (approvals, the list's events, its flights' waits
// and text): on a connection each, a second tab found none free and stalled. So follow() only
// registers an operation here; the tab holds one POST /graphql/stream carrying every registered
// operation by id (src/server/graphql/multiplex.ts, docs/graphql.md "One connection for many
// subscriptions"). When the set changes (a view opens or closes a stream) the connection is opened
// again with each operation's resume cursor, so nothing is missed and, since anything at or before
// an operation's cursor is ignored, nothing shows twice. Drops and refusals are retried with backoff.
import { reportError, setStreamState } from "./status.ts";

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

interface Operation {
  options: StreamOptions<any>;
  last: number;
  resume: number | string | null;
  /** Refused in-band (its errors shown): not asked for again until the view follows it anew. */
  stopped: boolean;
  refusedNow: boolean;
  /** Its refusal was shown in this streak of failures (shown once, not on every retry). */
  reported: boolean;
}

const operations = new Map<string, Operation>();
let nextId = 1;
let connection: AbortController | undefined;
let timer: ReturnType<typeof setTimeout> | undefined;
let attempt = 0;

/** Follows a resumable subscription until stop() is called, on the tab's one connection. */
export function follow<T>(options: StreamOptions<T>): () => void {
  const id = `s${nextId++}`;
  operations.set(id, { options, last: -Infinity, resume: null, stopped: false, refusedNow: false, reported: false });
  setStreamState(options.name, "connecting");
  reconnectSoon(0);
  return () => {
    operations.delete(id);
    setStreamState(options.name, null);
    reconnectSoon(0);
  };
}

/** Opens the connection again after `ms` (a burst of changes in one render opens it once). */
function reconnectSoon(ms: number): void {
  if (timer) clearTimeout(timer);
  timer = setTimeout(() => {
    timer = undefined;
    void connect();
  }, ms);
}

function reconnectLater(): void {
  if (timer) return; // one retry at a time, however many operations ended
  for (const op of operations.values()) if (!op.stopped) setStreamState(op.options.name, "reconnecting");
  reconnectSoon(Math.min(5000, 250 * 2 ** attempt++));
}

async function connect(): Promise<void> {
  connection?.abort();
  connection = undefined;
  const active = [...operations].filter(([, op]) => !op.stopped);
  if (active.length === 0) return;
  const mine = new AbortController();
  connection = mine;
  const body = {
    operations: Object.fromEntries(
      active.map(([id, op]) => [id, { query: op.options.query, variables: op.options.variables(op.resume) }]),
    ),
  };
  let response: Response;
  try {
    response = await fetch("/graphql/stream", {
      method: "POST",
      credentials: "same-origin",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify(body),
      signal: mine.signal,
    });
  } catch {
    if (!mine.signal.aborted) reconnectLater(); // the server is down: try again, from each cursor
    return;
  }
  if (!response.ok || !response.body) {
    // A refusal (401 without the session cookie, 429 past a cap) is the owner's to see, once per
    // streak rather than on every retry; a 400 would only be refused again.
    for (const [, op] of active) {
      if (op.reported) continue;
      op.reported = true;
      reportError(`${op.options.name}: the server refused the stream (${response.status}).`);
    }
    if (response.status === 400) for (const [, op] of active) setStreamState(op.options.name, "stopped");
    else if (!mine.signal.aborted) reconnectLater();
    return;
  }
  attempt = 0;
  for (const [, op] of active) {
    op.reported = false;
    setStreamState(op.options.name, "live");
  }
  try {
    await readFrames(response.body, mine.signal, (event, data) => deliver(event, data));
  } catch {
    // a dropped connection: retried below, unless it was closed on purpose
  }
  if (!mine.signal.aborted && connection === mine) reconnectLater();
}

function deliver(event: string, data: string): void {
  let frame: { id: string; payload?: { data?: Record<string, unknown>; errors?: Array<{ message: string }> } };
  try {
    frame = JSON.parse(data);
  } catch {
    return;
  }
  const op = operations.get(frame.id);
  if (!op) return; // stopped meanwhile
  if (event === "complete") {
    // A refused operation stays stopped; any other ended because the server is stopping: resume it.
    if (op.refusedNow) {
      op.stopped = true;
      setStreamState(op.options.name, "stopped");
    } else reconnectLater();
    return;
  }
  const errors = frame.payload?.errors;
  if (errors?.length) {
    op.refusedNow = true;
    reportError(`${op.options.name}: ${errors.map((e) => e.message).join("; ")}`);
    return;
  }
  const item = frame.payload?.data?.[op.options.field];
  if (!item) return;
  const cursor = op.options.cursorOf(item);
  if (cursor <= op.last) return; // already shown: never twice
  op.last = cursor;
  op.resume = op.options.resumeWith ? op.options.resumeWith(item) : cursor;
  op.options.onItem(item);
}

/** Reads text/event-stream frames (event and data fields; comments are heartbeats) until the end. */
async function readFrames(
  body: ReadableStream<Uint8Array>,
  signal: AbortSignal,
  onFrame: (event: string, data: string) => void,
): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  signal.addEventListener("abort", () => void reader.cancel().catch(() => {}), { once: true });
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = "message";
      const data: string[] = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) event = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (data.length) onFrame(event, data.join("\n"));
    }
  }
}

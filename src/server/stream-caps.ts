// How many SSE streams the server holds open, per client address and in all. Every stream holds a
// socket, and so a file descriptor, for as long as the client likes: one client holding about
// 20,000 (the process's fd limit) once locked every other client out, /healthz included. So a
// request that asks for a stream (GET /api/events; a GraphQL subscription over SSE, on every
// transport: asksForStream; an MCP GET stream; an A2A SendStreamingMessage or SubscribeToTask,
// counted by the A2A door once its body names the method) takes a slot before anything opens it and gives it back
// when its response closes. Past the per-address cap it is a 429, past the total a 503, each with
// Retry-After and a log line (at most one per cap every 10 s, with the count refused meanwhile).
// The total stays HEADROOM below the fd limit, so ordinary requests, /healthz and the database
// always have descriptors left. docs/security.md states the values.
import { readFileSync } from "node:fs";
import type http from "node:http";
import { HttpError } from "../http/http-error.ts";

/** The soft limit on open files, from /proc (Linux); undefined where it cannot be read. */
export function fdLimit(limitsFile = "/proc/self/limits"): number | undefined {
  try {
    const line = readFileSync(limitsFile, "utf8")
      .split("\n")
      .find((l) => l.startsWith("Max open files"));
    const soft = line?.slice("Max open files".length).trim().split(/\s+/)[0];
    if (soft === undefined || soft === "unlimited") return undefined;
    const n = Number(soft);
    return Number.isInteger(n) && n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

/** Descriptors kept free of streams: a tenth of the limit, at least 256 and at most 1,024. */
export function headroomFor(limit: number): number {
  return Math.max(256, Math.min(1024, Math.floor(limit / 10)));
}

/** Where no fd limit can be read, the total's default. */
const TOTAL_WITHOUT_FD_LIMIT = 10_000;

export interface StreamCapValues {
  total: number;
  perClient: number;
  fdLimit: number | undefined;
  headroom: number;
}

/**
 * The caps in force: the configured ones (or, unset, the fd limit less its headroom, and half of that
 * per address), never above the fd limit less its headroom.
 */
export function streamCaps(
  configured: { maxStreams?: number; maxStreamsPerClient?: number },
  fd: number | undefined,
): StreamCapValues {
  const headroom = fd === undefined ? 0 : headroomFor(fd);
  const ceiling = fd === undefined ? Number.MAX_SAFE_INTEGER : Math.max(1, fd - headroom);
  const total = Math.min(configured.maxStreams ?? (fd === undefined ? TOTAL_WITHOUT_FD_LIMIT : ceiling), ceiling);
  const perClient = Math.min(configured.maxStreamsPerClient ?? Math.max(1, Math.floor(total / 2)), total);
  return { total, perClient, fdLimit: fd, headroom };
}

/**
 * Does this request ask for an SSE stream? Decided before any handler opens one, so a refusal opens
 * nothing. REST: GET /api/events. GraphQL (`queryText`: the GET's query, or the raw POST body): an
 * Accept naming text/event-stream; or no Accept, or one that takes any type (Yoga then answers a
 * subscription as SSE), when the text mentions a subscription at all (a query that merely says the word is counted
 * for the moment it is answered: harmless).
 */
export function asksForStream(pathname: string, accept: string | undefined, queryText?: () => string): boolean {
  if (pathname === "/api/events") return true;
  if (pathname !== "/graphql" && pathname !== "/graphql/stream") return false;
  const accepts = (accept ?? "").toLowerCase();
  if (accepts.includes("text/event-stream")) return true;
  if (accepts.trim() !== "" && !accepts.includes("*/*")) return false;
  return /subscription/i.test(queryText?.() ?? "");
}

/**
 * Does this MCP request open a standalone stream (a GET on /mcp asking for text/event-stream,
 * a resumption with Last-Event-ID too)? It is held as long as the session likes, as GET /api/events
 * is. A POST's answer stream lasts only as long as its one call.
 */
export function asksForMcpStream(method: string | undefined, pathname: string, accept: string | undefined): boolean {
  return (
    method === "GET" &&
    (pathname === "/mcp" || pathname === "/mcp/") &&
    (accept ?? "").toLowerCase().includes("text/event-stream")
  );
}

/** A2A methods whose answer is a stream held for the task's life (message/stream, resubscribe). */
export const A2A_STREAM_METHODS: ReadonlySet<string> = new Set(["SendStreamingMessage", "SubscribeToTask"]);

const RETRY_AFTER_S = 5;
const LOG_EVERY_MS = 10_000;

/** The address a cap counts by (an IPv4 address seen through an IPv6 socket counts as itself). */
const clientOf = (req: http.IncomingMessage): string =>
  (req.socket.remoteAddress ?? "unknown").replace(/^::ffff:(?=\d+\.)/, "");

export class StreamGate {
  private open = 0;
  private readonly byClient = new Map<string, number>();
  private readonly lastLog = new Map<"total" | "client", { at: number; suppressed: number }>();

  constructor(
    readonly caps: StreamCapValues,
    private readonly logLine: (line: string) => void,
    private readonly onRefused: (reason: "total" | "client") => void = () => {},
  ) {}

  get openStreams(): number {
    return this.open;
  }

  /** Takes a slot for `req` until `res` closes; a 429 or 503 HttpError when a cap is reached. */
  admit(req: http.IncomingMessage, res: http.ServerResponse): void {
    const client = clientOf(req);
    const mine = this.byClient.get(client) ?? 0;
    if (mine >= this.caps.perClient)
      throw this.refuse(
        "client",
        client,
        429,
        `This address already holds ${mine} streams, the most one client may; close one first.`,
      );
    if (this.open >= this.caps.total)
      throw this.refuse(
        "total",
        client,
        503,
        `The server holds ${this.open} streams, the most it serves at once; try again shortly.`,
      );
    this.open++;
    this.byClient.set(client, mine + 1);
    res.once("close", () => {
      this.open--;
      const left = (this.byClient.get(client) ?? 1) - 1;
      if (left <= 0) this.byClient.delete(client);
      else this.byClient.set(client, left);
    });
  }

  private refuse(reason: "total" | "client", client: string, status: number, message: string): HttpError {
    this.onRefused(reason);
    const now = Date.now();
    const last = this.lastLog.get(reason);
    if (!last || now - last.at >= LOG_EVERY_MS) {
      const cap =
        reason === "total" ? `the total cap of ${this.caps.total}` : `the cap of ${this.caps.perClient} per address`;
      const since = last && last.suppressed > 0 ? `; ${last.suppressed} more refused since the last line` : "";
      this.logLine(`streams: refused a stream from ${client} at ${cap} (${this.open} open)${since}`);
      this.lastLog.set(reason, { at: now, suppressed: 0 });
    } else {
      last.suppressed++;
    }
    return new HttpError(status, message, { retry_after_s: RETRY_AFTER_S }, { "retry-after": String(RETRY_AFTER_S) });
  }
}

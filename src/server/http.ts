// One node:http server. Every request is parsed inside the error handling, passes the access
// check (src/server/access.ts: Host, Origin/CORS, token, body size and type) and, when it asks for
// an SSE stream, the stream caps (src/server/stream-caps.ts), then goes to the
// first handler whose path matches: /api/* to the one REST router (compat/index.ts: every route
// record, docs/contract.md's exactly), /graphql and /graphql/stream to GraphQL. Listens on 127.0.0.1 unless configured otherwise.
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { App } from "../app.ts";
import { restRouter } from "../../compat/index.ts";
import { MethodNotAllowed, type CompatRequest, type CompatResponse, type Router } from "../../compat/router.ts";
import type { RouteRecord } from "../../compat/route.ts";
import { idempotent } from "../../compat/idempotent.ts";
import { HttpError, sendError, sendJson, toErrorResponse } from "../http/http-error.ts";
import { createGraphQLHandler, isGraphQLPath } from "./graphql/yoga.ts";
import { AccessGate, principalOf } from "./access.ts";
import { TokenStreams } from "./token-streams.ts";
import { readForm, readJson } from "../http/body.ts";
import { isConsolePath, serveConsole } from "../../console/serve.ts";
import { OPS_PATHS, serveOps, whileStopping } from "./health.ts";
import { observeHttp } from "../telemetry/metrics.ts";
import { trackInFlight } from "./shutdown.ts";
import { writeSse } from "../http/sse/node-writer.ts";
import { refuseUnstorable } from "../http/unstorable-text.ts";
import { asksForMcpStream, asksForStream, fdLimit, StreamGate, streamCaps } from "./stream-caps.ts";
import { neededScope } from "./route-scopes.ts";
import { createMcpDoor } from "./mcp/index.ts";
import { createA2aDoor } from "./a2a/index.ts";

const READ_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** One entry per path family; the first whose `matches` is true serves the request. */
interface Handler {
  matches(pathname: string): boolean;
  serve(req: http.IncomingMessage, res: http.ServerResponse, url: URL): void | Promise<void>;
}

/**
 * The request target as a URL. Origin-form ("/path?query") is read against a fixed base, never as
 * "//host" (which is how "//[" used to crash the process). Refused with a 400: a path that starts
 * with "//", a "%" not followed by two hex digits, anything but origin-form or absolute http(s)-form.
 */
export function parseTarget(target: string | undefined): URL {
  const raw = target ?? "/";
  let url: URL | undefined;
  try {
    if (raw.startsWith("/") && !raw.startsWith("//")) url = new URL(`http://crows.invalid${raw}`);
    else if (/^https?:\/\//i.test(raw)) url = new URL(raw);
  } catch {
    url = undefined;
  }
  if (!url) throw new HttpError(400, "The request target must be a path such as /api/lists.");
  if (/%(?![0-9a-fA-F]{2})/.test(url.pathname)) throw new HttpError(400, "The path has a malformed percent-encoding.");
  return url;
}

export interface RunningServer {
  server: http.Server;
  url: string;
  port: number;
  /**
   * Stops accepting (a request on a kept-alive connection gets a 503 with Retry-After), ends open
   * streams, answers the requests in flight, then waits for the flock's in-flight writes. Idempotent.
   */
  close(): Promise<void>;
}

/**
 * Node's timers for a request on its way in: the whole request (headers and body) within
 * CROWS_REQUEST_TIMEOUT_MS, its headers within 20 s of that, looked at a few times per period.
 */
function arrivalTimes(requestTimeout: number): {
  headersTimeout: number;
  requestTimeout: number;
  connectionsCheckingInterval: number;
} {
  return {
    requestTimeout,
    headersTimeout: Math.min(20_000, requestTimeout),
    connectionsCheckingInterval: Math.max(50, Math.min(2_000, Math.floor(requestTimeout / 4))),
  };
}

export async function startServer(app: App): Promise<RunningServer> {
  const router = restRouter();
  const tokenStreams = new TokenStreams(app.tokens, app.bus, app.config.heartbeatMs);
  const scopeOf = (method: string, pathname: string) => neededScope(router, method, pathname);
  const gate = new AccessGate(app.config, scopeOf, app.tokens, tokenStreams);
  const streams = new StreamGate(streamCaps(app.config, fdLimit()), app.logLine, (reason) =>
    app.metrics.sseRefused.inc({ reason }),
  );
  app.metrics.fdLimit.set(streams.caps.fdLimit ?? 0);
  for (const cap of ["total", "perClient", "headroom"] as const)
    app.metrics.sseCaps.set({ cap: cap === "perClient" ? "per_client" : cap }, streams.caps[cap]);
  const mcp = createMcpDoor(app);
  let baseUrl = ""; // known once listening; the agent card names it
  const a2a = createA2aDoor(app, () => app.config.webhooks.publicUrl ?? baseUrl, streams);
  const handlers: Handler[] = [
    { matches: mcp.matches, serve: (req, res) => mcp.serve(req, res) },
    { matches: a2a.matches, serve: (req, res) => a2a.serve(req, res) },
    {
      // Every REST route, and the decide links' pages; an unknown path under /api is the router's 404.
      matches: (p) => p === "/api" || p.startsWith("/api/") || router.onPath(p).length > 0,
      serve: (req, res, url) => serveCompat(app, router, req, res, url),
    },
    { matches: isGraphQLPath, serve: createGraphQLHandler(app, { streams }) },
    { matches: isConsolePath, serve: (req, res, url) => serveConsole(req, res, url, app.logLine) },
    { matches: (p) => OPS_PATHS.has(p), serve: (req, res, url) => serveOps(app, req, res, url.pathname) }, // behind the gate too
  ];
  const notFound = () => new HttpError(404, "Not found. The REST API lives under /api, GraphQL at /graphql.");

  let stopping = false;
  // requireHostHeader off: a request without Host reaches the access check and gets its JSON 421.
  // A request must arrive whole in CROWS_REQUEST_TIMEOUT_MS (Node's default is 5 minutes): a client
  // that stops halfway through its headers or body holds a connection that long, then gets its 408.
  const options = { requireHostHeader: false, ...arrivalTimes(app.config.requestTimeoutMs) };
  const server = http.createServer(options, (req, res) => {
    if (stopping) return sendError(res, whileStopping());
    void (async () => {
      try {
        const url = parseTarget(req.url);
        if ((await gate.admit(req, res, url)) === "answered") return;
        // A fenced data folder (gone or replaced) takes no more writes: a 503 before anything runs.
        if (!READ_METHODS.has(req.method ?? "GET")) app.database.health.assertWritable();
        // A 429 or 503 past a stream cap; a GraphQL subscription takes its slot once its body is read.
        if (
          (!isGraphQLPath(url.pathname) && asksForStream(url.pathname, req.headers.accept)) ||
          asksForMcpStream(req.method, url.pathname, req.headers.accept)
        )
          streams.admit(req, res);
        const handler = handlers.find((h) => h.matches(url.pathname));
        if (!handler) throw notFound();
        await handler.serve(req, res, url);
      } catch (error) {
        app.database.health.note(error);
        sendError(res, error, app.logLine);
      }
    })();
  });
  // A request the HTTP parser itself rejects (a broken request line or header) still gets JSON.
  server.on("clientError", (error: NodeJS.ErrnoException, socket) => {
    if (!socket.writable || error.code === "ECONNRESET") {
      socket.destroy();
      return;
    }
    const [status, message] =
      error.code === "HPE_HEADER_OVERFLOW"
        ? [431, "The request headers are too large."]
        : error.code === "ERR_HTTP_REQUEST_TIMEOUT"
          ? [408, "The request took too long to arrive."]
          : error.code === "HPE_CHUNK_EXTENSIONS_OVERFLOW"
            ? [413, "The chunk extensions are too large."]
            : [400, "The request is not valid HTTP."];
    const body = JSON.stringify({ message });
    const reason = http.STATUS_CODES[status];
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  });
  server.keepAliveTimeout = 5_000;
  observeHttp(app.metrics, server, router);
  const inFlight = trackInFlight(server);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(app.config.port, app.config.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = app.config.host.includes(":") ? `[${app.config.host}]` : app.config.host;
  const url = `http://${host}:${port}`;
  baseUrl = url;
  await app.webhooks.sender.start(url); // decide links point here unless CROWS_PUBLIC_URL says otherwise
  let closing: Promise<void> | undefined;
  return {
    server,
    port,
    url,
    close: () =>
      (closing ??= (async () => {
        stopping = true;
        tokenStreams.close();
        await mcp.close(); // its streams end with their sessions
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        app.log.close(); // ends every open SSE stream and subscription
        server.closeIdleConnections();
        await inFlight.idle(10_000); // answered before the flock stops, so a list posted just now is kept
        await app.quiesce();
        server.closeAllConnections();
        await stopped;
      })()),
  };
}

async function serveCompat(
  app: App,
  router: Router<RouteRecord>,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  url: URL,
): Promise<void> {
  const abort = new AbortController();
  res.on("close", () => abort.abort());
  let response: CompatResponse;
  try {
    const { route, params } = router.match(req.method ?? "GET", url.pathname);
    if (!route.page) {
      refuseUnstorable(params);
      refuseUnstorable(Object.fromEntries(url.searchParams));
    }
    const request: CompatRequest = {
      method: req.method ?? "GET",
      path: url.pathname,
      query: url.searchParams,
      headers: req.headers as Record<string, string | undefined>,
      params,
      json: () => readJson(req),
      ...(route.page ? { form: () => readForm(req) } : {}),
      signal: abort.signal,
      principal: principalOf(req),
    };
    // A page (a decide link) reads nothing but its signed path: no Idempotency-Key applies.
    response = route.page
      ? await route.handle(app, request)
      : await idempotent(app, request, (r) => route.handle(app, r));
  } catch (error) {
    app.database.health.note(error);
    if (error instanceof MethodNotAllowed && error.bare) response = { status: 405, headers: error.headers };
    else {
      const { status, body, headers } = toErrorResponse(error, app.logLine);
      response = { status, json: body, headers };
    }
  }
  if ("stream" in response) {
    await writeSse(res, response.stream, response.init);
    return;
  }
  if ("page" in response) {
    res.writeHead(response.status, response.headers).end(req.method === "HEAD" ? undefined : response.page);
    return;
  }
  const headers: Record<string, string> = { ...response.headers };
  if (response.json === undefined) {
    res.writeHead(response.status, headers).end();
    return;
  }
  sendJson(res, response.status, response.json, headers);
}

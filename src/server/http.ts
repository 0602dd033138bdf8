// One node:http server, dispatching by prefix: /api/* to the compat layer (EVENTS.md, exact),
// everything else to GraphQL (Yoga at /graphql with GraphiQL and its own SSE; the graphql-sse
// protocol at /graphql/stream). Listens on 127.0.0.1 unless configured otherwise.
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { App } from "../app.ts";
import { compatRouter } from "../../compat/index.ts";
import type { CompatRequest, CompatResponse } from "../../compat/router.ts";
import { HttpError, toErrorResponse } from "../../compat/http-error.ts";
import { createGraphQLHandler } from "./graphql.ts";
import { serveOps, refuseWhileStopping } from "../ops/health.ts";
import { observeHttp } from "../ops/metrics.ts";
import { trackInFlight } from "../ops/shutdown.ts";
import { describeError } from "../ops/describe-error.ts";

const MAX_BODY_BYTES = 1_000_000;

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

export async function startServer(app: App): Promise<RunningServer> {
  const router = compatRouter();
  const graphql = createGraphQLHandler(app);
  let stopping = false;
  const server = http.createServer((req, res) => {
    if (stopping) return refuseWhileStopping(res);
    const url = new URL(req.url ?? "/", "http://localhost");
    if (serveOps(app, req, res, url.pathname)) return;
    if (url.pathname === "/api" || url.pathname.startsWith("/api/")) {
      void serveCompat(app, router, req, res, url);
    } else {
      graphql(req, res);
    }
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
  let closing: Promise<void> | undefined;
  return {
    server,
    port,
    url: `http://${host}:${port}`,
    close: () =>
      (closing ??= (async () => {
        stopping = true;
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
  router: ReturnType<typeof compatRouter>,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  url: URL,
): Promise<void> {
  const abort = new AbortController();
  res.on("close", () => abort.abort());
  let response: CompatResponse;
  try {
    const { route, params } = router.match(req.method ?? "GET", url.pathname);
    const request: CompatRequest = {
      method: req.method ?? "GET",
      path: url.pathname,
      query: url.searchParams,
      headers: req.headers as Record<string, string | undefined>,
      params,
      json: () => readJson(req),
      signal: abort.signal,
    };
    response = await route.handle(app, request);
  } catch (error) {
    const { status, body } = toErrorResponse(error, app.logLine);
    response = { status, json: body };
  }
  if ("stream" in response) {
    res.writeHead(response.init.status, response.init.headers);
    res.flushHeaders();
    try {
      for await (const chunk of response.stream) {
        if (!res.write(chunk)) await new Promise((resolve) => res.once("drain", resolve));
      }
    } catch (error) {
      app.logLine(`compat: stream ended with an error: ${describeError(error)}`);
    } finally {
      res.end();
    }
    return;
  }
  const headers: Record<string, string> = { ...response.headers };
  if (response.json === undefined) {
    res.writeHead(response.status, headers).end();
    return;
  }
  const body = JSON.stringify(response.json);
  res
    .writeHead(response.status, { "content-type": "application/json; charset=utf-8", "content-length": String(Buffer.byteLength(body)), ...headers })
    .end(body);
}

async function readJson(req: http.IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new HttpError(400, `The body is larger than ${MAX_BODY_BYTES} bytes.`);
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  if (text.trim() === "") throw new HttpError(400, "The body is empty; send a JSON object.");
  try {
    return JSON.parse(text);
  } catch {
    throw new HttpError(400, "The body is not valid JSON.");
  }
}

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
import { writeSse } from "./sse-writer.ts";

const MAX_BODY_BYTES = 1_000_000;

export interface RunningServer {
  server: http.Server;
  url: string;
  port: number;
  /** Stops accepting, ends open streams, waits for in-flight writes. Idempotent. */
  close(): Promise<void>;
}

export async function startServer(app: App): Promise<RunningServer> {
  const router = compatRouter();
  const graphql = createGraphQLHandler(app);
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    if (url.pathname === "/api" || url.pathname.startsWith("/api/")) {
      void serveCompat(app, router, req, res, url);
    } else {
      graphql(req, res);
    }
  });
  server.keepAliveTimeout = 5_000;
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
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        app.log.close(); // ends every open SSE stream and subscription
        server.closeIdleConnections();
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
    await writeSse(res, response.stream, response.init);
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

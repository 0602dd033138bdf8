// GET /healthz (the process answers), GET /readyz (the database answers with the migrated schema,
// writes are not failing (src/storage/storage-health.ts), Redis is connected when configured; 503
// otherwise) and GET /metrics (Prometheus text). The
// dispatcher in src/server/http.ts hands these paths here after its access check, so with
// CROWS_TOKEN set they need the token like everything else.
import type http from "node:http";
import type { App } from "../app.ts";
import { HttpError, sendJson } from "../http/http-error.ts";

export const OPS_PATHS = new Set(["/healthz", "/readyz", "/metrics"]);

/** Answers an operations path; a refusal or a failure is thrown to the server's one error handler. */
export async function serveOps(
  app: App,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  path: string,
): Promise<void> {
  if (req.method !== "GET" && req.method !== "HEAD") {
    throw new HttpError(405, `${req.method} is not allowed on ${path}.`, {}, { allow: "GET, HEAD" });
  }
  if (path === "/healthz") {
    send(res, 200, { status: "ok", pid: process.pid, uptime_s: Math.round(process.uptime()) });
    return;
  }
  if (path === "/readyz") {
    const checks = await readiness(app);
    const ready = Object.values(checks).every((c) => c === "ok");
    send(
      res,
      ready ? 200 : 503,
      { status: ready ? "ready" : "not ready", checks },
      ready ? {} : { "retry-after": "5" },
    );
    return;
  }
  const text = await app.metrics.registry.metrics();
  res.writeHead(200, {
    "content-type": app.metrics.registry.contentType,
    "content-length": String(Buffer.byteLength(text)),
    "cache-control": "no-store",
  });
  res.end(req.method === "HEAD" ? undefined : text);
}

/**
 * Each check is "ok" or why not. Migrations are applied before the app exists (openDatabase), so a
 * read of the event table answering proves both the connection and the migrated schema.
 */
export async function readiness(app: App): Promise<Record<string, string>> {
  const checks: Record<string, string> = {};
  try {
    await withTimeout(app.prisma.event.findFirst({ select: { id: true } }), 2000);
    checks.database = "ok";
  } catch (error) {
    checks.database = (error as Error).message === "timeout" ? "no answer within 2 s" : "unreachable";
  }
  checks.storage = app.database.health.check();
  if (app.config.redisUrl) checks.redis = app.bus.isConnected?.() === false ? "not connected" : "ok";
  return checks;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error("timeout")), ms))),
  ]).finally(() => clearTimeout(timer));
}

function send(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  sendJson(res, status, body, { "cache-control": "no-store", ...headers }, res.req?.method === "HEAD");
}

/** What a request gets while the server shuts down: a 503 the client can retry, and no keep-alive. */
export const whileStopping = () =>
  new HttpError(
    503,
    "The server is shutting down; try again in a moment.",
    {},
    { "retry-after": "5", connection: "close" },
  );

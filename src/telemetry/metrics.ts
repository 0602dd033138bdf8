// Prometheus metrics through prom-client, one registry per App (tests run several in one process).
// What is counted and why lives in docs/operations.md ("Metrics"). Label values are bounded: routes
// come from the route table, GraphQL fields from the schema, event names from the contract, backends
// from configuration; nothing a client chooses freely becomes a label.
import type http from "node:http";
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import { getOperationAST, type DocumentNode } from "graphql";
import type { Model, ModelReply, ModelRequest } from "../models/model.ts";
import type { Classifier, AskRequest, Answer } from "../classifier/jev.ts";
import type { StoredEvent } from "../log/event-log.ts";

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export interface Metrics {
  readonly registry: Registry;
  readonly httpRequests: Counter<"route" | "method" | "status">;
  readonly httpDuration: Histogram<"route" | "method">;
  readonly sseOpen: Gauge<"kind">;
  /** Streams refused at a cap: per client address, or the total (src/server/stream-caps.ts). */
  readonly sseRefused: Counter<"reason">;
  /** The caps in force and what they were derived from: total, per_client, headroom. */
  readonly sseCaps: Gauge<"cap">;
  /** The process's soft limit on open files (0 where it cannot be read). */
  readonly fdLimit: Gauge;
  readonly graphqlOperations: Counter<"type" | "field" | "outcome">;
  readonly eventsAppended: Counter<"name">;
  readonly verdicts: Counter<"outcome">;
  readonly modelFlights: Counter<"backend" | "role" | "outcome">;
  readonly modelDuration: Histogram<"backend" | "outcome">;
  readonly tokens: Counter<"backend" | "role" | "direction">;
  readonly classifierCalls: Counter<"backend" | "outcome">;
  /** Set once the app exists: counts approvals still waiting for the owner at scrape time. */
  pendingApprovals?: () => Promise<number>;
}

export function createMetrics(options: { processMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (options.processMetrics) collectDefaultMetrics({ register: registry, prefix: "crows_" });
  const registers = [registry];
  const metrics: Metrics = {
    registry,
    httpRequests: new Counter({
      name: "crows_http_requests_total",
      help: "HTTP requests answered, by route, method and status.",
      labelNames: ["route", "method", "status"],
      registers,
    }),
    httpDuration: new Histogram({
      name: "crows_http_request_duration_seconds",
      help: "Time to answer an HTTP request (streams excluded), by route.",
      labelNames: ["route", "method"],
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    sseOpen: new Gauge({
      name: "crows_sse_streams_open",
      help: "Server-sent event streams open now (api: /api/events, graphql: subscriptions).",
      labelNames: ["kind"],
      registers,
    }),
    sseRefused: new Counter({
      name: "crows_sse_streams_refused_total",
      help: "SSE streams refused at a cap, by reason (client: the per-address cap, total).",
      labelNames: ["reason"],
      registers,
    }),
    sseCaps: new Gauge({
      name: "crows_sse_stream_caps",
      help: "The SSE stream caps in force (total, per_client) and the descriptors kept free of streams (headroom).",
      labelNames: ["cap"],
      registers,
    }),
    fdLimit: new Gauge({
      name: "crows_fd_limit",
      help: "The process's soft limit on open files (0: unknown).",
      registers,
    }),
    graphqlOperations: new Counter({
      name: "crows_graphql_operations_total",
      help: "GraphQL operations executed, by type, root field and outcome.",
      labelNames: ["type", "field", "outcome"],
      registers,
    }),
    eventsAppended: new Counter({
      name: "crows_events_appended_total",
      help: "Events this process appended to the durable log, by name.",
      labelNames: ["name"],
      registers,
    }),
    verdicts: new Counter({
      name: "crows_verdicts_total",
      help: "Verdicts recorded, by outcome (approved, rejected, auto, timeout).",
      labelNames: ["outcome"],
      registers,
    }),
    modelFlights: new Counter({
      name: "crows_model_flights_total",
      help: "Model calls, by backend, role and outcome (ok, error, aborted).",
      labelNames: ["backend", "role", "outcome"],
      registers,
    }),
    modelDuration: new Histogram({
      name: "crows_model_flight_duration_seconds",
      help: "Model call latency, by backend and outcome.",
      labelNames: ["backend", "outcome"],
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    tokens: new Counter({
      name: "crows_model_tokens_total",
      help: "Tokens used by model calls, by backend, role and direction (input, output).",
      labelNames: ["backend", "role", "direction"],
      registers,
    }),
    classifierCalls: new Counter({
      name: "crows_classifier_calls_total",
      help: "Classifier calls, by backend and outcome (answered, unsure).",
      labelNames: ["backend", "outcome"],
      registers,
    }),
  };
  new Gauge({
    name: "crows_approvals_pending",
    help: "Approvals waiting for the owner's verdict.",
    registers,
    async collect() {
      if (metrics.pendingApprovals) this.set(await metrics.pendingApprovals().catch(() => 0));
    },
  });
  return metrics;
}

/** Counts one appended event (and a verdict by its outcome). Never throws: the append already committed. */
export function countAppended(metrics: Metrics, event: StoredEvent): void {
  try {
    metrics.eventsAppended.inc({ name: event.name });
    if (event.name === "verdict") {
      const verdict = (JSON.parse(event.payload) as { verdict?: unknown }).verdict;
      metrics.verdicts.inc({ outcome: typeof verdict === "string" ? verdict : "unknown" });
    }
  } catch {
    // a metric is never worth a failed request
  }
}

export interface FlightReport {
  request: ModelRequest;
  backend: string;
  outcome: "ok" | "error" | "aborted";
  seconds: number;
  error?: unknown;
}

/** The model, counted: every call by backend, role and outcome, its latency and its tokens. */
export function countedModel(model: Model, metrics: Metrics, onFailed: (report: FlightReport) => void): Model {
  return {
    get name() {
      return model.name;
    },
    async generate(request: ModelRequest): Promise<ModelReply> {
      const started = process.hrtime.bigint();
      const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
      const backend = model.name;
      try {
        const reply = await model.generate(request);
        metrics.modelFlights.inc({ backend, role: request.role, outcome: "ok" });
        metrics.modelDuration.observe({ backend, outcome: "ok" }, seconds());
        metrics.tokens.inc({ backend, role: request.role, direction: "input" }, reply.usage.inputTokens);
        metrics.tokens.inc({ backend, role: request.role, direction: "output" }, reply.usage.outputTokens);
        return reply;
      } catch (error) {
        const outcome = request.signal?.aborted ? "aborted" : "error";
        const elapsed = seconds();
        metrics.modelFlights.inc({ backend, role: request.role, outcome });
        metrics.modelDuration.observe({ backend, outcome }, elapsed);
        if (outcome === "error") onFailed({ request, backend, outcome, seconds: elapsed, error });
        throw error;
      }
    },
  };
}

/** The classifier, counted: a call whose every answer is "unsure" counts as unsure. */
export function countedClassifier(classifier: Classifier, metrics: Metrics): Classifier {
  return {
    backend: classifier.backend,
    model: classifier.model,
    async ask(request: AskRequest): Promise<Record<string, Answer>> {
      const answers = await classifier.ask(request);
      const all = Object.values(answers);
      const outcome = all.length > 0 && all.every((a) => a.type === "unsure") ? "unsure" : "answered";
      metrics.classifierCalls.inc({ backend: classifier.backend, outcome });
      return answers;
    },
  };
}

const STREAM_PATHS = new Set(["/api/events", "/graphql/stream"]);

/**
 * Counts every request the server answers: route, method, status, latency, and open streams. It
 * listens beside the dispatcher (a second 'request' listener), so routing stays in one place.
 */
export function observeHttp(metrics: Metrics, server: http.Server, router: RouteTable): void {
  const routeOf = (method: string, path: string): string => {
    if (path === "/api" || path.startsWith("/api/")) {
      try {
        return router.match(method, path).route.path;
      } catch {
        return "/api/unknown";
      }
    }
    return KNOWN_PATHS.has(path) ? path : "other";
  };
  server.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
    const started = process.hrtime.bigint();
    const method = METHODS.has(req.method ?? "") ? (req.method as string) : "other";
    let path = "/";
    try {
      path = new URL(req.url ?? "/", "http://localhost").pathname;
    } catch {
      path = "?";
    }
    const route = routeOf(method, path);
    // Compat streams are GETs; GraphQL subscriptions over SSE are POSTs that accept event streams.
    const stream = (method === "GET" && STREAM_PATHS.has(path)) || /text\/event-stream/.test(req.headers.accept ?? "");
    const kind = path.startsWith("/api") ? "api" : "graphql";
    if (stream) metrics.sseOpen.inc({ kind });
    res.once("close", () => {
      if (stream) metrics.sseOpen.dec({ kind });
      metrics.httpRequests.inc({ route, method, status: String(res.statusCode) });
      if (!stream) metrics.httpDuration.observe({ route, method }, Number(process.hrtime.bigint() - started) / 1e9);
    });
  });
}

interface RouteTable {
  match(method: string, path: string): { route: { path: string } };
}

const KNOWN_PATHS = new Set(["/", "/graphql", "/graphql/stream", "/healthz", "/readyz", "/metrics"]);
const METHODS = new Set(["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"]);

/** A Yoga/envelop plugin counting operations by type, root field and outcome. */
export function graphqlMetricsPlugin(metrics: Metrics) {
  return {
    onExecute({ args }: { args: { document: DocumentNode; operationName?: string | null } }) {
      const labels = operationLabels(args.document, args.operationName);
      return {
        onExecuteDone({ result }: { result: unknown }) {
          const errors = (result as { errors?: unknown[] } | undefined)?.errors;
          metrics.graphqlOperations.inc({ ...labels, outcome: errors && errors.length > 0 ? "error" : "ok" });
        },
      };
    },
    onSubscribe({ args }: { args: { document: DocumentNode; operationName?: string | null } }) {
      metrics.graphqlOperations.inc({ ...operationLabels(args.document, args.operationName), outcome: "subscribed" });
    },
  };
}

function operationLabels(document: DocumentNode, operationName?: string | null): { type: string; field: string } {
  try {
    const operation = getOperationAST(document, operationName ?? undefined);
    const first = operation?.selectionSet.selections.find((s) => s.kind === "Field");
    return {
      type: operation?.operation ?? "unknown",
      field: first && first.kind === "Field" ? first.name.value : "unknown",
    };
  } catch {
    return { type: "unknown", field: "unknown" };
  }
}

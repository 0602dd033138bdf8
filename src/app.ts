// The application container: configuration, storage, the durable log and its live bus, the model
// and the classifier, and the engines built on them. HTTP lives outside (src/server, compat/,
// schema/); tests build an App in-process and may hand in their own model or classifier.
import path from "node:path";
import type { Config } from "./base/config.ts";
import type { PrismaClient } from "./generated/prisma/client.ts";
import { commitOrderLock, openDatabase, ensureDataDir, type DatabaseHandle } from "./storage/db.ts";
import { EventLog } from "./log/event-log.ts";
import { createLocalBus, createRedisBus, type Bus } from "./log/bus.ts";
import type { Model } from "./models/model.ts";
import type { Classifier } from "./classifier/jev.ts";
import { createModel, ProviderPacer, ProviderModel } from "./models/index.ts";
import { createClassifier } from "./classifier/index.ts";
import { Flock } from "./flock/flock.ts";
import { PrismaCrewDirectory } from "./flock/crew.ts";
import { NestStore } from "./nests/store.ts";
import { CrowRegistry } from "./nests/registry.ts";
import type { NestChat } from "./nests/chat.ts";
import { createNestChat } from "./nests/wiring.ts";
import { createMetrics, countAppended, countedModel, countedClassifier, type Metrics } from "./telemetry/metrics.ts";
import { eventLogLine } from "./telemetry/event-lines.ts";
import { describeError } from "./base/describe-error.ts";
import { TokenStore } from "./access/token-store.ts";
import { FlightBoard } from "./flock/flight-board.ts";
import { observeProviderWeather } from "./telemetry/provider-metrics.ts";
import { Webhooks, webhookTypeOf } from "./webhooks/index.ts";
import { ToolServers } from "./tools/catalog.ts";
import { ToolServerRegistry } from "./tools/registry.ts";
import { observeToolServers } from "./telemetry/tool-metrics.ts";
import type { ToolCatalog } from "./tools/types.ts";

export interface AppDeps {
  model?: Model;
  classifier?: Classifier;
  /** Where diagnostics go (never keys or prompts); stderr by default. */
  logLine?: (line: string) => void;
  /** Where counts go; a fresh registry by default (`crows serve` adds process metrics). */
  metrics?: Metrics;
  /** The tools crows may call (docs/tools.md); none: the owner's tool servers (app.tools). */
  tools?: ToolCatalog;
}

export interface App {
  readonly config: Config;
  readonly prisma: PrismaClient;
  /** Everything openDatabase opened (the client above, the log's store, the read cache's version). */
  readonly database: DatabaseHandle;
  readonly bus: Bus;
  readonly log: EventLog;
  readonly model: Model;
  readonly classifier: Classifier;
  readonly flock: Flock;
  readonly nests: NestStore;
  readonly registry: CrowRegistry;
  /** Nest conversations: posting, tagging, the must-respond loop, asks, the watchdog. */
  readonly chat: NestChat;
  /** Prometheus metrics (GET /metrics). */
  readonly metrics: Metrics;
  /** Named access tokens (src/access/token-store.ts). */
  readonly tokens: TokenStore;
  /** Flights waiting on the provider, and their text as it streams (a view, never stored). */
  readonly board: FlightBoard;
  /** Webhook endpoints and the sender of their deliveries (started by the server, which knows its URL). */
  readonly webhooks: Webhooks;
  /** The MCP tool servers the owner connected, and the ToolCatalog flights call (src/tools/). */
  readonly tools: ToolServers;
  logLine(line: string): void;
  /** Stops starting new work and waits for the writes already under way. */
  quiesce(): Promise<void>;
  /** quiesce(), then closes the bus and the database. Idempotent. */
  close(): Promise<void>;
}

export async function createApp(config: Config, deps: AppDeps = {}): Promise<App> {
  ensureDataDir(config.dataDir);
  const logLine = deps.logLine ?? ((line: string) => console.error(line));
  const database = await openDatabase(config, logLine);
  // What has started, stopped in reverse if a later step fails: a failed start leaves nothing open.
  const started: Array<() => unknown> = [() => database.close()];
  try {
    // Before anything appends: an event a webhook wants commits with its delivery rows.
    database.events.setOutbox(webhookTypeOf);
    const prisma = database.prisma;
    const bus = config.redisUrl ? await createRedisBus(config.redisUrl, logLine) : createLocalBus();
    started.push(() => bus.close());
    const metrics = deps.metrics ?? createMetrics();
    const lock = commitOrderLock(config);
    let webhooks: Webhooks | undefined;
    const log = new EventLog(database, bus, {
      ...(lock ? { commitOrderLock: lock } : {}),
      onAppended: (event) => {
        database.health.recovered(); // a write went through: storage trouble, if any, is over
        countAppended(metrics, event);
        const line = eventLogLine(event);
        if (line) logLine(line);
        webhooks?.appended(event);
      },
    });
    started.push(async () => {
      await log.drain();
      log.close();
    });
    // Counted at the interfaces, so every provider and backend is measured the same way.
    const board = new FlightBoard();
    const backend = deps.model ?? createModel(config, process.env, { logLine });
    // The classifier's System One calls have a gate of their own: a slow model never starves them.
    const classifierGate =
      config.jev === "systemone"
        ? new ProviderPacer("systemone", {
            concurrency: config.jevConcurrency,
            circuitFailures: config.modelCircuitFailures,
            policy: {
              initialIntervalMs: config.modelBackoffMs,
              backoffCoefficient: 2,
              maximumIntervalMs: config.modelBackoffMaxMs,
            },
          })
        : undefined;
    observeProviderWeather(
      metrics.registry,
      [
        ...(backend instanceof ProviderModel ? [{ label: "model" as const, gate: backend.gate }] : []),
        ...(classifierGate ? [{ label: "classifier" as const, gate: classifierGate }] : []),
      ],
      board,
    );
    const model = countedModel(backend, metrics, (flight) =>
      logLine(
        `model call failed: ${flight.request.role} ${flight.request.speaker} on ${flight.backend} after ${Math.round(flight.seconds * 1000)} ms: ${describeError(flight.error)}`,
      ),
    );
    const classifier = countedClassifier(
      deps.classifier ??
        createClassifier(
          config,
          prisma,
          (error) => logLine(`classifier: could not record answers: ${describeError(error)}`),
          classifierGate,
        ),
      metrics,
    );
    metrics.pendingApprovals = () => prisma.approval.count({ where: { status: "pending" } });
    const nests = new NestStore(prisma);
    const registry = new CrowRegistry(prisma, config.maxSpun);
    await nests.ensureDefault(); // todo always exists, before anything lists or posts to it
    const crew = new PrismaCrewDirectory(database, nests);
    const tools = new ToolServers(new ToolServerRegistry(prisma, log), {
      toolsDir: path.join(config.dataDir, "tools"),
    });
    started.push(() => tools.stop());
    observeToolServers(metrics.registry, tools);
    const flock = new Flock({
      config,
      prisma,
      log,
      trustReads: database.trustReads,
      bus,
      model,
      classifier,
      crew,
      logLine,
      board,
      // The owner's tool servers, unless a test brings its own catalog.
      tools: deps.tools ?? tools,
    });
    started.push(() => flock.stop());
    await flock.resume();
    webhooks = new Webhooks({
      config,
      prisma,
      store: database.webhooks,
      senderDatabase: database.senderDatabase,
      instanceId: flock.instanceId,
      logLine,
    });
    const chat = createNestChat({
      config,
      prisma,
      log,
      model,
      classifier,
      flock,
      nests,
      registry,
      logLine,
      tools: deps.tools ?? tools,
    });
    started.push(() => chat.stop());
    await chat.resume(); // open obligations of the must-respond loop, as flock.resume() does lists

    let quiescing: Promise<void> | undefined;
    let closing: Promise<void> | undefined;
    const app: App = {
      config,
      prisma,
      database,
      bus,
      log,
      model,
      classifier,
      flock,
      nests,
      registry,
      chat,
      metrics,
      tokens: new TokenStore(prisma, log, database.readVersion),
      board,
      webhooks,
      tools,
      logLine,
      quiesce: () =>
        (quiescing ??= (async () => {
          await chat.stop();
          await flock.stop();
          await tools.stop(); // after the flights: none is left calling a stopped server
          await log.drain();
          await webhooks!.sender.stop();
        })()),
      close: () =>
        (closing ??= (async () => {
          await app.quiesce();
          log.close();
          await bus.close();
          await database.close();
        })()),
    };
    return app;
  } catch (error) {
    for (const stop of started.reverse())
      await Promise.resolve()
        .then(stop)
        .catch(() => undefined);
    throw error;
  }
}

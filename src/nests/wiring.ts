// Wires nest conversations together: the posting path (chat.ts), the ask desk (asks.ts), the
// obligations that keep the loop's promises (obligations/), and the two listeners every stored
// message goes to, the must-respond loop (responders/) and the Sentry's watchdog (watchdog.ts).
// How they fit: docs/nests-chat.md.
import type { Config } from "../base/config.ts";
import type { PrismaClient } from "../generated/prisma/client.ts";
import type { EventLog } from "../log/event-log.ts";
import type { Classifier } from "../classifier/jev.ts";
import type { Model } from "../models/model.ts";
import type { Flock } from "../flock/flock.ts";
import { ToolFlights } from "../flock/tool-flight.ts";
import { toolFlightConfig } from "../base/tool-flight-config.ts";
import type { ToolCatalog } from "../tools/types.ts";
import { NestCrowTools } from "./responders/crow-tools.ts";
import { AskDesk } from "./asks.ts";
import { NestChat } from "./chat.ts";
import { Obligations } from "./obligations/index.ts";
import type { CrowRegistry } from "./registry.ts";
import { Responders } from "./responders/index.ts";
import type { NestStore } from "./store.ts";
import { Watchdog } from "./watchdog.ts";

export interface NestChatDeps {
  config: Config;
  prisma: PrismaClient;
  log: EventLog;
  model: Model;
  classifier: Classifier;
  flock: Flock;
  nests: NestStore;
  registry: CrowRegistry;
  logLine: (line: string) => void;
  /** The tool servers crows may call (docs/tools.md "Nest crows with tools"); none: no tools, as ever. */
  tools?: ToolCatalog;
}

export function createNestChat(deps: NestChatDeps): NestChat {
  const { config, prisma, log, classifier, nests, registry, flock, logLine } = deps;
  const chat = new NestChat({ config, prisma, log, classifier, nests, limiter: flock.limiter, logLine });
  const obligations = new Obligations(chat, { config, prisma, log, nests, instanceId: flock.instanceId, logLine });
  chat.setObligationHook(obligations);
  chat.setReplyHook(
    new AskDesk({
      log,
      gate: obligations,
      trust: flock.trust,
      registry,
      nests,
      windowMs: config.approvalWindowMs,
      logLine,
    }),
  );
  chat.onResume(() => obligations.resume());
  // The flock's one tool loop and call desk, stopped with the nest's background work; a crow's
  // calls are fenced by the obligation it answers under.
  const catalog = deps.tools;
  const flightConfig = toolFlightConfig(config);
  const tools = catalog
    ? new NestCrowTools({
        flightsFor: (owner, signal) =>
          new ToolFlights(catalog, flock.toolCalls, owner, deps.model, flightConfig, signal, logLine),
        leases: obligations,
        stopping: chat.signal,
        tokenBudget: config.tokenBudget,
      })
    : undefined;
  const responders = new Responders(chat, {
    model: deps.model,
    picker: flock.picker,
    registry,
    nests,
    obligations,
    logLine,
    ...(tools ? { tools } : {}),
  });
  obligations.setRunner(responders);
  chat.onPosted(responders.onPosted);
  const watchdog = new Watchdog(chat, { config, prisma, log, classifier, obligations });
  obligations.setWatcher(watchdog);
  chat.onPosted(watchdog.onPosted);
  return chat;
}

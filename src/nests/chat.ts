// Wires nest conversations together: the posting path (messages.ts), the ask desk that resolves
// owner replies inside the reply's transaction (asks.ts), and the two listeners every stored
// message goes to in the background, the must-respond loop (responders.ts) and the Sentry's
// watchdog (watchdog.ts). Obligations (obligations.ts) keep the loop's promises across restarts and
// instances: stored with each message that calls for a response, resumed at start, leased.
import type { Config } from "../base/config.ts";
import type { PrismaClient } from "../generated/prisma/client.ts";
import type { EventLog } from "../log/event-log.ts";
import type { Classifier } from "../classifier/jev.ts";
import type { Model } from "../models/model.ts";
import type { Flock } from "../flock/flock.ts";
import { AskDesk } from "./asks.ts";
import { NestChat } from "./messages.ts";
import { Obligations } from "./obligations.ts";
import type { CrowRegistry } from "./registry.ts";
import { Responders } from "./responders.ts";
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
}

export function createNestChat(deps: NestChatDeps): NestChat {
  const { config, prisma, log, classifier, nests, registry, flock, logLine } = deps;
  const chat = new NestChat({ config, prisma, log, classifier, nests, limiter: flock.limiter, logLine });
  chat.setReplyHook(new AskDesk({ log, trust: flock.trust, registry, nests, windowMs: config.approvalWindowMs, logLine }));
  const obligations = new Obligations(chat, { config, prisma, nests, instanceId: flock.instanceId, logLine });
  chat.setObligationHook(obligations);
  chat.onResume(() => obligations.resume());
  const responders = new Responders(chat, { model: deps.model, picker: flock.picker, registry, nests, obligations, logLine });
  obligations.setRunner(responders);
  chat.onPosted(responders.onPosted);
  const watchdog = new Watchdog(chat, { config, prisma, log, classifier, obligations });
  obligations.setWatcher(watchdog);
  chat.onPosted(watchdog.onPosted);
  return chat;
}

// What the flock is built from (FlockDeps) and what a list run borrows from it (FlockContext), in a
// file of their own so the flock, its list runs and their banter import it without a cycle.
import type { Config } from "../base/config.ts";
import type { PrismaClient } from "../generated/prisma/client.ts";
import type { EventLog } from "../log/event-log.ts";
import type { Bus } from "../log/bus.ts";
import type { Model } from "../models/model.ts";
import type { Classifier } from "../classifier/jev.ts";
import type { ApprovalDesk } from "./approvals.ts";
import type { CrewDirectory, CrewPicker } from "./crew.ts";
import type { TrustLedger } from "./trust.ts";
import type { FlightBoard } from "./flight-board.ts";
import type { ProviderWaits } from "./flight-watch.ts";
import type { TrustReads } from "../storage/trust-history.ts";

export interface FlockDeps {
  config: Config;
  prisma: PrismaClient;
  log: EventLog;
  /** The trust ledger's reads around Prisma (the database handle's). */
  trustReads: TrustReads;
  /** The log's bus: lets a waiting approval hear a verdict recorded by another instance. */
  bus?: Bus;
  model: Model;
  classifier: Classifier;
  crew: CrewDirectory;
  logLine: (line: string) => void;
  now?: () => number;
  /** Where flights waiting on the provider, and their streamed text, are shown. */
  board?: FlightBoard;
}

/** What a list run needs from the flock. */
export interface FlockContext extends FlockDeps {
  trust: TrustLedger;
  approvals: ApprovalDesk;
  picker: CrewPicker;
  signal: AbortSignal;
  /** Stored patience deadlines of flights waiting on the provider. */
  providerWaits: ProviderWaits;
}

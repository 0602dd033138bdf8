// ask_owner (docs/contract.md "Kinds", "resolved"; docs/flock.md §6): a decision only the owner can
// make, parked with an exact approval_phrase. An owner reply that refers_to the ask and whose
// trimmed, lowercased text equals the trimmed, lowercased phrase approves it; on the Sentry's
// watchdog ask the exact `retire <crow>` is a yes too. Anything else is not a yes, and an ask left
// unanswered past the approval window reads "rejected" (fail safe). `resolved` is computed
// whenever a record is read; the expiry itself is logged once, as `ask.expired`, by the ask's
// obligation (obligations/ask-expiry.ts), and an exact reply approves only while that is still open.
//
// The Sentry's ask counts once, at most once per ask, as an approval of Sentry|triage/watch; a
// second exact reply, any other reply and a timeout move nothing. Reinstate lifts the quarantine;
// retire deletes a spun crow from the registry or takes a persona crow out of the nest, and the
// quarantine mark stays.
import type { EventLog, Tx } from "../log/event-log.ts";
import type { TrustLedger } from "../flock/trust.ts";
import type { CrowRegistry } from "./registry.ts";
import type { NestStore } from "./store.ts";
import type { MessageRow } from "./message.ts";
import type { ReplyHook } from "./chat.ts";
import type { QuarantineStatus } from "./membership.ts";
import { watchStream } from "../base/streams.ts";
import { withActor, type Actor } from "../base/actor.ts";

export const WATCH_HOLDER = "Sentry";
export const WATCH_TASK_TYPE = "triage/watch";

/** Trimmed and lowercased: how both the reply and the phrase are compared. */
export function normalisePhrase(text: string): string {
  return text.trim().toLowerCase();
}

export const reinstatePhrase = (crow: string) => `reinstate ${crow}`;
export const retirePhrase = (crow: string) => `retire ${crow}`;

/** The ask's obligation: an exact reply closes it, unless the ask's expiry committed first. */
export interface AskGate {
  askAnswered(tx: Tx, askId: string, reply: MessageRow): Promise<boolean>;
}

export interface AskDeskDeps {
  log: EventLog;
  gate: AskGate;
  trust: TrustLedger;
  registry: CrowRegistry;
  nests: NestStore;
  windowMs: number;
  logLine: (line: string) => void;
}

type Decision = { action: "approve" } | { action: "reinstate" | "retire"; crow: string; quarantineId: number };

export class AskDesk implements ReplyHook {
  constructor(private readonly deps: AskDeskDeps) {}

  /**
   * Runs inside the reply's own transaction: marks the ask approved (only if it was still open,
   * so a second exact reply changes nothing), moves the Sentry's ledger record and the quarantine.
   * Returns the work that must follow the commit (registry and nest writes, trust.changed).
   */
  async inTx(tx: Tx, reply: MessageRow, actor: Actor | undefined): Promise<(() => Promise<void>) | null> {
    if (reply.author !== "owner" || reply.refersTo === "") return null;
    const ask = await tx.message.findUnique({ where: { id: reply.refersTo } });
    if (!ask || ask.kind !== "ask_owner" || ask.approvedAt) return null;
    // A reply after the window is too late: the ask already reads rejected, and stays so.
    if (reply.createdAt.getTime() > ask.createdAt.getTime() + this.deps.windowMs) return null;
    const decision = await this.decide(tx, ask, reply.text);
    if (!decision) return null;
    if (!(await this.deps.gate.askAnswered(tx, ask.id, reply))) return null;
    const marked = await tx.message.updateMany({
      where: { id: ask.id, approvedAt: null },
      data: { approvedAt: reply.createdAt, approvedBy: reply.id },
    });
    if (marked.count !== 1) return null;
    if (decision.action === "approve") return null;

    // The reply is the decision: its sender is the entry's actor and the trust change's.
    const change = await this.deps.trust.apply(
      tx,
      WATCH_HOLDER,
      WATCH_TASK_TYPE,
      "approved",
      ask.id,
      actor ?? null,
      reply.reason !== "" ? reply.reason : null, // the owner's reason, handed to the asker's record
    );
    const quarantine = await tx.quarantine.update({
      where: { id: decision.quarantineId },
      data:
        decision.action === "reinstate"
          ? { status: "reinstated" satisfies QuarantineStatus, liftedAt: reply.createdAt }
          : { retired: true },
    });
    const nestId = ask.nestId;
    return async () => {
      if (decision.action === "retire") await this.retire(decision.crow, quarantine.nestId);
      if (change) {
        const payload = {
          nest_id: nestId,
          holder: change.holder,
          task_type: change.taskType,
          from: change.from,
          to: change.to,
          ts: new Date().toISOString(),
        };
        await this.deps.log.append(watchStream(nestId), "trust.changed", withActor(payload, actor));
      }
    };
  }

  private async decide(tx: Tx, ask: MessageRow, replyText: string): Promise<Decision | null> {
    const said = normalisePhrase(replyText);
    const quarantine =
      ask.author === WATCH_HOLDER ? await tx.quarantine.findFirst({ where: { askMsgId: ask.id } }) : null;
    if (quarantine) {
      if (said === normalisePhrase(reinstatePhrase(quarantine.crow)))
        return { action: "reinstate", crow: quarantine.crow, quarantineId: quarantine.id };
      if (said === normalisePhrase(retirePhrase(quarantine.crow)))
        return { action: "retire", crow: quarantine.crow, quarantineId: quarantine.id };
      return null;
    }
    return said === normalisePhrase(ask.approvalPhrase) ? { action: "approve" } : null;
  }

  // The only hard kill, on the owner's explicit word: a spun crow leaves the registry (and every
  // core); a persona crow leaves this nest's core (in todo the quarantine row's `retired` mark
  // takes it out of the membership). The persona itself never dies.
  private async retire(crow: string, nestId: string): Promise<void> {
    if (await this.deps.registry.get(crow)) {
      await this.deps.registry.delete(crow);
      return;
    }
    await this.deps.nests.removeMember(nestId, crow);
  }
}

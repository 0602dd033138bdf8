// An obligation's stages, awaiting_claim -> claimed -> answered | declined, and the conditional
// writes that move it, each inside the transaction of the message that makes the move, so an
// answer to an obligation no longer open is refused and never stored (docs/nests-chat.md
// "Obligations: the loop's promises survive kill -9 and other instances").
import type { Config } from "../../base/config.ts";
import type { PrismaClient } from "../../generated/prisma/client.ts";
import type { EventLog, Tx } from "../../log/event-log.ts";
import { ConflictError } from "../../base/errors.ts";
import { SERVICE_ROLE_NAMES } from "../../base/roster.ts";
import { SERVER_VOICE, type MessageRecord, type MessageRow } from "../message.ts";
import type { NestStore } from "../store.ts";
import { FIRST_EPOCH, type ObligationFences } from "./fencing.ts";
import type { StaleEpochError } from "../../storage/fence.ts";

export const OPEN_STAGES = ["awaiting_claim", "claimed"] as const;
export type Outcome = "answered" | "declined";
export type ObligationRow = Awaited<ReturnType<PrismaClient["obligation"]["findUniqueOrThrow"]>>;
export type Within = (tx: Tx, row: MessageRow) => Promise<void>;

export interface ObligationsDeps {
  config: Config;
  prisma: PrismaClient;
  /** Where an ask's expiry is appended (ask-expiry.ts). */
  log: EventLog;
  nests: NestStore;
  instanceId: string;
  logLine: (line: string) => void;
  now?: () => number;
}

/**
 * Who must answer a stored message: the crow or role it is addressed to, "" for the room; null
 * when it calls for no response (not a request, or a request to the owner or the Sentry). A
 * nudge is no new promise: it rides the obligation of the request it refers to.
 */
export function respondentOf(message: { kind: string; to: string }): string | null {
  if (message.kind !== "request") return null;
  if (message.to === "owner" || message.to === "Sentry") return null;
  return message.to;
}

/** The id of the Sentry's inspection of a crow's claim or deliver. */
export const watchObligationId = (msgId: string) => `watch:${msgId}`;
export const WATCHER = "Sentry";

/** A crow's claim or deliver on something: the watchdog inspects it when it refers to a request. */
function mayBeWatched(message: { kind: string; author: string; refersTo: string }): boolean {
  if (message.kind !== "claim" && message.kind !== "deliver") return false;
  if (message.author === "owner" || message.author === SERVER_VOICE || SERVICE_ROLE_NAMES.includes(message.author))
    return false;
  return message.refersTo !== "";
}

/** What a move leaves for this instance to do: hold the obligations it made, arm or drop deadlines. */
/** The obligations' lease and deadline timers, as the stages and the ask expiry use them (index.ts gives them). */
export interface HeldTimers {
  /** This instance now drives `id` (it made it, so it holds its lease, at FIRST_EPOCH). */
  hold(id: string): void;
  leaseEnd(): Date;
  armAt(id: string, dueMs: number): void;
  /** The epochs this instance holds: every move it makes as a holder is fenced by them (fencing.ts). */
  fences: ObligationFences;
  /** A move was refused by the fence: this instance steps down from the obligation (Ownership). */
  fencedOut(error: StaleEpochError): void;
}

/**
 * After a holder's move matched no row: when the fence refused it (the obligation's epoch moved
 * past the one held here), this instance steps down and the message is not stored.
 */
export async function refuseIfStale(
  effects: Pick<HeldTimers, "fences" | "fencedOut">,
  tx: Tx,
  ids: string[],
): Promise<void> {
  const stale = await effects.fences.stale(tx, ids);
  if (!stale) return;
  effects.fencedOut(stale);
  throw new ConflictError(`${stale.fence.id} was taken over by another instance; this instance stepped down from it.`);
}

export interface StageEffects extends HeldTimers {
  disarm(requestId: string, respondent: string): void;
}

export class Stages {
  constructor(
    private readonly deps: ObligationsDeps,
    private readonly effects: StageEffects,
    private readonly now: () => number,
  ) {}

  private get instanceId(): string {
    return this.deps.instanceId;
  }

  /** The fence of a holder's move that may touch `ids` (fencing.ts). */
  private fence(ids: string[]) {
    return this.effects.fences.where(ids);
  }

  /** Stores what the message promises, owned by this instance: its response, the Sentry's inspection. */
  async inTx(tx: Tx, row: MessageRow, context: { callsForResponse: boolean }): Promise<void> {
    const respondent = context.callsForResponse ? respondentOf(row) : null;
    if (respondent !== null) {
      await tx.obligation.create({
        data: {
          id: row.id,
          requestId: row.id,
          nestId: row.nestId,
          respondent,
          ownerId: this.instanceId,
          leaseUntil: this.effects.leaseEnd(),
          epoch: FIRST_EPOCH,
        },
      });
      this.effects.hold(row.id);
    }
    if (mayBeWatched(row)) {
      const referent = await tx.message.findUnique({
        where: { id: row.refersTo },
        select: { kind: true, nestId: true },
      });
      if (referent?.kind !== "request" || referent.nestId !== row.nestId) return;
      const id = watchObligationId(row.id);
      await tx.obligation.create({
        data: {
          id,
          requestId: row.id,
          nestId: row.nestId,
          respondent: WATCHER,
          ownerId: this.instanceId,
          leaseUntil: this.effects.leaseEnd(),
          epoch: FIRST_EPOCH,
        },
      });
      this.effects.hold(id);
    }
  }

  /**
   * The watch verdict on `msgId` is being logged: closes the inspection (answered), or on a breach
   * marks it claimed until the ask_owner closes it. Refused when another instance judged it first.
   */
  judged(msgId: string, breach: boolean): (tx: Tx) => Promise<void> {
    return async (tx) => {
      const id = watchObligationId(msgId);
      const at = new Date(this.now());
      const moved = await tx.obligation.updateMany({
        where: { id, stage: "awaiting_claim", ...this.fence([id]) },
        data: breach ? { stage: "claimed", claimedAt: at } : { stage: "answered", closedAt: at },
      });
      if (moved.count === 0) await refuseIfStale(this.effects, tx, [id]);
      if (moved.count === 0 && (await tx.obligation.count({ where: { id } })) > 0)
        throw new ConflictError(`${msgId} was inspected already.`);
    };
  }

  /** The Sentry's ask_owner after a breach: closes the inspection of `msgId` in the ask's transaction. */
  asked(msgId: string): Within {
    return async (tx, row) => {
      const id = watchObligationId(msgId);
      const closed = await tx.obligation.updateMany({
        where: { id, stage: { in: [...OPEN_STAGES] }, ...this.fence([id]) },
        data: { stage: "answered", answerId: row.id, closedAt: row.createdAt },
      });
      if (closed.count === 0) await refuseIfStale(this.effects, tx, [id]);
    };
  }

  /**
   * The crow's claim: awaiting_claim -> claimed, naming the crow (a room request learns its crow
   * here). A conspiracy's further crows each get an obligation of their own. Any other claim on an
   * obligation already claimed or closed is refused with the claim.
   */
  claim(request: MessageRecord, crow: string): Within {
    return async (tx, row) => {
      const at = row.createdAt;
      const took = await tx.obligation.updateMany({
        where: {
          id: request.msg_id,
          stage: "awaiting_claim",
          respondent: { in: ["", crow] },
          ...this.fence([request.msg_id]),
        },
        data: { respondent: crow, stage: "claimed", claimedAt: at },
      });
      if (took.count === 0) await refuseIfStale(this.effects, tx, [request.msg_id]);
      if (took.count === 1) return this.effects.armAt(request.msg_id, at.getTime() + this.deps.config.nudgeAfterMs);
      const promised = await tx.obligation.findMany({
        where: { requestId: request.msg_id },
        select: { respondent: true },
      });
      if (promised.length === 0) return; // nothing was promised for it (stored before obligations existed)
      if (
        request.kind === "request" &&
        request.mode === "conspiracy" &&
        request.to === "" &&
        !promised.some((p) => p.respondent === crow)
      ) {
        const id = `${request.msg_id}/${crow}`;
        await tx.obligation.create({
          data: {
            id,
            requestId: request.msg_id,
            nestId: row.nestId,
            respondent: crow,
            stage: "claimed",
            claimedAt: at,
            ownerId: this.instanceId,
            leaseUntil: this.effects.leaseEnd(),
            epoch: FIRST_EPOCH,
          },
        });
        this.effects.hold(id);
        return this.effects.armAt(id, at.getTime() + this.deps.config.nudgeAfterMs);
      }
      throw new ConflictError(`${request.msg_id} is already claimed or answered; ${crow}'s claim is not stored.`);
    };
  }

  /**
   * The answer (a deliver, a decline, or a role's one reply): closes the author's open obligation on
   * the request, once. A second answer finds it closed and is refused, so it is never stored.
   */
  close(requestId: string, author: string, outcome: Outcome): Within {
    return async (tx, row) => {
      const held = [requestId, `${requestId}/${author}`];
      const closed = await tx.obligation.updateMany({
        where: { requestId, respondent: { in: [author, ""] }, stage: { in: [...OPEN_STAGES] }, ...this.fence(held) },
        data: { respondent: author, stage: outcome, answerId: row.id, closedAt: row.createdAt },
      });
      if (closed.count > 0) return this.effects.disarm(requestId, author);
      await refuseIfStale(this.effects, tx, held);
      if ((await tx.obligation.count({ where: { requestId } })) === 0) return; // nothing was promised
      throw new ConflictError(`${requestId} is already answered; ${author}'s ${row.kind} is not stored.`);
    };
  }

  /**
   * A room request's crow declines and hands it on to the next crow: its decline reopens the
   * obligation (claimed -> awaiting_claim, no respondent) instead of closing it, so the next
   * crow's claim takes it. Refused like an answer when the obligation is no longer the crow's.
   */
  handOn(requestId: string, crow: string): Within {
    return async (tx, row) => {
      const reopened = await tx.obligation.updateMany({
        // Claimed by this crow, or still unclaimed (a quarantined crow declines before it claims).
        where: {
          id: requestId,
          OR: [
            { respondent: crow, stage: "claimed" },
            { respondent: "", stage: "awaiting_claim" },
          ],
          ...this.fence([requestId]),
        },
        data: { respondent: "", stage: "awaiting_claim", claimedAt: null, nudgeId: "", nudgedAt: null },
      });
      if (reopened.count > 0) return this.effects.disarm(requestId, crow);
      await refuseIfStale(this.effects, tx, [requestId]);
      if ((await tx.obligation.count({ where: { requestId } })) === 0) return;
      throw new ConflictError(`${requestId} is no longer ${crow}'s to hand on; ${crow}'s ${row.kind} is not stored.`);
    };
  }

  /** Closes an obligation that ends with no post (Boss saturated, the respondent refused by a guardrail). */
  async closeWithoutPost(requestId: string, respondent: string, why: string): Promise<void> {
    const held = [requestId, `${requestId}/${respondent}`, watchObligationId(requestId)];
    const closed = await this.deps.prisma.obligation.updateMany({
      where: {
        requestId,
        respondent: { in: respondent === WATCHER ? [WATCHER] : [respondent, ""] },
        stage: { in: [...OPEN_STAGES] },
        ...this.fence(held),
      },
      data: { stage: "declined", closedAt: new Date(this.now()) },
    });
    if (closed.count > 0) this.deps.logLine(`nests: ${requestId} closed without a reply from ${respondent}: ${why}`);
    else {
      const stale = await this.effects.fences.stale(this.deps.prisma, held);
      if (stale) this.effects.fencedOut(stale);
    }
    this.effects.disarm(requestId, respondent);
  }
}

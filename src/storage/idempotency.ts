// Idempotency keys (docs/operations.md "Idempotency keys"): the first answer to a POST sent with an
// Idempotency-Key is kept for 24 h, and a retry with the same key gets it again instead of doing
// the work twice. A write that can record the answer in its own transaction (a submitted list)
// does, so a commit whose answer was lost on the way (a stalled database, a dropped connection)
// still has its answer for the retry; other answers are recorded right after the work.
import { createHash } from "node:crypto";
import type { PrismaClient } from "../generated/prisma/client.ts";
import type { Tx } from "./events/types.ts";

export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;
const PURGE_EVERY_MS = 60_000;

export interface StoredAnswer {
  status: number;
  body: unknown;
}

/** What identifies one request under a key: its scope (method, path, key) and its body's hash. */
export interface IdempotencyClaim {
  key: string;
  fingerprint: string;
}

export function idempotencyClaim(method: string, path: string, clientKey: string, body: unknown): IdempotencyClaim {
  const sha = (text: string) => createHash("sha256").update(text).digest("hex");
  return { key: sha(`${method} ${path} ${clientKey}`), fingerprint: sha(JSON.stringify(body ?? null)) };
}

export class IdempotencyStore {
  private lastPurge = 0;

  constructor(
    private readonly prisma: PrismaClient,
    private readonly now: () => number = Date.now,
  ) {}

  /** The answer kept for `claim.key` within the window, with whether it was for the same body. */
  async find(claim: IdempotencyClaim): Promise<(StoredAnswer & { sameRequest: boolean }) | undefined> {
    const row = await this.prisma.idempotentAnswer.findUnique({ where: { key: claim.key } });
    if (!row || row.createdAt.getTime() < this.now() - IDEMPOTENCY_WINDOW_MS) return undefined;
    return {
      status: row.status,
      body: JSON.parse(row.body) as unknown,
      sameRequest: row.fingerprint === claim.fingerprint,
    };
  }

  /** Records the answer inside a write's own transaction. */
  async recordIn(tx: Tx, claim: IdempotencyClaim, answer: StoredAnswer): Promise<void> {
    await tx.idempotentAnswer.deleteMany({ where: { key: claim.key } }); // an expired one under the same key
    await tx.idempotentAnswer.create({
      data: {
        key: claim.key,
        fingerprint: claim.fingerprint,
        status: answer.status,
        body: JSON.stringify(answer.body),
      },
    });
  }

  /** Records the answer unless one is kept already (the write recorded it itself). */
  async record(claim: IdempotencyClaim, answer: StoredAnswer): Promise<void> {
    if (await this.find(claim)) return;
    await this.prisma.$transaction((tx) => this.recordIn(tx, claim, answer));
    await this.purge();
  }

  private async purge(): Promise<void> {
    if (this.now() - this.lastPurge < PURGE_EVERY_MS) return;
    this.lastPurge = this.now();
    await this.prisma.idempotentAnswer.deleteMany({
      where: { createdAt: { lt: new Date(this.now() - IDEMPOTENCY_WINDOW_MS) } },
    });
  }
}

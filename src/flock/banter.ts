// Banter (docs/contract.md "Personas and banter"): a generated aside between two crows that worked the
// list. The speaker's line is written from both crows' backstories, their relationship and the
// list's recent events. At most 2 per list, tokens counted against the list's budget, never
// blocking work: it runs beside the items, and a failed or unusable line is dropped without an
// event. list.finished waits for banter in flight, up to a limit (20 s by default).
import type { TodoList } from "../generated/prisma/client.ts";
import { renderRequest } from "../models/prompts.ts";
import { totalTokens } from "../models/model.ts";
import { listEventPayload } from "./events.ts";
import { listStream } from "../base/streams.ts";
import type { ListBudget } from "./flights.ts";
import type { FlockContext } from "./context.ts";
import type { ListOwner } from "./list-owner.ts";
import { StaleEpochError } from "../storage/fence.ts";
import { personaOf, relationshipOf } from "../base/roster.ts";
import { describeError } from "../base/describe-error.ts";

export const MAX_BANTER_PER_LIST = 2;
const MAX_LINE_CHARS = 280;
const RECENT_EVENTS = 6;

export class Banter {
  private count: number;
  private readonly crowsSoFar: string[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  /** Set once list.finished is due: a line that lands later is dropped, never sent after it. */
  private closed = false;

  constructor(
    private readonly ctx: FlockContext,
    private readonly list: TodoList,
    private readonly budget: ListBudget,
    private readonly owner: ListOwner,
  ) {
    this.count = list.banterCount;
  }

  /** Called when an item is answered; may start one line of banter in the background. */
  after(itemId: string, crows: string[]): void {
    for (const crow of crows) if (!this.crowsSoFar.includes(crow)) this.crowsSoFar.push(crow);
    if (this.closed || this.count >= MAX_BANTER_PER_LIST || this.ctx.signal.aborted) return;
    if (this.budget.tokensUsed >= this.budget.tokenBudget) return;
    const speaker = crows[0];
    // Address a crow of this item if there are two, else the crow who worked the list most recently.
    const to = crows.find((c) => c !== speaker) ?? [...this.crowsSoFar].reverse().find((c) => c !== speaker);
    if (!speaker || !to) return;
    this.count += 1;
    const line = this.speak(itemId, speaker, to).catch((error: unknown) => {
      // Refused by the fence: the instance steps down (its one line says so); nothing more here.
      if (error instanceof StaleEpochError) return this.owner.fencedOut(error);
      if (this.ctx.signal.aborted) return; // stepped down or stopping: the line is abandoned
      this.ctx.logLine(`flock: banter dropped on ${itemId}: ${describeError(error)}`);
    });
    this.inFlight.add(line);
    void line.finally(() => this.inFlight.delete(line));
  }

  /** Waits for banter in flight, at most `ms`; later lines are dropped. */
  async settle(ms: number): Promise<void> {
    if (this.inFlight.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.allSettled([...this.inFlight]),
        new Promise<void>((resolve) => (timer = setTimeout(resolve, ms))),
      ]);
      clearTimeout(timer);
    }
    this.closed = true;
  }

  private async speak(itemId: string, speaker: string, to: string): Promise<void> {
    const stream = listStream(this.list.id);
    // The slot is spent whether or not the line is usable, so a flaky model cannot retry forever.
    // Fenced like every write of the owner: a stale owner's slot is refused and its line never asked for.
    await this.ctx.log.fencedAppend(stream, this.owner.fence, async (tx) => {
      await tx.spendBanterSlot(this.list.id);
      return [];
    });
    const [speakerPersona, toPersona, recent] = await Promise.all([
      this.ctx.crew.personaOf(speaker),
      this.ctx.crew.personaOf(to),
      this.ctx.log.read(stream, Math.max(0, (await this.ctx.log.lastSeq(stream)) - RECENT_EVENTS)),
    ]);
    const request = renderRequest({
      role: "banter",
      speaker,
      persona: speakerPersona,
      signal: this.ctx.signal,
      input: {
        speaker,
        to,
        speakerBackstory: personaOf(speakerPersona)?.backstory ?? "",
        toBackstory: personaOf(toPersona)?.backstory ?? "",
        relationship: relationshipOf(speakerPersona, toPersona),
        recent: recent.map((e) => describeEvent(e.name, JSON.parse(e.payload) as Record<string, unknown>)),
      },
    });
    // Banter never blocks work: it waits out the provider's weather no longer than list.finished
    // waits for it, and keeps no stored deadline.
    const patience = {
      deadline: async (now: number, patienceMs: number) => now + Math.min(patienceMs, this.ctx.config.banterWaitMs),
    };
    const reply = await this.ctx.model.generate({ ...request, lane: this.list.id, watch: patience });
    const tokens = totalTokens(reply.usage);
    const text = reply.text.trim();
    const usable = text !== "" && !text.includes("\n") && text.length <= MAX_LINE_CHARS;
    let counted = false;
    await this.ctx.log.fencedAppend(stream, this.owner.fence, async (tx) => {
      if (this.closed) return [];
      await tx.addTokens(this.list.id, tokens);
      counted = true;
      return usable
        ? [
            {
              name: "crow.banter",
              payload: listEventPayload<"crow.banter">(this.list.id, { item_id: itemId, crow: speaker, to, text }),
            },
          ]
        : [];
    });
    if (counted) this.budget.tokensUsed += tokens; // once, after the commit (the build may run again)
  }
}

const LEVELS = ["stranger", "regular", "trusted"];

/** A flock event as a crow would retell it: short, human, no ids. */
export function describeEvent(name: string, p: Record<string, unknown>): string {
  switch (name) {
    case "list.started":
      return `a list of ${(p.items as unknown[] | undefined)?.length ?? 0} items arrived from ${String(p.requester)}`;
    case "item.triaged":
      return `the Sentry called an item a ${String(p.mode)} job (${String(p.task_type)})`;
    case "crow.flying":
      return `${String(p.crow)} took off`;
    case "crow.landed":
      return p.ok ? `${String(p.crow)} landed with an answer` : `${String(p.crow)} came back empty-handed`;
    case "item.answered":
      return `${((p.crows as string[] | undefined) ?? []).join(" and ")} answered an item`;
    case "verdict":
      return `the owner's ${String(p.target)} verdict: ${String(p.verdict)}`;
    case "trust.changed":
      return `${String(p.holder)} went from ${LEVELS[Number(p.from)] ?? p.from} to ${LEVELS[Number(p.to)] ?? p.to} at ${String(p.task_type)}`;
    case "item.skipped":
      return `an item was dropped (${String(p.reason)})`;
    case "crow.banter":
      return `${String(p.crow)} said to ${String(p.to)}: ${String(p.text)}`;
    default:
      return name;
  }
}

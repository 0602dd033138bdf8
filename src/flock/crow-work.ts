// The work stage of one item (docs/rules.md "Work"): the crew picked (or, for another try, the
// crew that answered first), the flights fanned out by mode (solo, split, murder), a failed flight
// retried once by another crow, and split and murder answers merged by the Elder. Split out of
// list-run.ts, which keeps the stages, the writes and the approvals: this is the part that only
// flies and ends with an answer (or a SkipItem).
import type { Item, TodoList } from "../generated/prisma/client.ts";
import type { FlockContext } from "./context.ts";
import type { Mode } from "./events.ts";
import type { FlightResult, Flights, ListBudget } from "./flights.ts";
import { DEFAULT_NEST } from "../base/default-nest.ts";
import { stringArray } from "../base/util/json-column.ts";
import { readReworkNote, reworkCrew } from "./rework.ts";
import { SkipItem } from "./item-endings.ts";

export class CrowWork {
  constructor(
    private readonly ctx: FlockContext,
    private readonly list: TodoList,
    private readonly budget: ListBudget,
    private readonly flights: Flights,
  ) {}

  /** The item's answer and the crows that gave it (never the Elder); SkipItem("failure") when none landed. */
  async answer(item: Item): Promise<{ answer: string; crows: string[] }> {
    const mode = (item.mode ?? "solo") as Mode;
    const taskType = item.taskType ?? "other";
    const subtasks = stringArray(item.subtasks);
    const note = readReworkNote(item.rework);
    // Another try: the crew that answered first, and every crow told what was rejected and why.
    const rework = note?.target === "output" ? { previous: note.previous, reason: note.reason } : undefined;
    const previousCrew = rework ? stringArray(item.crows) : [];
    const crew = (count: number) =>
      rework ? reworkCrew(previousCrew, count, this.reworkPicker(), this.list.nestId) : this.crew(count);
    const again = rework ? { rework } : {};
    let answer: string;
    let crows: string[];
    if (mode === "split" && subtasks.length > 0) {
      const parts = await crew(subtasks.length);
      const results = await allLanded(
        subtasks.map(async (subtask, i) =>
          this.flyWithRetry(
            item,
            await this.resumedPick(item, `split-${i}`, parts[i % Math.max(1, parts.length)]),
            { role: "crow", input: { task: item.text, subtask, taskType, ...again } },
            parts,
            `split-${i}`,
          ),
        ),
      );
      if (results.some((r) => r === null)) throw new SkipItem("failure");
      const partials = results.map((r, i) => ({ crow: r!.crow, subtask: subtasks[i]!, answer: r!.text }));
      answer = await this.merge(item, "split", partials);
      crows = unique(partials.map((p) => p.crow));
    } else if (mode === "murder") {
      const size = this.ctx.config.murderSize;
      const murder = await crew(size);
      const results = await allLanded(
        murder.map(async (pick, i) =>
          this.flyWithRetry(
            item,
            await this.resumedPick(item, `murder-${i}`, pick),
            { role: "crow", input: { task: item.text, taskType, lens: { index: i, of: size }, ...again } },
            murder,
            `murder-${i}`,
          ),
        ),
      );
      const partials = results.filter((r): r is Landed => r !== null).map((r) => ({ crow: r.crow, answer: r.text }));
      if (partials.length === 0) throw new SkipItem("failure");
      answer = await this.merge(item, "murder", partials);
      crows = unique(partials.map((p) => p.crow));
    } else {
      const [picked] = await crew(1);
      const pick = await this.resumedPick(item, "solo", picked);
      const result = await this.flyWithRetry(
        item,
        pick,
        { role: "crow", input: { task: item.text, taskType, ...again } },
        pick ? [pick] : [],
        "solo",
      );
      if (!result) throw new SkipItem("failure");
      answer = result.text;
      crows = [result.crow];
    }
    return { answer, crows };
  }

  private crew(count: number): Promise<Array<{ crow: string; borrowed: boolean }>> {
    return this.ctx.picker.pick(this.list.nestId, count);
  }

  private reworkPicker() {
    return {
      quarantined: () => this.ctx.crew.quarantined(),
      core: (nestId: string) => this.ctx.crew.core(nestId),
      pick: (count: number, exclude: ReadonlySet<string>) => this.ctx.picker.pick(this.list.nestId, count, exclude),
    };
  }

  /**
   * The crow of a flight with tools that a restart interrupted flies that slot again, so its stored
   * calls (an approval still waiting, a call in the air) resume in the flight that asked them.
   */
  private async resumedPick(
    item: Item,
    slot: string,
    pick: { crow: string; borrowed: boolean } | undefined,
  ): Promise<{ crow: string; borrowed: boolean } | undefined> {
    if (!this.ctx.tools) return pick;
    const crow = await this.ctx.toolCalls.resumableCrow(item.id, slot);
    if (!crow || crow === pick?.crow) return pick;
    const core = (await this.ctx.crew.core(this.list.nestId)) ?? [];
    return { crow, borrowed: this.list.nestId !== DEFAULT_NEST && !core.includes(crow) };
  }

  /**
   * Flies `pick`; a failed flight is retried once by another crow (none of `crew`). Returns null
   * when neither landed with an answer. The provider's weather never gets here as a failure: the
   * flight itself waits it out (src/models/retry-policy.ts).
   */
  private async flyWithRetry(
    item: Item,
    pick: { crow: string; borrowed: boolean } | undefined,
    work: Parameters<Flights["fly"]>[0]["work"],
    crew: Array<{ crow: string; borrowed: boolean }>,
    slot: string,
  ): Promise<Landed | null> {
    const tried = new Set(crew.map((c) => c.crow));
    let current = pick;
    for (let attempt = 0; attempt < 2 && current; attempt++) {
      tried.add(current.crow);
      const result = await this.flights.fly({
        list: this.budget,
        itemId: item.id,
        crow: current.crow,
        persona: await this.ctx.crew.personaOf(current.crow),
        borrowed: current.borrowed,
        work,
        tools: { slot, taskType: item.taskType ?? "other", nestId: this.list.nestId },
      });
      if (result.ok && result.text.trim() !== "") return { crow: current.crow, text: result.text.trim() };
      // Another crow would ask the same provider: its refusal or its outage fails the item at once.
      if (!result.ok && result.provider) throw new SkipItem("failure");
      if (attempt === 0) [current] = await this.ctx.picker.pick(this.list.nestId, 1, tried);
    }
    return null;
  }

  /** The Elder merges several partial answers; it gets one retry, then the item fails. */
  private async merge(
    item: Item,
    mode: "split" | "murder",
    partials: Array<{ crow: string; subtask?: string; answer: string }>,
  ): Promise<string> {
    for (let attempt = 0; attempt < 2; attempt++) {
      const result: FlightResult = await this.flights.fly({
        list: this.budget,
        itemId: item.id,
        crow: "Elder",
        persona: "Elder",
        borrowed: false,
        work: { role: "elder", input: { task: item.text, mode, partials } },
      });
      if (result.ok && result.text.trim() !== "") return result.text.trim();
      if (!result.ok && result.provider) break;
    }
    throw new SkipItem("failure");
  }
}

interface Landed {
  crow: string;
  text: string;
}

/**
 * Like Promise.all, but settles only once every flight has landed: a cancel (or a skip) raised by
 * one must not end the item while its siblings are still in the air, or their landings could
 * follow list.finished.
 */
async function allLanded<T>(flights: Array<Promise<T>>): Promise<T[]> {
  const settled = await Promise.allSettled(flights);
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === "rejected");
  if (failed) throw failed.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<T>).value);
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}

// An docs/contract.md-only client: reads a list's stream knowing nothing but the contract's table and its
// settled details, and says whether it is a valid story. Fields beyond the contract's are ignored,
// as such a client would. The rules it holds the stream to:
// - list.started first, list.finished last and once; ids 1, 2, 3...;
// - every crow.flying of an item lands (crow.landed) before the item's next announcement (a flight
//   cut by a restart may leave a crow.flying with no landing: counted, never more landings than flights);
// - an announcement (item.triaged, item.answered) gets exactly one verdict of its target before the
//   item's next announcement of that target, and a verdict always answers an open announcement;
// - an item ends once: an output verdict not followed by more work, or item.skipped.
import type { SseMessage } from "./sse.ts";

export interface Story {
  /** Per item: the events, in order, as an docs/contract.md client names them. */
  items: Map<string, string[]>;
  /** What was wrong; empty when the story is valid. */
  problems: string[];
}

export function readStory(events: SseMessage[]): Story {
  const problems: string[] = [];
  const items = new Map<string, string[]>();
  const open = new Map<string, Set<string>>(); // item -> targets announced and not yet judged
  const flying = new Map<string, number>();
  const ended = new Set<string>();
  events.forEach((e, i) => {
    if (e.id !== String(i + 1)) problems.push(`event ${i + 1} has id ${e.id}`);
  });
  if (events[0]?.event !== "list.started") problems.push("the stream does not open with list.started");
  const finished = events.filter((e) => e.event === "list.finished");
  if (finished.length !== 1 || events.at(-1)?.event !== "list.finished")
    problems.push("list.finished is not last and once");
  for (const e of events) {
    const itemId: string | undefined = e.data?.item_id;
    if (!itemId || e.event === "crow.banter") continue;
    const seen = items.get(itemId) ?? [];
    items.set(itemId, seen);
    const label = e.event === "verdict" ? `verdict:${e.data.target}:${e.data.verdict}` : e.event;
    seen.push(label);
    const targets = open.get(itemId) ?? new Set<string>();
    open.set(itemId, targets);
    if (ended.has(itemId) && e.event !== "trust.changed") problems.push(`${itemId}: ${label} after the item ended`);
    switch (e.event) {
      case "crow.flying":
        flying.set(itemId, (flying.get(itemId) ?? 0) + 1);
        break;
      case "crow.landed":
        if ((flying.get(itemId) ?? 0) <= 0) problems.push(`${itemId}: a landing with no flight`);
        flying.set(itemId, (flying.get(itemId) ?? 0) - 1);
        break;
      case "item.triaged":
      case "item.answered": {
        const target = e.event === "item.triaged" ? "triage" : "output";
        if (targets.has(target)) problems.push(`${itemId}: ${e.event} again before its ${target} verdict`);
        targets.add(target);
        flying.set(itemId, 0); // what flew before the announcement is done (a cut flight included)
        break;
      }
      case "verdict":
        if (!targets.delete(e.data.target)) problems.push(`${itemId}: a ${e.data.target} verdict nothing announced`);
        break;
      case "item.skipped":
        ended.add(itemId);
        break;
    }
  }
  // An item ends at its last output verdict when nothing follows it, or at its skip.
  for (const [itemId, seen] of items) {
    const last = [...seen].reverse().find((l) => !l.startsWith("trust"));
    if (!(last?.startsWith("verdict:output") || last === "item.skipped"))
      problems.push(`${itemId} does not end in an output verdict or a skip: ${seen.join(", ")}`);
    if ((open.get(itemId)?.size ?? 0) > 0) problems.push(`${itemId}: an announcement never judged`);
  }
  return { items, problems };
}

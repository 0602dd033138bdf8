// The server log's line for an appended event, built from ids, counts and outcomes only (never
// item text, answers, reasons or messages). Events not worth a line give undefined.
import type { StoredEvent } from "../log/event-log.ts";

export function eventLogLine(event: StoredEvent): string | undefined {
  if (!WORTH_A_LINE.has(event.name)) return undefined;
  let p: Record<string, unknown>;
  try {
    p = JSON.parse(event.payload) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const id = (v: unknown) => (typeof v === "string" || typeof v === "number" ? String(v) : "?");
  switch (event.name) {
    case "list.started":
      return `list accepted: ${id(p.list_id)} with ${Array.isArray(p.items) ? p.items.length : "?"} items`;
    case "verdict":
      return `verdict: ${id(p.item_id)} ${id(p.target)} ${id(p.verdict)}`;
    case "crow.landed":
      return p.ok === false ? `flight failed: ${id(p.item_id)} crow ${id(p.crow)}` : undefined;
    case "item.skipped":
      return `item skipped: ${id(p.item_id)}`;
    case "requester.pranked":
      return `requester pranked on ${id(p.list_id)}: cooldown ${id(p.cooldown_s)} s`;
    case "list.finished":
      return `list finished: ${id(p.list_id)}, ${id(p.tokens_used)} of ${id(p.token_budget)} tokens`;
    default:
      return undefined;
  }
}

const WORTH_A_LINE = new Set([
  "list.started",
  "verdict",
  "crow.landed",
  "item.skipped",
  "requester.pranked",
  "list.finished",
]);

// What the list view shows of each step: an event's time and a one-line summary of its payload
// (what LangGraph Studio shows per step), a flight's latency (crow.flying to crow.landed, the
// events' own ts) and a spun crow's persona. The events carry no model name, so none is shown.
import { useEffect, useState } from "preact/hooks";
import { gql } from "./api.ts";

/** Local wall-clock time of an ISO timestamp, to the second. */
export function clock(ts: string): string {
  const at = new Date(ts);
  return Number.isNaN(at.getTime()) ? ts : at.toLocaleTimeString();
}

/** "1.2 s" between two ISO timestamps; "" when either is missing. */
export function latency(from: string | undefined, to: string | undefined): string {
  if (!from || !to) return "";
  const ms = Date.parse(to) - Date.parse(from);
  if (!Number.isFinite(ms) || ms < 0) return "";
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

const cut = (text: unknown, max = 80): string => {
  const s = String(text ?? "");
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
};

/** One line saying what an event means, in the owner's words; the item named by its text. */
export function summarize(event: { name: string; payload: any }, items: Map<string, string>): string {
  const p = event.payload ?? {};
  const item = p.item_id ? `"${cut(items.get(p.item_id) ?? p.item_id, 40)}"` : "";
  switch (event.name) {
    case "list.started":
      return `${(p.items ?? []).length} item${(p.items ?? []).length === 1 ? "" : "s"} from ${p.requester ?? "?"}${p.nest_id ? ` in ${p.nest_id}` : ""}`;
    case "item.triaged":
      return `${item}: ${p.mode ?? "?"}, ${p.task_type ?? "?"}${(p.subtasks ?? []).length ? `, ${p.subtasks.length} subtasks` : ""}${p.needs_approval ? ", needs approval" : ""}`;
    case "crow.flying":
      return `${p.crow} takes ${item}${p.borrowed ? " (borrowed)" : ""}`;
    case "crow.landed":
      return `${p.crow} on ${item}: ${p.ok ? "ok" : `failed${p.error ? ` (${cut(p.error, 60)})` : ""}`}, ${p.tokens ?? 0} tokens`;
    case "item.answered":
      return `${item} by ${(p.crows ?? []).join(", ")}: ${cut(p.answer)}`;
    case "verdict":
      return `${p.target} of ${item}: ${p.verdict}`;
    case "item.skipped":
      return `${item}: ${p.reason ?? ""}`;
    case "crow.banter":
      return `${p.crow} to ${p.to}: ${cut(p.text)}`;
    case "requester.pranked":
      return cut(p.message);
    case "list.finished":
      return `${p.tokens_used ?? "?"} of ${p.token_budget ?? "?"} tokens`;
    default:
      return cut(JSON.stringify(p));
  }
}

let personaRead: Promise<Map<string, string>> | undefined;

/** Spun crows' personas (a persona crow is its own persona), read once per page. */
export function usePersonas(): Map<string, string> {
  const [map, setMap] = useState<Map<string, string>>(new Map());
  useEffect(() => {
    personaRead ??= gql<{ crows: Array<{ name: string; persona: string }> }>(
      "query Personas { crows { name persona } }",
    )
      .then((d) => new Map(d.crows.map((c) => [c.name, c.persona])))
      .catch(() => {
        personaRead = undefined; // a later view asks again
        return new Map<string, string>();
      });
    let live = true;
    void personaRead.then((m) => live && setMap(m));
    return () => {
      live = false;
    };
  }, []);
  return map;
}

/** Who set a message's kind, in words (docs/nests-chat.md "Tagging"); the stored tag stays beside it. */
export const TAGGERS: Record<string, string> = {
  harness: "kind set by the server",
  jev: "kind read by the classifier",
  disagreement: "the classifier overrode the poster's kind",
  header: "kind as the poster declared it",
  default: "kind unclear, read as a plain say",
};

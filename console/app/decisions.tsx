// The approvals history under the Approvals region: the latest verdicts, newest first, each with
// who decided it (the owner, a named token as it was called then, or the system: a timeout, or
// trust skipping the approval) and, for an edited approval, what the owner changed (edit-diff.tsx).
// Read from the audit trail (auditEntries, the durable log), and read again whenever an approval
// closes.
import { useEffect, useState } from "preact/hooks";
import { approvalListeners } from "./approvals.tsx";
import { gql } from "./api.ts";
import { useQuery } from "./hooks.ts";
import { who } from "./who.ts";
import { EditDiff, type Edited } from "./edit-diff.tsx";

const DECISIONS = `query Decisions($kinds: [String!]) { auditEntries(kinds: $kinds, limit: 15) {
  ... on AuditPage { entries { id ts payload actor { kind tokenId tokenName webhookId } } }
} }`;

interface Entry {
  id: number;
  ts: string;
  payload: { item_id: string; target: string; verdict: string; edited?: Edited };
  actor: { kind: string; tokenId: string | null; tokenName: string | null; webhookId: string | null };
}

export function Decisions() {
  const { data, reload } = useQuery<{ auditEntries: { entries: Entry[] } }>("Loading decisions", DECISIONS, {
    kinds: ["verdict"],
  });
  useEffect(() => {
    const onChange = (change: { change: string }) => {
      if (change.change === "closed") void reload();
    };
    approvalListeners.add(onChange);
    return () => void approvalListeners.delete(onChange);
  }, [reload]);
  const entries = data?.auditEntries.entries ?? [];
  const texts = useItemTexts(entries.map((e) => e.payload.item_id));
  return (
    <section class="decisions" aria-labelledby="decisions-heading">
      <h3 id="decisions-heading">Decided</h3>
      {entries.length === 0 ? <p class="quiet">No verdict yet.</p> : null}
      <ul aria-label="Decided approvals">
        {entries.map((e) => (
          <li key={e.id}>
            <span class={`tag ${e.payload.target}`}>{e.payload.target}</span>{" "}
            {texts.get(e.payload.item_id) ? <span class="item-text">{texts.get(e.payload.item_id)} </span> : null}
            <span class="quiet">{e.payload.item_id} </span>
            <strong>{e.payload.verdict}</strong>{" "}
            <span class="quiet">
              by {who(e.actor)}, {new Date(e.ts).toLocaleTimeString()}
            </span>
            {e.payload.edited ? <EditDiff edited={e.payload.edited} actor={e.actor} /> : null}
          </li>
        ))}
      </ul>
    </section>
  );
}

/** An item id's list: ids read `<listId>-<n>`. */
const listOf = (itemId: string) => itemId.replace(/-\d+$/, "");

/**
 * The text of each item named (the audit carries only ids): one query reading each distinct list's
 * items under an alias, at most 15 lists (the audit page's size, and the alias limit).
 */
function useItemTexts(itemIds: string[]): Map<string, string> {
  const [texts, setTexts] = useState<Map<string, string>>(new Map());
  const lists = [...new Set(itemIds.map(listOf))].slice(0, 15);
  const key = lists.join(",");
  useEffect(() => {
    if (lists.length === 0) return;
    let live = true;
    const fields = lists.map((_, i) => `l${i}: list(id: $l${i}) { items { id text } }`).join(" ");
    const params = lists.map((_, i) => `$l${i}: ID!`).join(", ");
    const variables = Object.fromEntries(lists.map((id, i) => [`l${i}`, id]));
    gql<Record<string, { items: Array<{ id: string; text: string }> } | null>>(
      `query DecidedItems(${params}) { ${fields} }`,
      variables,
    )
      .then((data) => {
        if (!live) return;
        const next = new Map<string, string>();
        for (const list of Object.values(data)) for (const item of list?.items ?? []) next.set(item.id, item.text);
        setTexts(next);
      })
      .catch(() => {}); // the ids still show: the text is a courtesy
    return () => {
      live = false;
    };
  }, [key]);
  return texts;
}

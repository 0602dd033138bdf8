// The approvals history under the Approvals region: the latest verdicts, newest first, each with
// who decided it (the owner, a named token as it was called then, or the system: a timeout, or
// trust skipping the approval). Read from the audit trail (auditEntries, the durable log), and
// read again whenever an approval closes.
import { useEffect } from "preact/hooks";
import { approvalListeners } from "./approvals.tsx";
import { useQuery } from "./hooks.ts";

const DECISIONS = `query Decisions($kinds: [String!]) { auditEntries(kinds: $kinds, limit: 15) {
  ... on AuditPage { entries { id ts payload actor { kind tokenId tokenName webhookId } } }
} }`;

interface Entry {
  id: number;
  ts: string;
  payload: { item_id: string; target: string; verdict: string };
  actor: { kind: string; tokenId: string | null; tokenName: string | null; webhookId: string | null };
}

export function who(actor: Entry["actor"]): string {
  if (actor.kind === "token") return `token "${actor.tokenName ?? actor.tokenId ?? "?"}"`;
  if (actor.kind === "link") return `link of webhook ${actor.webhookId ?? "?"}`;
  return actor.kind;
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
  return (
    <section class="decisions" aria-labelledby="decisions-heading">
      <h3 id="decisions-heading">Decided</h3>
      {entries.length === 0 ? <p class="quiet">No verdict yet.</p> : null}
      <ul aria-label="Decided approvals">
        {entries.map((e) => (
          <li key={e.id}>
            <span class={`tag ${e.payload.target}`}>{e.payload.target}</span> {e.payload.item_id}{" "}
            <strong>{e.payload.verdict}</strong>{" "}
            <span class="quiet">
              by {who(e.actor)}, {new Date(e.ts).toLocaleTimeString()}
            </span>
          </li>
        ))}
      </ul>
    </section>
  );
}

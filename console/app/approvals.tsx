// The Approvals region: every pending approval, live from approvalChanges (opened adds, closed
// removes), with what is proposed, the time left before it fails closed, Approve and Reject.
import { useEffect, useState } from "preact/hooks";
import { follow, mutate } from "./api.ts";
import { attempt } from "./status.ts";
import { timeLeft, useNow } from "./hooks.ts";

const APPROVAL_CHANGES = `subscription Approvals($after: Int) { approvalChanges(after: $after) {
  id change listId itemId target verdict
  approval { status deadline item { text mode taskType subtasks reason answer crows } }
} }`;

const POST_VERDICT = `mutation Verdict($itemId: ID!, $target: VerdictTarget!, $approve: Boolean!) {
  postVerdict(itemId: $itemId, target: $target, approve: $approve) {
    __typename ... on Approval { status } ... on Error { code message }
  }
}`;

interface Change {
  id: number;
  change: "opened" | "closed";
  listId: string;
  itemId: string;
  target: "triage" | "output";
  approval: {
    status: string;
    deadline: string;
    item: { text: string; mode: string | null; taskType: string | null; subtasks: string[]; reason: string | null; answer: string | null; crows: string[] };
  } | null;
}

/**
 * Told of every approval change: the Trust view refreshes when one closes (a verdict moved a
 * streak), the Lists view when one opens on a list it has not shown yet (sent from elsewhere).
 */
export const approvalListeners = new Set<(change: { change: "opened" | "closed"; listId: string }) => void>();

const keyOf = (c: { itemId: string; target: string }) => `${c.itemId}|${c.target}`;

export function Approvals({ onOpenList }: { onOpenList: (listId: string) => void }) {
  const [pending, setPending] = useState<Map<string, Change>>(new Map());
  const [busy, setBusy] = useState<Set<string>>(new Set());
  const now = useNow();

  useEffect(
    () =>
      follow<Change>({
        name: "approvals",
        query: APPROVAL_CHANGES,
        field: "approvalChanges",
        variables: (after) => ({ after: after ?? 0 }),
        cursorOf: (c) => c.id,
        onItem: (c) => {
          approvalListeners.forEach((listener) => listener(c));
          setPending((old) => {
            const next = new Map(old);
            // An opened approval already decided (replayed history) is not pending any more.
            if (c.change === "opened" && c.approval?.status === "pending") next.set(keyOf(c), c);
            else next.delete(keyOf(c));
            return next;
          });
        },
      }),
    [],
  );

  const answer = async (c: Change, approve: boolean) => {
    const key = keyOf(c);
    setBusy((b) => new Set(b).add(key));
    const done = await attempt(`${approve ? "Approve" : "Reject"} ${c.target} of "${c.approval?.item.text ?? c.itemId}"`, () =>
      mutate("postVerdict", POST_VERDICT, { itemId: c.itemId, target: c.target, approve }),
    );
    setBusy((b) => {
      const next = new Set(b);
      next.delete(key);
      return next;
    });
    // The feed closes it; drop it now too so a double click cannot answer twice.
    if (done) setPending((old) => {
      const next = new Map(old);
      next.delete(key);
      return next;
    });
  };

  const rows = [...pending.values()].sort((a, b) => a.id - b.id);
  return (
    <section class="approvals" aria-labelledby="approvals-heading">
      <h2 id="approvals-heading">Approvals</h2>
      {rows.length === 0 ? <p class="quiet">Nothing waits on you.</p> : null}
      <ul class="cards">
        {rows.map((c) => {
          const item = c.approval?.item;
          const label = `${c.target === "triage" ? "Triage" : "Output"} of ${item?.text ?? c.itemId}`;
          return (
            <li key={keyOf(c)} class="card" aria-label={label}>
              <p class="card-title">
                <span class={`tag ${c.target}`}>{c.target}</span> <strong>{item?.text ?? c.itemId}</strong>
              </p>
              {c.target === "triage" ? (
                <dl class="facts">
                  <dt>Mode</dt>
                  <dd>{item?.mode ?? "?"}</dd>
                  <dt>Task type</dt>
                  <dd>{item?.taskType ?? "?"}</dd>
                  {item && item.subtasks.length > 0 ? (
                    <>
                      <dt>Subtasks</dt>
                      <dd>
                        <ol>{item.subtasks.map((s, i) => <li key={i}>{s}</li>)}</ol>
                      </dd>
                    </>
                  ) : null}
                  <dt>Reason</dt>
                  <dd>{item?.reason ?? ""}</dd>
                </dl>
              ) : (
                <dl class="facts">
                  <dt>Answer</dt>
                  <dd class="answer">{item?.answer ?? ""}</dd>
                  <dt>Crows</dt>
                  <dd>{item?.crows.join(", ")}</dd>
                </dl>
              )}
              <p class="deadline">
                <span>{c.approval ? timeLeft(c.approval.deadline, now) : ""}</span>{" "}
                <button type="button" class="link" onClick={() => onOpenList(c.listId)}>
                  list {c.listId}
                </button>
              </p>
              <div class="actions">
                <button type="button" class="approve" disabled={busy.has(keyOf(c))} onClick={() => void answer(c, true)}>
                  Approve
                </button>
                <button type="button" class="reject" disabled={busy.has(keyOf(c))} onClick={() => void answer(c, false)}>
                  Reject
                </button>
              </div>
            </li>
          );
        })}
      </ul>
    </section>
  );
}

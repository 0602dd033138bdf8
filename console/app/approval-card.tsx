// One pending approval's card in the Approvals region: what is proposed (the triage, or the answer
// and its crows), the time left before it fails closed, a reason box sent with any answer, and
// Approve, Reject, Try again (reject and ask for another try) and Edit and approve (the proposal
// opened for the owner's changes: approval-edit.tsx).
import { MAX_REASON_CHARS } from "../../src/flock/reason.ts";
import { useState } from "preact/hooks";
import { timeLeft } from "./hooks.ts";
import { EditForm, type Edit } from "./approval-edit.tsx";

export interface ProposedItem {
  text: string;
  mode: string | null;
  taskType: string | null;
  subtasks: string[];
  reason: string | null;
  answer: string | null;
  crows: string[];
}

export interface ApprovalRow {
  status: string;
  deadline: string;
  item: ProposedItem;
}

/** One pending approval as the region shows it. */
export interface Card {
  listId: string;
  itemId: string;
  target: "triage" | "output";
  approval: ApprovalRow | null;
}

/** The owner's answer to a card: yes or no, another try on a no, the owner's changes on a yes. */
export interface Answer {
  approve: boolean;
  rework?: boolean;
  edit?: Edit | null;
}

export const keyOf = (c: { itemId: string; target: string }) => `${c.itemId}|${c.target}`;

/** The card's element id: where a clicked notification puts the focus. */
export const cardId = (c: { itemId: string; target: string }) => `approval-${c.itemId}-${c.target}`;

export function ApprovalCard({
  card: c,
  now,
  busy,
  reason,
  onReason,
  onAnswer,
  onOpenList,
}: {
  card: Card;
  now: number;
  busy: boolean;
  reason: string;
  onReason: (reason: string) => void;
  onAnswer: (answer: Answer) => Promise<void>;
  onOpenList: (listId: string) => void;
}) {
  const [editing, setEditing] = useState(false);
  const item = c.approval?.item;
  const text = item?.text ?? c.itemId;
  const label = `${c.target === "triage" ? "Triage" : "Output"} of ${text}`;
  return (
    <li id={cardId(c)} tabIndex={-1} class="card" aria-label={label}>
      <p class="card-title">
        <span class={`tag ${c.target}`}>{c.target}</span> <strong>{text}</strong>
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
                <ol>
                  {item.subtasks.map((s, i) => (
                    <li key={i}>{s}</li>
                  ))}
                </ol>
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
        <button type="button" class="link" title={c.listId} onClick={() => onOpenList(c.listId)}>
          open its list
        </button>
      </p>
      <label class="reason">
        Reason (optional)
        <input
          type="text"
          maxLength={MAX_REASON_CHARS}
          value={reason}
          onInput={(e) => onReason((e.currentTarget as HTMLInputElement).value)}
        />
      </label>
      {editing && item ? (
        <EditForm
          target={c.target}
          label={text}
          proposal={item}
          busy={busy}
          onCancel={() => setEditing(false)}
          onApprove={(edit) => void onAnswer({ approve: true, edit })}
        />
      ) : (
        <div class="actions">
          <button type="button" class="approve" disabled={busy} onClick={() => void onAnswer({ approve: true })}>
            Approve
          </button>
          <button type="button" class="reject" disabled={busy} onClick={() => void onAnswer({ approve: false })}>
            Reject
          </button>
        </div>
      )}
      {editing ? null : (
        // The answers with more to them, in a row of their own under the plain yes and no.
        <div class="more-actions">
          <button
            type="button"
            class="reject"
            disabled={busy}
            onClick={() => void onAnswer({ approve: false, rework: true })}
          >
            Try again
          </button>
          <button type="button" disabled={busy || !item} onClick={() => setEditing(true)}>
            Edit and approve
          </button>
        </div>
      )}
    </li>
  );
}

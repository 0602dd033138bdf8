// "Edit and approve" (docs/rules.md "Edits"): the proposal opened for the owner's changes. A
// triage: its mode, its task type and, for a split, its subtasks as editable lines; an output: the
// answer in a box, to rewrite. Only what changed is sent (an edit naming nothing is refused), and
// nothing changed is a plain approval. The server checks the result (a split needs 2 to 4
// subtasks); its refusal is shown on the page and the card stays.
import { useState } from "preact/hooks";

/** The triage's modes and task types, as the server checks them (src/base/triage.ts, roster.ts). */
const MODES = ["solo", "split", "murder"] as const;
const TASK_TYPES = ["research", "writing", "code", "planning", "errand", "other"] as const;

export type Edit = { mode?: string; task_type?: string; subtasks?: string[] } | { answer: string };

export interface Proposal {
  mode: string | null;
  taskType: string | null;
  subtasks: string[];
  answer: string | null;
}

const linesOf = (text: string) =>
  text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "");

/** What the owner changed of a triage, or null for nothing. */
export function triageEdit(before: Proposal, mode: string, taskType: string, subtasks: string[]): Edit | null {
  const edit: { mode?: string; task_type?: string; subtasks?: string[] } = {};
  if (mode !== (before.mode ?? "solo")) edit.mode = mode;
  if (taskType !== (before.taskType ?? "other")) edit.task_type = taskType;
  const wanted = mode === "split" ? subtasks : [];
  if (wanted.join("\n") !== before.subtasks.join("\n") || (edit.mode && mode === "split")) edit.subtasks = wanted;
  return Object.keys(edit).length ? edit : null;
}

export function EditForm({
  target,
  label,
  proposal,
  busy,
  onApprove,
  onCancel,
}: {
  target: "triage" | "output";
  /** The item's text: names the form for a screen reader. */
  label: string;
  proposal: Proposal;
  busy: boolean;
  onApprove: (edit: Edit | null) => void;
  onCancel: () => void;
}) {
  const [mode, setMode] = useState(proposal.mode ?? "solo");
  const [taskType, setTaskType] = useState(proposal.taskType ?? "other");
  const [subtasks, setSubtasks] = useState(proposal.subtasks.join("\n"));
  const [answer, setAnswer] = useState(proposal.answer ?? "");
  const submit = (event: Event) => {
    event.preventDefault();
    if (target === "output") {
      const text = answer.trim();
      onApprove(text === (proposal.answer ?? "").trim() ? null : { answer: text });
    } else onApprove(triageEdit(proposal, mode, taskType, linesOf(subtasks)));
  };
  return (
    <form class="edit" aria-label={`Edit the ${target} of ${label}`} onSubmit={submit}>
      {target === "triage" ? (
        <>
          <label>
            Mode
            <select value={mode} onChange={(e) => setMode((e.currentTarget as HTMLSelectElement).value)}>
              {MODES.map((m) => (
                <option key={m} value={m}>
                  {m}
                </option>
              ))}
            </select>
          </label>
          <label>
            Task type
            <select value={taskType} onChange={(e) => setTaskType((e.currentTarget as HTMLSelectElement).value)}>
              {TASK_TYPES.map((t) => (
                <option key={t} value={t}>
                  {t}
                </option>
              ))}
            </select>
          </label>
          {mode === "split" ? (
            <label>
              Subtasks, one per line (2 to 4)
              <textarea
                rows={4}
                value={subtasks}
                onInput={(e) => setSubtasks((e.currentTarget as HTMLTextAreaElement).value)}
              />
            </label>
          ) : null}
        </>
      ) : (
        <label>
          Your answer
          <textarea
            rows={6}
            maxLength={20_000}
            required
            value={answer}
            onInput={(e) => setAnswer((e.currentTarget as HTMLTextAreaElement).value)}
          />
        </label>
      )}
      <div class="actions">
        <button type="submit" class="approve" disabled={busy}>
          Approve with these changes
        </button>
        <button type="button" disabled={busy} onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

// An edited approval as the Decided list shows it (docs/rules.md "Edits"): who changed it, and each
// changed field, before → after. A triage's mode, task type and subtasks in a line each; an output's
// answer, before and after, in bounded scrollable blocks (an answer may be long).
import { who, type ActorView } from "./who.ts";

export interface Edited {
  before: Record<string, unknown>;
  after: Record<string, unknown>;
}

const LABELS: Record<string, string> = { mode: "mode", task_type: "task type", subtasks: "subtasks", answer: "answer" };

const shown = (value: unknown) =>
  Array.isArray(value) ? (value.length ? value.join("; ") : "none") : String(value ?? "");

export function EditDiff({ edited, actor }: { edited: Edited; actor: ActorView }) {
  const changed = Object.keys(LABELS).filter(
    (k) => k in edited.after && JSON.stringify(edited.before[k]) !== JSON.stringify(edited.after[k]),
  );
  return (
    <div class="edit-diff">
      <span>Edited by {who(actor)}:</span>
      <ul aria-label="What was changed">
        {changed.map((k) =>
          k === "answer" ? (
            <li key={k}>
              {LABELS[k]}:<pre class="before">{shown(edited.before[k])}</pre>→
              <pre class="after">{shown(edited.after[k])}</pre>
            </li>
          ) : (
            <li key={k}>
              {LABELS[k]}: <del>{shown(edited.before[k])}</del> → <ins>{shown(edited.after[k])}</ins>
            </li>
          ),
        )}
      </ul>
    </div>
  );
}

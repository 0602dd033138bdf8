// The reminder notice (docs/rules.md "Reminders"): when an approval's window nears its end, the
// server logs one approval.reminder, and this shows "N min left: <item text>" with a link to the
// Approvals card, until the approval closes or its deadline passes. It follows approvalReminders on
// the tab's one stream (streams.ts), from the cursor at load: a reminder sent before the page opened
// is not shown again (the card's countdown says the same). A hidden tab with notifications on also
// gets a browser notification.
import { useEffect, useState } from "preact/hooks";
import { follow, gql } from "./api.ts";
import { approvalListeners } from "./approvals.tsx";
import { useNow } from "./hooks.ts";
import { permission } from "./notify.ts";
import { reportError } from "./status.ts";

const CURSOR = "query RemindersCursor { approvalRemindersCursor }";
const REMINDERS = `subscription Reminders($after: Int) { approvalReminders(after: $after) {
  id itemId target deadline approval { status item { text } }
} }`;

interface Reminder {
  id: number;
  itemId: string;
  target: "triage" | "output";
  deadline: string;
  approval: { status: string; item: { text: string } } | null;
}

const keyOf = (r: { itemId: string; target: string }) => `${r.itemId}|${r.target}`;
/** The Approvals card's element id (approvals.tsx cardId). */
const cardId = (r: { itemId: string; target: string }) => `approval-${r.itemId}-${r.target}`;

const minutesLeft = (deadline: string, now: number) => Math.max(0, Math.ceil((Date.parse(deadline) - now) / 60_000));

function notifyHidden(r: Reminder, text: string): void {
  if (permission() !== "granted" || !document.hidden) return;
  const note = new Notification(`${minutesLeft(r.deadline, Date.now())} min left`, {
    body: text,
    tag: `reminder:${keyOf(r)}`,
  });
  note.onclick = () => {
    window.focus();
    document.getElementById(cardId(r))?.focus();
    note.close();
  };
}

export function Reminders() {
  const [shown, setShown] = useState<Map<string, Reminder>>(new Map());
  const now = useNow(15_000);

  useEffect(() => {
    let stop: (() => void) | undefined;
    let cancelled = false;
    const drop = (key: string) =>
      setShown((old) => {
        if (!old.has(key)) return old;
        const next = new Map(old);
        next.delete(key);
        return next;
      });
    // A decision closes its card, and its reminder with it.
    const onChange = (c: { change: "opened" | "closed"; itemId?: string; target?: string }) => {
      if (c.change === "closed" && c.itemId && c.target) drop(keyOf({ itemId: c.itemId, target: c.target }));
    };
    approvalListeners.add(onChange);
    void gql<{ approvalRemindersCursor: number }>(CURSOR)
      .then(({ approvalRemindersCursor: cursor }) => {
        if (cancelled) return;
        stop = follow<Reminder>({
          name: "reminders",
          query: REMINDERS,
          field: "approvalReminders",
          variables: (after) => ({ after: after ?? cursor }),
          cursorOf: (r) => r.id,
          onItem: (r) => {
            if (r.approval?.status !== "pending" || Date.parse(r.deadline) <= Date.now()) return;
            notifyHidden(r, r.approval.item.text);
            setShown((old) => new Map(old).set(keyOf(r), r));
          },
        });
      })
      .catch((error: Error) => reportError(`reminders: ${error.message}`));
    return () => {
      cancelled = true;
      approvalListeners.delete(onChange);
      stop?.();
    };
  }, []);

  const live = [...shown.values()].filter((r) => Date.parse(r.deadline) > now);
  if (live.length === 0) return null;
  return (
    <section class="reminders" aria-label="Reminders">
      <ul>
        {live.map((r) => (
          <li key={keyOf(r)} role="status">
            <a
              href={`#${cardId(r)}`}
              onClick={(e) => {
                // The hash holds the view: focus the card instead of moving it.
                e.preventDefault();
                const card = document.getElementById(cardId(r));
                card?.scrollIntoView({ block: "center" });
                card?.focus();
              }}
            >
              {minutesLeft(r.deadline, now)} min left: {r.approval?.item.text ?? r.itemId}
            </a>
          </li>
        ))}
      </ul>
    </section>
  );
}

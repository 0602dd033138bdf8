// The Approvals region: every pending approval, with what is proposed, the time left before it
// fails closed, Approve and Reject. It starts from what waits now, not from the whole history:
// the log's cursor first, then the pending rows, then approvalChanges after that cursor (opened
// adds, closed removes). Whatever commits in between shows up in the read, the feed, or both, and
// the set is keyed by approval (item and target), so nothing is missed and nothing shows twice.
import { useEffect, useState } from "preact/hooks";
import { follow, gql, mutate } from "./api.ts";
import { attempt, reportError, setStreamState } from "./status.ts";
import { timeLeft, useNow } from "./hooks.ts";
import { noteApprovals } from "./notify.ts";

const ITEM_FIELDS = "text mode taskType subtasks reason answer crows";

const APPROVALS_CURSOR = "query ApprovalsCursor { approvalChangesCursor }";

/** At most this many pending rows are read at load; beyond it the owner is told, not misled. */
const PENDING_LIMIT = 500;

const PENDING_NOW = `query PendingApprovals { approvals(status: pending, limit: ${PENDING_LIMIT}) {
  itemId target status deadline item { listId ${ITEM_FIELDS} }
} }`;

const APPROVAL_CHANGES = `subscription Approvals($after: Int) { approvalChanges(after: $after) {
  id change listId itemId target verdict
  approval { status deadline item { ${ITEM_FIELDS} } }
} }`;

const POST_VERDICT = `mutation Verdict($itemId: ID!, $target: VerdictTarget!, $approve: Boolean!, $reason: String, $rework: Boolean) {
  postVerdict(itemId: $itemId, target: $target, approve: $approve, reason: $reason, rework: $rework) {
    __typename ... on Approval { status } ... on Error { code message }
  }
}`;

interface ProposedItem {
  text: string;
  mode: string | null;
  taskType: string | null;
  subtasks: string[];
  reason: string | null;
  answer: string | null;
  crows: string[];
}

interface ApprovalRow {
  status: string;
  deadline: string;
  item: ProposedItem;
}

interface Change {
  id: number;
  change: "opened" | "closed";
  listId: string;
  itemId: string;
  target: "triage" | "output";
  approval: ApprovalRow | null;
}

interface PendingRow extends ApprovalRow {
  itemId: string;
  target: "triage" | "output";
  item: ProposedItem & { listId: string };
}

/** One pending approval as the region shows it. */
interface Card {
  listId: string;
  itemId: string;
  target: "triage" | "output";
  approval: ApprovalRow | null;
}

/**
 * Told of every approval change: the Trust view refreshes when one closes (a verdict moved a
 * streak), the Lists view when one opens on a list it has not shown yet (sent from elsewhere).
 */
export const approvalListeners = new Set<(change: { change: "opened" | "closed"; listId: string }) => void>();

const keyOf = (c: { itemId: string; target: string }) => `${c.itemId}|${c.target}`;

/** The card's element id: where a clicked notification puts the focus. */
const cardId = (c: { itemId: string; target: string }) => `approval-${c.itemId}-${c.target}`;

/** Most urgent first: the deadline is when silence rejects it. */
const byDeadline = (a: Card, b: Card) =>
  (a.approval?.deadline ?? "").localeCompare(b.approval?.deadline ?? "") || keyOf(a).localeCompare(keyOf(b));

export function Approvals({ onOpenList }: { onOpenList: (listId: string) => void }) {
  const [pending, setPending] = useState<Map<string, Card>>(new Map());
  const [truncated, setTruncated] = useState(false);
  const [loaded, setLoaded] = useState(false);
  const [busy, setBusy] = useState<Set<string>>(new Set());
  // The owner's reason per card, sent with either answer (docs/rules.md "Reasons").
  const [reasons, setReasons] = useState<Map<string, string>>(new Map());
  const now = useNow();

  useEffect(() => {
    let cancelled = false;
    let stop: (() => void) | undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const start = async (tries: number) => {
      try {
        // In this order: a change committed after the cursor is in the feed, one before it is in the read.
        const { approvalChangesCursor: cursor } = await gql<{ approvalChangesCursor: number }>(APPROVALS_CURSOR);
        const { approvals } = await gql<{ approvals: PendingRow[] }>(PENDING_NOW);
        if (cancelled) return;
        setTruncated(approvals.length >= PENDING_LIMIT);
        setPending(
          new Map(
            approvals.map((a) => [
              keyOf(a),
              { listId: a.item.listId, itemId: a.itemId, target: a.target, approval: a },
            ]),
          ),
        );
        setLoaded(true);
        stop = follow<Change>({
          name: "approvals",
          query: APPROVAL_CHANGES,
          field: "approvalChanges",
          variables: (after) => ({ after: after ?? cursor }),
          cursorOf: (c) => c.id,
          onItem: (c) => {
            approvalListeners.forEach((listener) => {
              listener(c);
            });
            setPending((old) => {
              const next = new Map(old);
              // An opened approval already decided by the time it is read is not pending any more.
              if (c.change === "opened" && c.approval?.status === "pending") next.set(keyOf(c), c);
              else next.delete(keyOf(c));
              return next;
            });
          },
        });
      } catch (error) {
        if (cancelled) return;
        // The server is down or refused the read: say so once, then try again like a stream would.
        if (tries === 0) reportError(`approvals: ${(error as Error).message}`);
        setStreamState("approvals", "reconnecting");
        timer = setTimeout(() => void start(tries + 1), Math.min(5000, 250 * 2 ** tries));
      }
    };
    setStreamState("approvals", "connecting");
    void start(0);
    return () => {
      cancelled = true;
      if (timer) clearTimeout(timer);
      if (stop) stop();
      else setStreamState("approvals", null);
    };
  }, []);

  const answer = async (c: Card, approve: boolean, rework = false) => {
    const key = keyOf(c);
    setBusy((b) => new Set(b).add(key));
    const reason = reasons.get(key)?.trim() || null;
    const done = await attempt(
      `${approve ? "Approve" : rework ? "Reject and try again" : "Reject"} ${c.target} of "${c.approval?.item.text ?? c.itemId}"`,
      () => mutate("postVerdict", POST_VERDICT, { itemId: c.itemId, target: c.target, approve, reason, rework }),
    );
    setBusy((b) => {
      const next = new Set(b);
      next.delete(key);
      return next;
    });
    // The feed closes it; drop it now too so a double click cannot answer twice.
    if (done)
      setPending((old) => {
        const next = new Map(old);
        next.delete(key);
        return next;
      });
  };

  const rows = [...pending.values()].sort(byDeadline);
  useEffect(() => {
    // From the first read on: what waited at load is counted in the title, not announced.
    if (!loaded) return;
    noteApprovals(
      rows.map((c) => ({
        key: keyOf(c),
        title: `Approve the ${c.target}? (${c.itemId})`,
        body: c.approval?.item.text ?? c.itemId,
        focus: () => document.getElementById(cardId(c))?.focus(),
      })),
    );
  }, [pending, loaded]);
  return (
    <section class="approvals" aria-labelledby="approvals-heading">
      <h2 id="approvals-heading">Approvals</h2>
      {!loaded ? <p class="loading">Loading approvals…</p> : null}
      {loaded && rows.length === 0 ? <p class="quiet">Nothing waits on you.</p> : null}
      {truncated ? (
        <p class="quiet">
          More than {PENDING_LIMIT} approvals waited at load; the oldest {PENDING_LIMIT} are shown with every new one.
          Reload once some are answered.
        </p>
      ) : null}
      <ul class="cards">
        {rows.map((c) => {
          const item = c.approval?.item;
          const label = `${c.target === "triage" ? "Triage" : "Output"} of ${item?.text ?? c.itemId}`;
          return (
            <li key={keyOf(c)} id={cardId(c)} tabIndex={-1} class="card" aria-label={label}>
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
                  maxLength={1000}
                  value={reasons.get(keyOf(c)) ?? ""}
                  onInput={(e) => {
                    const value = (e.currentTarget as HTMLInputElement).value;
                    setReasons((old) => new Map(old).set(keyOf(c), value));
                  }}
                />
              </label>
              <div class="actions">
                <button
                  type="button"
                  class="approve"
                  disabled={busy.has(keyOf(c))}
                  onClick={() => void answer(c, true)}
                >
                  Approve
                </button>
                <button
                  type="button"
                  class="reject"
                  disabled={busy.has(keyOf(c))}
                  onClick={() => void answer(c, false)}
                >
                  Reject
                </button>
                <button
                  type="button"
                  class="reject"
                  disabled={busy.has(keyOf(c))}
                  onClick={() => void answer(c, false, true)}
                >
                  Try again
                </button>
              </div>
            </li>
          );
        })}
      </ul>
    </section>
  );
}

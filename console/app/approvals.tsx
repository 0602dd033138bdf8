// The Approvals region: every pending approval, with what is proposed, the time left before it
// fails closed, and the owner's answers (approval-card.tsx), then the tool calls that wait
// (tool-call-cards.tsx). It starts from what waits now, not from the whole history:
// the log's cursor first, then the pending rows, then approvalChanges after that cursor (opened
// adds, closed removes). Whatever commits in between shows up in the read, the feed, or both, and
// the set is keyed by approval (item and target), so nothing is missed and nothing shows twice.
import { useEffect, useState } from "preact/hooks";
import { follow, gql, mutate } from "./api.ts";
import { attempt, reportError, setStreamState } from "./status.ts";
import { useNow } from "./hooks.ts";
import { noteApprovals } from "./notify.ts";
import { type Call, followToolCalls, ToolCallCards, type ToolCards, waitingCount } from "./tool-call-cards.tsx";
import {
  ApprovalCard,
  cardId,
  keyOf,
  type Answer,
  type ApprovalRow,
  type Card,
  type ProposedItem,
} from "./approval-card.tsx";

const ITEM_FIELDS = "text mode taskType subtasks reason answer crows";

/** A tool call's fields: the same as tool-call-cards.tsx's CALL_FIELDS (its feed). */
const TOOL_CALL_FIELDS = "callId listId itemId itemText crow taskType server tool args deadline status";

// The tool calls that wait start with the approvals, in the same two reads, so both feeds are
// registered in one tick and the tab's one connection opens once (streams.ts).
const APPROVALS_CURSOR = "query ApprovalsCursor { approvalChangesCursor toolCallChangesCursor }";

/** At most this many pending rows are read at load; beyond it the owner is told, not misled. */
const PENDING_LIMIT = 500;

const PENDING_NOW = `query PendingApprovals { approvals(status: pending, limit: ${PENDING_LIMIT}) {
  itemId target status deadline item { listId ${ITEM_FIELDS} }
} pendingToolCalls { ${TOOL_CALL_FIELDS} } }`;

const APPROVAL_CHANGES = `subscription Approvals($after: Int) { approvalChanges(after: $after) {
  id change listId itemId target verdict
  approval { status deadline item { ${ITEM_FIELDS} } }
} }`;

const POST_VERDICT = `mutation Verdict($itemId: ID!, $target: VerdictTarget!, $approve: Boolean!, $reason: String, $rework: Boolean, $edit: JSON) {
  postVerdict(itemId: $itemId, target: $target, approve: $approve, reason: $reason, rework: $rework, edit: $edit) {
    __typename ... on Approval { status } ... on Error { code message }
  }
}`;

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

/**
 * Told of every approval change: the Trust view refreshes when one closes (a verdict moved a
 * streak), the Lists view when one opens on a list it has not shown yet (sent from elsewhere).
 */
export const approvalListeners = new Set<(change: { change: "opened" | "closed"; listId: string }) => void>();

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
  // Tool calls waiting too (tool-call-cards.tsx): "Nothing waits on you" only when none does.
  const [toolCalls, setToolCalls] = useState<ToolCards>(new Map());
  const now = useNow();

  useEffect(() => {
    let cancelled = false;
    let stop: (() => void) | undefined;
    let stopToolCalls: (() => void) | undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const start = async (tries: number) => {
      try {
        // In this order: a change committed after the cursor is in the feed, one before it is in the read.
        const { approvalChangesCursor: cursor, toolCallChangesCursor: toolCursor } = await gql<{
          approvalChangesCursor: number;
          toolCallChangesCursor: number;
        }>(APPROVALS_CURSOR);
        const { approvals, pendingToolCalls } = await gql<{ approvals: PendingRow[]; pendingToolCalls: Call[] }>(
          PENDING_NOW,
        );
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
        stopToolCalls = followToolCalls(setToolCalls, pendingToolCalls, toolCursor);
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
      stopToolCalls?.();
      if (stop) stop();
      else setStreamState("approvals", null);
    };
  }, []);

  const answer = async (c: Card, { approve, rework = false, edit = null }: Answer) => {
    const key = keyOf(c);
    setBusy((b) => new Set(b).add(key));
    const reason = reasons.get(key)?.trim() || null;
    const what = approve ? (edit ? "Edit and approve" : "Approve") : rework ? "Reject and try again" : "Reject";
    const done = await attempt(`${what} ${c.target} of "${c.approval?.item.text ?? c.itemId}"`, () =>
      mutate("postVerdict", POST_VERDICT, { itemId: c.itemId, target: c.target, approve, reason, rework, edit }),
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
      {loaded && rows.length === 0 && waitingCount(toolCalls) === 0 ? <p class="quiet">Nothing waits on you.</p> : null}
      {truncated ? (
        <p class="quiet">
          More than {PENDING_LIMIT} approvals waited at load; the oldest {PENDING_LIMIT} are shown with every new one.
          Reload once some are answered.
        </p>
      ) : null}
      <ul class="cards">
        {rows.map((c) => (
          <ApprovalCard
            key={keyOf(c)}
            card={c}
            now={now}
            busy={busy.has(keyOf(c))}
            reason={reasons.get(keyOf(c)) ?? ""}
            onReason={(value) => setReasons((old) => new Map(old).set(keyOf(c), value))}
            onAnswer={(a) => answer(c, a)}
            onOpenList={onOpenList}
          />
        ))}
      </ul>
      <ToolCallCards cards={toolCalls} setCards={setToolCalls} now={now} onOpenList={onOpenList} />
    </section>
  );
}

// Tool calls waiting on the owner (docs/tools.md "The approval of a call"), as cards in the
// Approvals region: the crow, the item's text, the server, the tool, its arguments whole (in a
// bounded, scrollable block), the time left; Approve, Refuse (with the reason box) and "Always for
// this crow and task type" (a standing permission). Started with the approvals (approvals.tsx reads
// both cursors, then both pending sets, then registers both feeds in one tick, so the tab's one
// connection, streams.ts, opens once): followToolCalls here. A decided card stays, saying who
// decided and how, until the owner dismisses it.
import { MAX_REASON_CHARS } from "../../src/flock/reason.ts";
import { useState } from "preact/hooks";
import { follow, mutate } from "./api.ts";
import { attempt } from "./status.ts";
import { timeLeft } from "./hooks.ts";
import { who, type ActorView } from "./who.ts";

/** A call's fields: the same as approvals.tsx's TOOL_CALL_FIELDS (its pending read). */
const CALL_FIELDS = "callId listId itemId itemText crow taskType server tool args deadline status";

const CHANGES = `subscription ToolCalls($after: Int) { toolCallChanges(after: $after) {
  id change callId decision reason always decidedBy { kind tokenId tokenName webhookId }
  call { ${CALL_FIELDS} }
} }`;
const DECIDE = `mutation DecideToolCall($callId: ID!, $approve: Boolean!, $reason: String, $always: Boolean) {
  decideToolCall(callId: $callId, approve: $approve, reason: $reason, always: $always) {
    __typename ... on ToolCallDecided { decision } ... on Error { code message }
  }
}`;

export interface Call {
  callId: string;
  listId: string;
  itemId: string;
  itemText: string | null;
  crow: string;
  taskType: string;
  server: string;
  tool: string;
  args: unknown;
  deadline: string | null;
  status: string;
}

interface Decided {
  decision: string;
  reason: string | null;
  always: boolean;
  decidedBy: ActorView | null;
}

interface Change extends Decided {
  id: number;
  change: "asked" | "decided";
  callId: string;
  call: Call | null;
}

export interface ToolCard {
  call: Call;
  decided?: Decided;
}

/** How a decided card reads: "Approved by owner", "Refused by token "phone": not now", ... */
export function decisionLine(call: Call, d: Decided): string {
  const by = d.decidedBy ? who(d.decidedBy) : "someone";
  if (d.decision === "timeout") return "Refused: no answer in time";
  if (d.decision === "refused") return `Refused by ${by}${d.reason ? `: ${d.reason}` : ""}`;
  return `Approved by ${by}${d.always ? `, always for ${call.crow} on ${call.taskType}` : ""}`;
}

export type ToolCards = Map<string, ToolCard>;
type SetCards = (update: (old: ToolCards) => ToolCards) => void;

/** The waiting calls read at load, then the feed after `cursor`; returns the feed's stop. */
export function followToolCalls(setCards: SetCards, waiting: Call[], cursor: number): () => void {
  setCards(() => new Map(waiting.map((call) => [call.callId, { call }])));
  return follow<Change>({
    name: "tool calls",
    query: CHANGES,
    field: "toolCallChanges",
    variables: (after) => ({ after: after ?? cursor }),
    cursorOf: (c) => c.id,
    onItem: (c) =>
      setCards((old) => {
        const next = new Map(old);
        const known = next.get(c.callId);
        // Asked but decided by the time it is read: nothing waits, and nothing is shown.
        if (c.change === "asked" && c.call?.status === "asked") next.set(c.callId, { call: c.call });
        else if (c.change === "decided" && known) next.set(c.callId, { call: known.call, decided: c });
        return next;
      }),
  });
}

/** How many of the cards still wait on the owner. */
export const waitingCount = (cards: ToolCards) => [...cards.values()].filter((c) => !c.decided).length;

/** The tool-call cards (kept by approvals.tsx); decisions go out from here, dismissals drop a card. */
export function ToolCallCards({
  cards,
  setCards,
  now,
  onOpenList,
}: {
  cards: ToolCards;
  setCards: SetCards;
  now: number;
  onOpenList: (listId: string) => void;
}) {
  const [busy, setBusy] = useState<Set<string>>(new Set());
  const [reasons, setReasons] = useState<Map<string, string>>(new Map());

  const rows = [...cards.values()].sort((a, b) => (a.call.deadline ?? "").localeCompare(b.call.deadline ?? ""));

  const decide = async (call: Call, approve: boolean, always = false) => {
    const id = call.callId;
    setBusy((b) => new Set(b).add(id));
    const reason = approve ? null : reasons.get(id)?.trim() || null;
    const what = approve ? (always ? "Always allow" : "Approve") : "Refuse";
    // The card says who decided once the feed brings the decision (its actor is the server's word).
    await attempt(`${what} ${call.tool} for "${call.itemText ?? call.itemId}"`, () =>
      mutate("decideToolCall", DECIDE, { callId: id, approve, reason, always }),
    );
    setBusy((b) => {
      const next = new Set(b);
      next.delete(id);
      return next;
    });
  };
  const dismiss = (id: string) =>
    setCards((old) => {
      const next = new Map(old);
      next.delete(id);
      return next;
    });

  if (rows.length === 0) return null;
  return (
    <section class="tool-calls" aria-labelledby="tool-calls-heading">
      <h3 id="tool-calls-heading">Tool calls</h3>
      <ul class="cards">
        {rows.map(({ call, decided }) => {
          const text = call.itemText ?? call.itemId;
          const off = busy.has(call.callId);
          return (
            <li key={call.callId} class="card" aria-label={`Tool call ${call.tool} for ${text}`}>
              <p class="card-title">
                <span class="tag tool">tool call</span> <strong>{text}</strong>
              </p>
              <dl class="facts">
                <dt>Crow</dt>
                <dd>{call.crow}</dd>
                <dt>Server</dt>
                <dd>{call.server}</dd>
                <dt>Tool</dt>
                <dd>{call.tool}</dd>
                <dt class="wide">Arguments</dt>
                <dd class="wide">
                  <pre class="args">{JSON.stringify(call.args, null, 2)}</pre>
                </dd>
              </dl>
              {decided ? (
                <div class="decided-line">
                  <p role="status">{decisionLine(call, decided)}</p>
                  <button type="button" onClick={() => dismiss(call.callId)}>
                    Dismiss
                  </button>
                </div>
              ) : (
                <>
                  <p class="deadline">
                    <span>{call.deadline ? timeLeft(call.deadline, now) : ""}</span>{" "}
                    <button type="button" class="link" title={call.listId} onClick={() => onOpenList(call.listId)}>
                      open its list
                    </button>
                  </p>
                  <label class="reason">
                    Reason (optional, told to the crow on a refusal)
                    <input
                      type="text"
                      maxLength={MAX_REASON_CHARS}
                      value={reasons.get(call.callId) ?? ""}
                      onInput={(e) => {
                        const value = (e.currentTarget as HTMLInputElement).value;
                        setReasons((old) => new Map(old).set(call.callId, value));
                      }}
                    />
                  </label>
                  <div class="actions">
                    <button type="button" class="approve" disabled={off} onClick={() => void decide(call, true)}>
                      Approve
                    </button>
                    <button type="button" class="reject" disabled={off} onClick={() => void decide(call, false)}>
                      Refuse
                    </button>
                    <button type="button" disabled={off} onClick={() => void decide(call, true, true)}>
                      Always for this crow and task type
                    </button>
                  </div>
                </>
              )}
            </li>
          );
        })}
      </ul>
    </section>
  );
}

// The owner's decisions in a nest room: the open asks, each answerable by its phrase, and the
// quarantines with Reinstate / Retire (the owner's exact reply on the Sentry's ask). Every one of
// these is a reply to an ask, so each offers an optional reason, sent with the reply (docs/rules.md
// "Reasons"), bounded by the server's own limit.
import { useState } from "preact/hooks";
import { MAX_REASON_CHARS } from "../../src/flock/reason.ts";
import { timeLeft } from "./hooks.ts";

/** A reply to an ask as the room posts it: a plain say referring to the ask, with the owner's reason. */
export interface AskReply {
  text: string;
  refersTo: string;
  kind: "say";
  reason?: string;
}

/** Posts the reply; true once the server took it. */
export type Reply = (reply: AskReply, what: string) => Promise<boolean>;

export interface OpenAsk {
  approvalPhrase: string;
  deadline: string;
  message: { msgId: string; author: string; text: string };
}

export interface OpenQuarantine {
  id: string;
  crow: string;
  askMsgId: string;
  retired: boolean;
}

const LIMIT = MAX_REASON_CHARS.toLocaleString("en-US");

/** The reason boxes' texts, by the key of what they answer; a box empties once its reply is taken. */
function useReasons() {
  const [reasons, setReasons] = useState<Record<string, string>>({});
  const set = (key: string, value: string) => setReasons((old) => ({ ...old, [key]: value }));
  /** The reply with its box's reason (only spaces is none, as on the server). */
  const withReason = (key: string, reply: Omit<AskReply, "reason">): AskReply => {
    const reason = (reasons[key] ?? "").trim();
    return reason === "" ? reply : { ...reply, reason };
  };
  return { reasons, set, withReason };
}

/** "Reason (optional)" with the count the owner has left, as on the approval cards. */
function ReasonBox({ id, value, onInput }: { id: string; value: string; onInput: (value: string) => void }) {
  return (
    <div class="reason">
      <label for={id}>Reason (optional)</label>
      <input
        id={id}
        type="text"
        maxLength={MAX_REASON_CHARS}
        value={value}
        aria-describedby={`${id}-count`}
        onInput={(e) => onInput(e.currentTarget.value)}
      />
      <span id={`${id}-count`} class="quiet count">
        {[...value].length.toLocaleString("en-US")} / {LIMIT} characters
      </span>
    </div>
  );
}

export function OpenAsks({ asks, now, reply }: { asks: OpenAsk[]; now: number; reply: Reply }) {
  const { reasons, set, withReason } = useReasons();
  const answer = async (a: OpenAsk) => {
    const key = a.message.msgId;
    const sent = withReason(key, { text: a.approvalPhrase, refersTo: a.message.msgId, kind: "say" });
    if (await reply(sent, `Answer ${a.message.msgId}`)) set(key, "");
  };
  return (
    <section aria-label="Open asks" class="asks">
      <h4>Open asks</h4>
      {asks.length === 0 ? <p class="quiet">None.</p> : null}
      <ul>
        {asks.map((a) => (
          <li key={a.message.msgId} data-ask={a.message.msgId}>
            <p>
              <strong>{a.message.author}</strong>: {a.message.text}{" "}
              <span class="quiet">({timeLeft(a.deadline, now)})</span>
            </p>
            <ReasonBox
              id={`reason-${a.message.msgId}`}
              value={reasons[a.message.msgId] ?? ""}
              onInput={(value) => set(a.message.msgId, value)}
            />
            <button type="button" onClick={() => void answer(a)}>
              Answer "{a.approvalPhrase}"
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}

export function Quarantines({ quarantines, reply }: { quarantines: OpenQuarantine[]; reply: Reply }) {
  const { reasons, set, withReason } = useReasons();
  const decide = async (q: OpenQuarantine, verb: "reinstate" | "retire", what: string) => {
    const sent = withReason(q.id, { text: `${verb} ${q.crow}`, refersTo: q.askMsgId, kind: "say" });
    if (await reply(sent, what)) set(q.id, "");
  };
  return (
    <section aria-label="Quarantines" class="asks">
      <h4>Quarantines</h4>
      {quarantines.length === 0 ? <p class="quiet">None.</p> : null}
      <ul>
        {quarantines.map((q) => (
          <li key={q.id}>
            {q.crow} is quarantined{q.retired ? " and retired: the mark stays on the books." : "."}{" "}
            {q.retired ? null : (
              <>
                <ReasonBox
                  id={`reason-quarantine-${q.id}`}
                  value={reasons[q.id] ?? ""}
                  onInput={(value) => set(q.id, value)}
                />
                <button type="button" onClick={() => void decide(q, "reinstate", `Reinstate ${q.crow}`)}>
                  Reinstate {q.crow}
                </button>{" "}
                <button type="button" onClick={() => void decide(q, "retire", `Retire ${q.crow}`)}>
                  Retire {q.crow}
                </button>
              </>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}

// Every nest and its members; a nest's newest 50 messages (older ones a page at a time), then live
// ones from nestMessages after the newest (kind, author, to, tagged_by, and a reply's reason), the
// owner's Message box, and the open asks and quarantines the owner answers (nest-asks.tsx).
import { useEffect, useState } from "preact/hooks";
import { follow, gql, mutate } from "./api.ts";
import { clock, TAGGERS } from "./steps.ts";
import { attempt } from "./status.ts";
import { useDebounced, useNow, useQuery } from "./hooks.ts";
import { NewNestForm, SpinCrowForm } from "./nest-forms.tsx";
import { type AskReply, OpenAsks, Quarantines } from "./nest-asks.tsx";

const MESSAGE_FIELDS = `msgId n kind author text to refersTo taggedBy ts reason`;
const NESTS = `query Nests { nests { id name crows } roster crows { name } }`;
/** Service roles a message may be addressed to in every nest (docs/contract.md); the Sentry takes no requests. */
const ADDRESSABLE_ROLES = ["Elder", "Quill", "Boss"];
const NEST_MESSAGES = `subscription NestMessages($nestId: ID!, $after: String) {
  nestMessages(nestId: $nestId, after: $after) { ${MESSAGE_FIELDS} }
}`;
const PAGE = 50;
const MESSAGE_PAGE = `query MessagePage($nestId: ID!, $before: String) {
  messagesConnection(nestId: $nestId, last: ${PAGE}, before: $before) { edges { node { ${MESSAGE_FIELDS} } } pageInfo { hasPreviousPage startCursor } }
}`;
const OPEN = `query Open($nestId: ID!) {
  asks(nestId: $nestId, resolved: "") { approvalPhrase deadline message { msgId author text } quarantine { crow } }
  quarantines(status: quarantined) { id crow nestId askMsgId retired }
}`;
const POST = `mutation Post($nestId: ID!, $text: String!, $to: String, $refersTo: String, $kind: String, $reason: String) {
  postMessage(nestId: $nestId, author: "owner", text: $text, to: $to, refersTo: $refersTo, kind: $kind, reason: $reason) {
    __typename ... on Message { msgId } ... on Error { code message }
  }
}`;

interface Nest {
  id: string;
  name: string;
  crows: string[];
}

interface Message {
  msgId: string;
  n: number;
  kind: string;
  author: string;
  text: string;
  to: string;
  refersTo: string;
  taggedBy: string;
  ts: string;
  /** The owner's reason with a reply to an ask, as the server stored it; null for none. */
  reason: string | null;
}

interface MessagePage {
  messagesConnection: {
    edges: Array<{ node: Message }>;
    pageInfo: { hasPreviousPage: boolean; startCursor: string | null };
  };
}

interface OpenData {
  asks: Array<{
    approvalPhrase: string;
    deadline: string;
    message: { msgId: string; author: string; text: string };
    quarantine: { crow: string } | null;
  }>;
  quarantines: Array<{ id: string; crow: string; nestId: string; askMsgId: string; retired: boolean }>;
}

export function NestsView() {
  const { data, reload } = useQuery<{ nests: Nest[]; roster: string[]; crows: Array<{ name: string }> }>(
    "Loading nests",
    NESTS,
  );
  const [selected, setSelected] = useState<string>("todo");
  const nests = data?.nests ?? [];
  const nest = nests.find((n) => n.id === selected);
  return (
    <section aria-labelledby="nests-heading" class="view">
      <h2 id="nests-heading">Nests</h2>
      <div class="split">
        <nav aria-label="Nest list" class="list-picker">
          <ul>
            {nests.map((n) => (
              <li key={n.id}>
                <button
                  type="button"
                  aria-current={n.id === selected ? "true" : undefined}
                  onClick={() => setSelected(n.id)}
                >
                  {n.name}
                </button>
                <span class="quiet members">{n.id === "todo" ? "the whole flock" : n.crows.join(", ")}</span>
              </li>
            ))}
          </ul>
        </nav>
        {nest ? (
          <NestRoom
            key={nest.id}
            nest={nest}
            addressable={[
              ...(nest.id === "todo"
                ? [...(data?.roster ?? []), ...(data?.crows ?? []).map((c) => c.name)]
                : nest.crows),
              ...ADDRESSABLE_ROLES,
            ]}
          />
        ) : null}
      </div>
      <div class="grow-forms">
        <NewNestForm
          crows={[...(data?.roster ?? []), ...(data?.crows ?? []).map((c) => c.name)]}
          onCreated={(id) => {
            void reload().then(() => setSelected(id));
          }}
        />
        <SpinCrowForm personas={data?.roster ?? []} onSpun={() => void reload()} />
      </div>
    </section>
  );
}

/** `addressable`: who the Message box may address (the members, then the service roles). */
function NestRoom({ nest, addressable }: { nest: Nest; addressable: string[] }) {
  const [messages, setMessages] = useState<Message[]>([]);
  // Where the page before the shown messages starts, while there is one.
  const [older, setOlder] = useState<string | null>(null);
  const [text, setText] = useState("");
  const [to, setTo] = useState("");
  const [posting, setPosting] = useState(false);
  const open = useQuery<OpenData>("Loading asks and quarantines", OPEN, { nestId: nest.id }, nest.id);
  const refreshOpen = useDebounced(() => void open.reload(), 200);
  const now = useNow();

  // The newest page first, then the live stream from just after it: a long-lived nest opens as
  // fast as a new one, and nothing falls between the page and the stream.
  useEffect(() => {
    let stop: (() => void) | undefined;
    let closed = false;
    void attempt(`Load ${nest.name}`, () => gql<MessagePage>(MESSAGE_PAGE, { nestId: nest.id })).then((page) => {
      if (closed || !page) return;
      const shown = page.messagesConnection.edges.map((e) => e.node);
      setMessages(shown);
      setOlder(page.messagesConnection.pageInfo.hasPreviousPage ? page.messagesConnection.pageInfo.startCursor : null);
      const newest = shown.at(-1)?.msgId ?? null;
      stop = follow<Message>({
        name: `nest ${nest.id}`,
        query: NEST_MESSAGES,
        field: "nestMessages",
        variables: (after) => ({ nestId: nest.id, after: after === null ? newest : String(after) }),
        cursorOf: (m) => m.n,
        resumeWith: (m) => m.msgId,
        onItem: (m) => {
          setMessages((old) => [...old, m]);
          if (m.kind === "ask_owner" || m.kind === "flag" || m.author === "owner") refreshOpen();
        },
      });
    });
    return () => {
      closed = true;
      stop?.();
    };
  }, [nest.id]);

  const showOlder = async () => {
    const page = await attempt(`Load older messages of ${nest.name}`, () =>
      gql<MessagePage>(MESSAGE_PAGE, { nestId: nest.id, before: older }),
    );
    if (!page) return;
    setMessages((shown) => [...page.messagesConnection.edges.map((e) => e.node), ...shown]);
    setOlder(page.messagesConnection.pageInfo.hasPreviousPage ? page.messagesConnection.pageInfo.startCursor : null);
  };

  // The owner's decisions (an ask's phrase, reinstate, retire) go out as a plain say: a reply, never
  // something Jev could tag as a new request for the crows to claim.
  const post = async (body: { text: string; to?: string } | AskReply, what: string) => {
    setPosting(true);
    const result = await attempt(what, () => mutate("postMessage", POST, { nestId: nest.id, ...body }));
    setPosting(false);
    refreshOpen();
    return result;
  };

  const quarantines = (open.data?.quarantines ?? []).filter((q) => q.nestId === nest.id);
  return (
    <article class="nest" aria-label={`Nest ${nest.name}`}>
      <h3>{nest.name}</h3>
      <p class="quiet">Members: {nest.id === "todo" ? "the whole flock" : nest.crows.join(", ")}</p>
      {older ? (
        <button type="button" class="older" onClick={() => void showOlder()}>
          Older messages
        </button>
      ) : null}
      <ol class="messages" aria-label="Messages">
        {messages.map((m) => (
          <li
            key={m.msgId}
            title={m.msgId}
            class={`message kind-${m.kind}`}
            data-kind={m.kind}
            aria-label={`${m.author} ${m.kind}`}
          >
            <p class="meta">
              <span class="tag">{m.kind}</span> <strong class="author">{m.author}</strong>
              {m.to ? <> → {m.to}</> : null}{" "}
              <span class="quiet">
                {TAGGERS[m.taggedBy] ?? "kind tagged"} <span class="tagged-by">(tagged by {m.taggedBy})</span> ·{" "}
                {clock(m.ts)} · {m.msgId}
              </span>
              {m.refersTo ? <span class="quiet"> · re {m.refersTo}</span> : null}
            </p>
            <p class="text">{m.text}</p>
            {m.reason ? <p class="reason-given">Reason: {m.reason}</p> : null}
          </li>
        ))}
      </ol>
      <form
        class="post"
        onSubmit={async (e) => {
          e.preventDefault();
          if (await post(to ? { text, to } : { text }, `Post in ${nest.name}`)) setText("");
        }}
      >
        <div>
          <label for={`to-${nest.id}`}>To</label>
          <select id={`to-${nest.id}`} value={to} onChange={(e) => setTo(e.currentTarget.value)}>
            <option value="">the room (or start the text with @Name)</option>
            {addressable.map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label for={`message-${nest.id}`}>Message</label>
          <textarea
            id={`message-${nest.id}`}
            rows={2}
            value={text}
            onInput={(e) => setText(e.currentTarget.value)}
            required
          />
        </div>
        <button type="submit" disabled={posting}>
          Post
        </button>
      </form>
      <OpenAsks asks={open.data?.asks ?? []} now={now} reply={async (r, what) => !!(await post(r, what))} />
      <Quarantines quarantines={quarantines} reply={async (r, what) => !!(await post(r, what))} />
    </article>
  );
}

// Send a list, pick one, and watch it live from listEvents: items and their stages, crows flying
// and landing, answers, verdicts, banter, tokens against the budget, and "finished".
import { useEffect, useReducer, useRef, useState } from "preact/hooks";
import { follow, mutate } from "./api.ts";
import { attempt } from "./status.ts";
import { useDebounced, useQuery } from "./hooks.ts";
import { approvalListeners } from "./approvals.tsx";
import { ItemWeather, useFlightWeather } from "./weather.tsx";
import { clock, latency, summarize, usePersonas } from "./steps.ts";
import { EMPTY, reduce, type ListEvent } from "./list-fold.ts";

const SUBMIT = `mutation Submit($text: String!, $requester: String!, $nestId: String) {
  submitList(text: $text, requester: $requester, nestId: $nestId) {
    __typename ... on SubmittedList { listId } ... on Error { code message }
  }
}`;

const LISTS = `query Lists { lists(limit: 20) { id requester nestId status createdAt items { id text } } nests { id name } }`;
const LIST = `query List($id: ID!) { list(id: $id) { id requester nestId tokenBudget } }`;
const LIST_EVENTS = `subscription ListEvents($id: ID!, $after: Int) { listEvents(listId: $id, after: $after) { seq name ts payload } }`;

interface ListsData {
  lists: Array<{
    id: string;
    requester: string;
    nestId: string;
    status: string;
    createdAt: string;
    items: Array<{ id: string; text: string }>;
  }>;
  nests: Array<{ id: string; name: string }>;
}

export function ListsView({ selected, onSelect }: { selected: string | null; onSelect: (id: string) => void }) {
  const { data, reload } = useQuery<ListsData>("Loading lists", LISTS);
  const refresh = useDebounced(() => void reload(), 300);
  // A list sent from elsewhere (curl, another tab) shows up when its first approval opens.
  const known = useRef(new Set<string>());
  known.current = new Set((data?.lists ?? []).map((l) => l.id));
  useEffect(() => {
    const onChange = (c: { change: string; listId: string }) => {
      if (c.change === "opened" && !known.current.has(c.listId)) refresh();
    };
    approvalListeners.add(onChange);
    return () => void approvalListeners.delete(onChange);
  }, [refresh]);
  return (
    <section aria-labelledby="lists-heading" class="view">
      <h2 id="lists-heading">Lists</h2>
      <SendForm
        nests={data?.nests ?? []}
        onSent={(id) => {
          onSelect(id);
          void reload();
        }}
      />
      <div class="split">
        <nav aria-label="Recent lists" class="list-picker">
          <h3>Recent lists</h3>
          <ul>
            {(data?.lists ?? []).map((l) => (
              <li key={l.id}>
                <button
                  type="button"
                  aria-current={selected === l.id ? "true" : undefined}
                  onClick={() => onSelect(l.id)}
                >
                  <span class="list-name">{listName(l.items)}</span>{" "}
                  <span class="quiet">
                    · {plural(l.items.length, "item")} · {l.nestId} · {l.status} · {l.id}
                  </span>
                </button>
              </li>
            ))}
          </ul>
        </nav>
        {selected ? (
          <ListView key={selected} listId={selected} onFinished={refresh} />
        ) : (
          <p class="quiet">Send a list or pick one.</p>
        )}
      </div>
    </section>
  );
}

/** "3 items", "1 item". */
export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** A list's name as a person reads it: its first item's text, and how many more. */
export function listName(items: Array<{ text: string }>): string {
  if (items.length === 0) return "(empty list)";
  const first = items[0]!.text.length > 48 ? `${items[0]!.text.slice(0, 47)}…` : items[0]!.text;
  return items.length === 1 ? first : `${first} +${items.length - 1} more`;
}

function SendForm({ nests, onSent }: { nests: Array<{ id: string; name: string }>; onSent: (listId: string) => void }) {
  const [text, setText] = useState("");
  const [requester, setRequester] = useState("owner");
  const [nestId, setNestId] = useState("");
  const [sending, setSending] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setSending(true);
    const result = await attempt("Send the list", () =>
      mutate<{ listId: string }>("submitList", SUBMIT, { text, requester, nestId: nestId || null }),
    );
    setSending(false);
    if (result) {
      setText("");
      onSent(result.listId);
    }
  };
  return (
    <form class="send" onSubmit={(e) => void submit(e)} aria-label="Send a list">
      <label for="todo-text">Todo list</label>
      <textarea
        id="todo-text"
        rows={4}
        value={text}
        onInput={(e) => setText(e.currentTarget.value)}
        placeholder={"- Buy milk\n- Write a haiku about crows"}
        required
      />
      <div class="row">
        <div>
          <label for="requester">Requester</label>
          <input id="requester" value={requester} onInput={(e) => setRequester(e.currentTarget.value)} required />
        </div>
        <div>
          <label for="nest-pick">Nest</label>
          <select id="nest-pick" value={nestId} onChange={(e) => setNestId(e.currentTarget.value)}>
            <option value="">todo (default)</option>
            {nests
              .filter((n) => n.id !== "todo")
              .map((n) => (
                <option key={n.id} value={n.id}>
                  {n.name}
                </option>
              ))}
          </select>
        </div>
        <button type="submit" disabled={sending}>
          Send
        </button>
      </div>
    </form>
  );
}

function ListView({ listId, onFinished }: { listId: string; onFinished: () => void }) {
  const [state, dispatch] = useReducer(reduce, EMPTY);
  const { data } = useQuery<{ list: { tokenBudget: number; requester: string; nestId: string } | null }>(
    "Loading the list",
    LIST,
    { id: listId },
    listId,
  );
  useEffect(
    () =>
      follow<ListEvent>({
        name: `list ${listId}`,
        query: LIST_EVENTS,
        field: "listEvents",
        variables: (after) => ({ id: listId, after: after ?? 0 }),
        cursorOf: (e) => e.seq,
        onItem: (e) => {
          dispatch(e);
          if (e.name === "list.finished") onFinished();
        },
      }),
    [listId],
  );
  // Only while the list runs: once it is known finished (its stream replayed list.finished) no
  // flight can wait or stream, and two idle streams per finished list would cost for nothing.
  const weather = useFlightWeather(listId, state.events.length > 0 && !state.finished);
  const budget = state.budget ?? data?.list?.tokenBudget;
  const itemTexts = new Map(state.items.map((i) => [i.id, i.text]));
  const personas = usePersonas();
  const persona = (crow: string) => personas.get(crow);
  return (
    <article class="list" aria-label={`List ${listId}`}>
      <header class="list-head">
        {state.items.length ? <p class="list-title">{listName(state.items)}</p> : null}
        <h3 class="list-id">List {listId}</h3>
        <p>
          {data?.list ? `${data.list.requester} · nest ${data.list.nestId} · ` : ""}
          <span class="tokens">
            Tokens: {state.tokens} of {budget ?? "?"}
          </span>{" "}
          · <strong class="list-status">{state.finished ? "finished" : "running"}</strong>
        </p>
      </header>
      <ol class="items">
        {state.items.map((item) => (
          <li key={item.id} class="item" aria-label={`Item ${item.text}`}>
            <p>
              <strong>{item.text}</strong> <span class="tag stage">{item.stage}</span>
              {item.mode ? (
                <span class="quiet">
                  {" "}
                  · {item.mode} · {item.taskType}
                </span>
              ) : null}
            </p>
            {item.subtasks.length ? (
              <ol class="subtasks">
                {item.subtasks.map((s, i) => (
                  <li key={i}>{s}</li>
                ))}
              </ol>
            ) : null}
            {item.reason ? <p class="quiet">Sentry: {item.reason}</p> : null}
            {item.flights.length ? (
              <ul class="flights" aria-label="Crows">
                {item.flights.map((f, i) => (
                  <li key={i}>
                    {f.crow}
                    {f.borrowed ? " (borrowed)" : ""}
                    {persona(f.crow) ? <span class="quiet"> ({persona(f.crow)})</span> : null}:{" "}
                    {f.landed
                      ? f.landed.ok
                        ? `landed, ${f.landed.tokens} tokens`
                        : `landed with an error: ${f.landed.error ?? "failed"}`
                      : "flying"}
                    {f.landed ? <span class="quiet latency"> · {latency(f.flewAt, f.landed.at)}</span> : null}
                  </li>
                ))}
              </ul>
            ) : null}
            <ItemWeather
              itemId={item.id}
              weather={weather}
              answered={item.answer !== undefined || item.stage.startsWith("skipped")}
            />
            {item.answer ? (
              <blockquote class="answer">
                {item.answer}
                <footer>— {item.crows.join(", ")}</footer>
              </blockquote>
            ) : null}
            {item.verdicts.length ? (
              <p class="verdicts">Verdicts: {item.verdicts.map((v) => `${v.target} ${v.verdict}`).join(", ")}</p>
            ) : null}
          </li>
        ))}
      </ol>
      {state.pranks.map((m, i) => (
        <p key={i} class="prank">
          {m}
        </p>
      ))}
      {state.banter.length ? (
        <section aria-label="Banter">
          <h4>Banter</h4>
          <ul class="banter">
            {state.banter.map((b) => (
              <li key={b.seq}>
                <strong>{b.crow}</strong> to {b.to}: {b.text}
              </li>
            ))}
          </ul>
        </section>
      ) : null}
      <details>
        <summary>Events ({state.events.length})</summary>
        <ol class="events" aria-label="Events">
          {state.events.map((e) => (
            <li key={e.seq} data-seq={e.seq}>
              <span class="quiet">{e.seq}</span> <time dateTime={e.ts}>{clock(e.ts)}</time> <strong>{e.name}</strong>{" "}
              <span class="summary">{summarize(e, itemTexts)}</span>
              <details class="payload">
                <summary>payload</summary>
                <pre>{JSON.stringify(e.payload, null, 2)}</pre>
              </details>
            </li>
          ))}
        </ol>
      </details>
    </article>
  );
}

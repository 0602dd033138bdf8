// The ledger as holder x task type with level names and streaks, refreshed live on every
// trustChanges event, with each holder's history and the latest changes.
import { useEffect, useState } from "preact/hooks";
import { follow } from "./api.ts";
import { useDebounced, useQuery } from "./hooks.ts";
import { approvalListeners } from "./approvals.tsx";

// Each record's newest 20 verdicts: the ledger's answer stays the same size however old it is.
const TRUST = `query Trust { trust { holder taskType level levelName streak approvals rejections autos historyTotal history(last: 20) { verdict subject from to at } } }`;
const TRUST_CHANGES = `subscription TrustChanges($after: Int) { trustChanges(after: $after) { id holder taskType from to listId ts } }`;
const LEVELS = ["stranger", "regular", "trusted"];

interface TrustRow {
  holder: string;
  taskType: string;
  level: number;
  levelName: string;
  streak: number;
  approvals: number;
  rejections: number;
  autos: number;
  historyTotal: number;
  history: Array<{ verdict: string; subject: string; from: number; to: number; at: string }>;
}

interface Change {
  id: number;
  holder: string;
  taskType: string;
  from: number;
  to: number;
  listId: string | null;
  ts: string;
}

export function TrustView() {
  const { data, reload } = useQuery<{ trust: TrustRow[] }>("Loading the ledger", TRUST);
  const refresh = useDebounced(() => void reload(), 200);
  const [changes, setChanges] = useState<Change[]>([]);
  useEffect(
    () =>
      follow<Change>({
        name: "trust",
        query: TRUST_CHANGES,
        field: "trustChanges",
        variables: (after) => ({ after: after ?? 0 }),
        cursorOf: (c) => c.id,
        onItem: (c) => {
          setChanges((old) => [c, ...old].slice(0, 50));
          refresh();
        },
      }),
    [],
  );
  // Verdicts move streaks and counts without a level change: refresh on every approval the feed
  // closes too. Auto verdicts (trust skipped the owner) close nothing, so a slow poll covers them.
  useEffect(() => {
    const onChange = (c: { change: string }) => c.change === "closed" && refresh();
    approvalListeners.add(onChange);
    const timer = setInterval(() => void reload(), 10_000);
    return () => {
      approvalListeners.delete(onChange);
      clearInterval(timer);
    };
  }, [reload, refresh]);

  const rows = data?.trust ?? [];
  const holders = [...new Set(rows.map((r) => r.holder))];
  const types = [...new Set(rows.map((r) => r.taskType))].sort();
  const cell = (holder: string, type: string) => rows.find((r) => r.holder === holder && r.taskType === type);
  return (
    <section aria-labelledby="trust-heading" class="view">
      <h2 id="trust-heading">Trust</h2>
      {rows.length === 0 ? <p class="quiet">No verdict has touched the ledger yet.</p> : null}
      {rows.length ? (
        <table class="ledger" aria-label="Ledger">
          <thead>
            <tr>
              <th scope="col">Holder</th>
              {types.map((t) => (
                <th scope="col" key={t}>
                  {t}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {holders.map((h) => (
              <tr key={h}>
                <th scope="row">{h}</th>
                {types.map((t) => {
                  const r = cell(h, t);
                  return (
                    <td key={t} class={r ? `level-${r.level}` : "empty"}>
                      {r ? (
                        <>
                          <span class="level">{r.levelName}</span> <span class="streak">streak {r.streak}</span>
                          <br />
                          <span class="quiet">
                            +{r.approvals} −{r.rejections} auto {r.autos}
                          </span>
                        </>
                      ) : (
                        ""
                      )}
                    </td>
                  );
                })}
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <h3>Level changes</h3>
      <ul class="changes" aria-label="Level changes">
        {changes.length === 0 ? <li class="quiet">None yet.</li> : null}
        {changes.map((c) => (
          <li key={c.id}>
            {c.holder} on {c.taskType}: {LEVELS[c.from] ?? c.from} → {LEVELS[c.to] ?? c.to}{" "}
            <span class="quiet">{new Date(c.ts).toLocaleTimeString()}</span>
          </li>
        ))}
      </ul>
      <h3>History by holder</h3>
      {holders.map((h) => (
        <details key={h}>
          <summary>
            {h}{" "}
            <span class="quiet">
              (the newest 20 verdicts of each task type;{" "}
              {rows.filter((r) => r.holder === h).reduce((sum, r) => sum + r.historyTotal, 0)} in all)
            </span>
          </summary>
          <ol class="history">
            {rows
              .filter((r) => r.holder === h)
              .flatMap((r) => r.history.map((e) => ({ ...e, taskType: r.taskType })))
              .sort((a, b) => Date.parse(a.at) - Date.parse(b.at))
              .map((e, i) => (
                <li key={i}>
                  {new Date(e.at).toLocaleTimeString()} · {e.taskType} · {e.verdict} on {e.subject} ·{" "}
                  {LEVELS[e.from] ?? e.from} → {LEVELS[e.to] ?? e.to}
                </li>
              ))}
          </ol>
        </details>
      ))}
    </section>
  );
}

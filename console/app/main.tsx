// The owner console: one page, served by the crows server at /. Views: Lists (send and watch),
// Trust, Nests, Crows, Classifier, Tokens, Webhooks, Tools; the Approvals region (and who decided the latest
// ones) stays in view beside them. The view and the open list live in the URL hash, so a reload keeps
// the owner's place. "Notify me" turns on browser notifications for new approvals and asks (notify.ts).
import "./styles.css";
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { Approvals } from "./approvals.tsx";
import { ListsView } from "./lists.tsx";
import { TrustView } from "./trust.tsx";
import { NestsView } from "./nests.tsx";
import { ClassifierView, CrowsView } from "./crows.tsx";
import { TokensView } from "./tokens.tsx";
import { Decisions } from "./decisions.tsx";
import { WebhooksView } from "./webhooks.tsx";
import { ToolsView } from "./tools.tsx";
import { Reminders } from "./reminders.tsx";
import { askPermission, onPermissionChange, permission, startAskPolling } from "./notify.ts";
import { useStatus } from "./hooks.ts";
import { dismissError, reportError } from "./status.ts";

const VIEWS = ["Lists", "Trust", "Nests", "Crows", "Classifier", "Tokens", "Webhooks", "Tools"] as const;
type View = (typeof VIEWS)[number];

function readHash(): { view: View; listId: string | null } {
  const [name, listId] = decodeURIComponent(location.hash.slice(1)).split("/");
  const view = VIEWS.find((v) => v.toLowerCase() === (name ?? "").toLowerCase()) ?? "Lists";
  return { view, listId: view === "Lists" && listId ? listId : null };
}

function App() {
  const [place, setPlace] = useState(readHash);
  useEffect(() => {
    const onHash = () => setPlace(readHash());
    addEventListener("hashchange", onHash);
    return () => removeEventListener("hashchange", onHash);
  }, []);
  useEffect(() => startAskPolling(), []);
  const go = (view: View, listId: string | null = null) => {
    location.hash = listId ? `${view.toLowerCase()}/${listId}` : view.toLowerCase();
  };
  return (
    <>
      <header class="top">
        <h1>crows</h1>
        <nav aria-label="Views">
          {VIEWS.map((v) => (
            <button type="button" key={v} aria-current={place.view === v ? "page" : undefined} onClick={() => go(v)}>
              {v}
            </button>
          ))}
        </nav>
        <NotifyControl />
        <Connections />
      </header>
      <Errors />
      <div class="layout">
        <main>
          {place.view === "Lists" ? <ListsView selected={place.listId} onSelect={(id) => go("Lists", id)} /> : null}
          {place.view === "Trust" ? <TrustView /> : null}
          {place.view === "Nests" ? <NestsView /> : null}
          {place.view === "Crows" ? <CrowsView /> : null}
          {place.view === "Classifier" ? <ClassifierView /> : null}
          {place.view === "Tokens" ? <TokensView /> : null}
          {place.view === "Webhooks" ? <WebhooksView /> : null}
          {place.view === "Tools" ? <ToolsView /> : null}
        </main>
        <aside>
          <Reminders />
          <Approvals onOpenList={(id) => go("Lists", id)} />
          <Decisions />
        </aside>
      </div>
    </>
  );
}

/** "Notify me": asks the browser's permission; says so once granted or refused. */
function NotifyControl() {
  const [state, setState] = useState(permission);
  useEffect(() => onPermissionChange(() => setState(permission())), []);
  if (state === "unsupported") return null;
  if (state === "granted") return <p class="quiet notify">Notifications on</p>;
  if (state === "denied") return <p class="quiet notify">Notifications blocked in this browser</p>;
  return (
    <button type="button" onClick={() => void askPermission()}>
      Notify me
    </button>
  );
}

function Connections() {
  const { streams } = useStatus();
  const states = [...streams.entries()];
  const down = states.filter(([, s]) => s !== "live");
  return (
    <p class={`connections ${down.length ? "down" : "up"}`} role="status" aria-label="Connection">
      {states.length === 0
        ? ""
        : down.length === 0
          ? `live (${states.length} streams)`
          : down.map(([n, s]) => `${n}: ${s}`).join(", ")}
    </p>
  );
}

function Errors() {
  const { errors } = useStatus();
  if (errors.length === 0) return null;
  return (
    <section class="errors" role="alert" aria-label="Errors">
      <ul>
        {errors.map((e) => (
          <li key={e.id}>
            <span>{e.text}</span>{" "}
            <button type="button" onClick={() => dismissError(e.id)} aria-label={`Dismiss: ${e.text}`}>
              Dismiss
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}

// A failure nobody caught is still the owner's to see.
addEventListener("unhandledrejection", (event) =>
  reportError(`Unexpected: ${String((event as PromiseRejectionEvent).reason)}`),
);

render(<App />, document.getElementById("console")!);

// The Webhooks view: every endpoint (never a secret), adding one (its secret shown this once),
// rotating a secret, removing an endpoint, and an endpoint's recent deliveries with their attempts.
import { ConfirmButton, CopyButton } from "./confirm.tsx";
import { useState } from "preact/hooks";
import { mutate } from "./api.ts";
import { useQuery } from "./hooks.ts";
import { attempt } from "./status.ts";

const TYPES = [
  "approval.requested",
  "approval.decided",
  "approval.reminder",
  "list.finished",
  "item.skipped",
  "ask.opened",
  "ask.resolved",
  "crow.flagged",
  "trust.changed",
];

const ENDPOINTS = `query Webhooks { webhooks { __typename ... on QueryWebhooksSuccess { data { id url events description disabled disabledReason failingSince createdAt format } } ... on Error { message } } }`;
const DELIVERIES = `query Deliveries($id: ID!) { webhookDeliveries(id: $id, limit: 50) { ... on WebhookDeliveryPage { deliveries { id eventId type state nextAttemptAt attempts { at status durationMs error } } } ... on Error { message } } }`;
const ADD = `mutation Add($url: String!, $events: [String!], $description: String, $format: String) { addWebhook(url: $url, events: $events, description: $description, format: $format) { __typename ... on WebhookSecret { secret endpoint { id } } ... on Error { code message } } }`;
const ROTATE = `mutation Rotate($id: ID!) { rotateWebhookSecret(id: $id) { __typename ... on WebhookSecret { secret previousSecretExpiresAt endpoint { id } } ... on Error { code message } } }`;
const REMOVE = `mutation Remove($id: ID!) { removeWebhook(id: $id) { __typename ... on Error { code message } } }`;

interface Endpoint {
  id: string;
  url: string;
  events: string[];
  description: string;
  disabled: boolean;
  disabledReason: string | null;
  failingSince: string | null;
  createdAt: string;
  format: string;
}

/** The body's shape an endpoint asks for (docs/webhooks.md "Formats"). */
const FORMATS = [
  ["standard", "Standard Webhooks (JSON)"],
  ["slack", "Slack incoming webhook"],
  ["discord", "Discord webhook"],
  ["ntfy", "ntfy topic"],
] as const;

export function WebhooksView() {
  const { data, reload } = useQuery<{ webhooks: { data?: Endpoint[]; message?: string } }>(
    "Loading webhooks",
    ENDPOINTS,
  );
  const [url, setUrl] = useState("");
  const [description, setDescription] = useState("");
  const [format, setFormat] = useState("standard");
  const [events, setEvents] = useState<Set<string>>(new Set());
  const [shown, setShown] = useState<{ id: string; secret: string } | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const endpoints = data?.webhooks.data ?? [];

  const add = async (event: Event) => {
    event.preventDefault();
    const result = await attempt("Add webhook", () =>
      mutate<{ secret: string; endpoint: { id: string } }>("addWebhook", ADD, {
        url,
        events: [...events],
        description,
        format,
      }),
    );
    if (result) {
      setShown({ id: result.endpoint.id, secret: result.secret });
      setUrl("");
      setDescription("");
      setFormat("standard");
      setEvents(new Set());
      void reload();
    }
  };
  const rotate = async (id: string) => {
    const result = await attempt("Rotate secret", () =>
      mutate<{ secret: string }>("rotateWebhookSecret", ROTATE, { id }),
    );
    if (result) setShown({ id, secret: result.secret });
  };
  const remove = async (id: string) => {
    if (await attempt("Remove webhook", () => mutate("removeWebhook", REMOVE, { id }))) void reload();
  };
  const toggle = (type: string) =>
    setEvents((old) => {
      const next = new Set(old);
      if (next.has(type)) next.delete(type);
      else next.add(type);
      return next;
    });

  return (
    <section aria-labelledby="webhooks-heading" class="view">
      <h2 id="webhooks-heading">Webhooks</h2>
      {data?.webhooks.message ? <p class="quiet">{data.webhooks.message}</p> : null}
      {shown ? (
        <p role="status" class="secret">
          Secret for {shown.id}, shown only now: <code>{shown.secret}</code>{" "}
          <CopyButton text={shown.secret} what="webhook secret" />{" "}
          <button type="button" onClick={() => setShown(null)}>
            I have kept it
          </button>
        </p>
      ) : null}
      {endpoints.length === 0 ? <p class="quiet">No endpoints yet.</p> : null}
      <ul class="cards">
        {endpoints.map((e) => (
          <li key={e.id} class="card" aria-label={`Webhook ${e.url}`}>
            <p class="card-title">
              <strong>{e.url}</strong> {e.disabled ? <span class="tag output">disabled</span> : null}
            </p>
            <p class="quiet">
              {e.description ? `${e.description} · ` : ""}
              {e.format !== "standard" ? `${e.format} · ` : ""}
              {e.events.length === 0 ? "every event" : e.events.join(", ")}
              {e.failingSince ? ` · failing since ${e.failingSince}` : ""}
            </p>
            {e.disabledReason ? <p>{e.disabledReason}</p> : null}
            <div class="actions">
              <button type="button" onClick={() => setOpen(open === e.id ? null : e.id)}>
                Deliveries
              </button>
              <button type="button" onClick={() => void rotate(e.id)}>
                Rotate secret
              </button>
              <ConfirmButton
                label="Remove"
                question={`Remove ${e.url}? Its deliveries stop.`}
                confirmLabel="Yes, remove"
                onConfirm={() => void remove(e.id)}
              />
            </div>
            {open === e.id ? <Deliveries id={e.id} /> : null}
          </li>
        ))}
      </ul>
      <form onSubmit={(event) => void add(event)} aria-label="Add a webhook">
        <h3>Add an endpoint</h3>
        <label>
          URL{" "}
          <input
            type="url"
            required
            value={url}
            onInput={(event) => setUrl((event.target as HTMLInputElement).value)}
            placeholder="the receiver's https URL"
          />
        </label>
        <label>
          Description{" "}
          <input value={description} onInput={(event) => setDescription((event.target as HTMLInputElement).value)} />
        </label>
        <label>
          Format{" "}
          <select value={format} onChange={(event) => setFormat((event.target as HTMLSelectElement).value)}>
            {FORMATS.map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <fieldset>
          <legend>Events (none ticked: every event)</legend>
          {TYPES.map((t) => (
            <label key={t} class="inline">
              <input type="checkbox" checked={events.has(t)} onChange={() => toggle(t)} /> {t}
            </label>
          ))}
        </fieldset>
        <button type="submit">Add</button>
      </form>
    </section>
  );
}

function Deliveries({ id }: { id: string }) {
  const { data, reload } = useQuery<{
    webhookDeliveries: {
      deliveries?: Array<{
        id: string;
        eventId: number;
        type: string;
        state: string;
        nextAttemptAt: string | null;
        attempts: Array<{ at: string; status: number | null; durationMs: number; error: string | null }>;
      }>;
    };
  }>("Loading deliveries", DELIVERIES, { id }, id);
  return (
    <div>
      <button type="button" onClick={() => void reload()}>
        Refresh
      </button>
      <table aria-label="Deliveries">
        <thead>
          <tr>
            <th scope="col">webhook-id</th>
            <th scope="col">Type</th>
            <th scope="col">State</th>
            <th scope="col">Last attempt</th>
          </tr>
        </thead>
        <tbody>
          {(data?.webhookDeliveries.deliveries ?? []).map((d) => {
            const last = d.attempts[d.attempts.length - 1];
            return (
              <tr key={d.id}>
                <td>{d.id}</td>
                <td>{d.type}</td>
                <td>
                  {d.state}
                  {d.nextAttemptAt && d.state === "pending" ? ` (next ${d.nextAttemptAt})` : ""}
                </td>
                <td>
                  {last
                    ? `${last.status ?? "no answer"} in ${last.durationMs} ms${last.error ? `: ${last.error}` : ""}`
                    : ""}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

// The Tools view: the MCP servers the owner connected, each with its state (up, down, last error,
// tools, calls, errors) and, opened, its tools with their policies (allow, ask, deny, or back to
// the default), adding a server (env and header values are sent once and never shown again: only
// their names come back) and removing one (docs/tools.md).
import { useState } from "preact/hooks";
import { mutate } from "./api.ts";
import { useQuery } from "./hooks.ts";
import { attempt } from "./status.ts";

const SERVERS = `query ToolServers { toolServers { __typename ... on QueryToolServersSuccess { data { id name transport command args url envNames headerNames nests state { status lastError tools toolsDropped calls errors restarts } } } ... on Error { message } } }`;
const TOOLS = `query ToolServerTools($id: ID!) { toolServer(id: $id) { __typename ... on ToolServer { id state { status lastError } tools { name description policy defaultPolicy readOnlyHint } } ... on Error { message } } }`;
const ADD = `mutation AddToolServer($name: String!, $command: String, $args: [String!], $env: [NameValueInput!], $url: String, $headers: [NameValueInput!]) { addToolServer(name: $name, command: $command, args: $args, env: $env, url: $url, headers: $headers) { __typename ... on ToolServer { id } ... on Error { code message } } }`;
const REMOVE = `mutation RemoveToolServer($id: ID!) { removeToolServer(id: $id) { __typename ... on Error { code message } } }`;
const SET_POLICY = `mutation SetToolPolicy($id: ID!, $tool: String!, $policy: String) { setToolPolicies(id: $id, policies: [{ tool: $tool, policy: $policy }]) { __typename ... on ToolServer { id } ... on Error { code message } } }`;

interface ServerRow {
  id: string;
  name: string;
  transport: string;
  command: string;
  args: string[];
  url: string;
  envNames: string[];
  headerNames: string[];
  nests: string[] | null;
  state: {
    status: string;
    lastError: string | null;
    tools: number | null;
    toolsDropped: number;
    calls: number;
    errors: number;
    restarts: number;
  };
}

/** NAME=VALUE lines as name/value pairs (blank lines skipped). */
const pairsOf = (text: string) =>
  text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "")
    .map((line) => {
      const at = line.indexOf("=");
      return at > 0 ? { name: line.slice(0, at), value: line.slice(at + 1) } : { name: line, value: "" };
    });

export function ToolsView() {
  const { data, reload } = useQuery<{ toolServers: { data?: ServerRow[]; message?: string } }>(
    "Loading tool servers",
    SERVERS,
  );
  const [open, setOpen] = useState<string | null>(null);
  const [kind, setKind] = useState<"stdio" | "http">("stdio");
  const [name, setName] = useState("");
  const [command, setCommand] = useState("");
  const [args, setArgs] = useState("");
  const [url, setUrl] = useState("");
  const [secrets, setSecrets] = useState("");
  const servers = data?.toolServers.data ?? [];

  const add = async (event: Event) => {
    event.preventDefault();
    const pairs = pairsOf(secrets);
    const variables =
      kind === "stdio"
        ? { name, command, args: args.split("\n").filter((a) => a.trim() !== ""), env: pairs }
        : { name, url, headers: pairs };
    if (await attempt("Add tool server", () => mutate("addToolServer", ADD, variables))) {
      setName("");
      setCommand("");
      setArgs("");
      setUrl("");
      setSecrets(""); // the values are gone from the page too
      void reload();
    }
  };
  const remove = async (id: string) => {
    if (await attempt("Remove tool server", () => mutate("removeToolServer", REMOVE, { id }))) void reload();
  };

  return (
    <section aria-labelledby="tools-heading" class="view">
      <h2 id="tools-heading">Tools</h2>
      {data?.toolServers.message ? <p class="quiet">{data.toolServers.message}</p> : null}
      {servers.length === 0 ? <p class="quiet">No tool servers yet.</p> : null}
      <ul class="cards">
        {servers.map((s) => (
          <li key={s.id} class="card" aria-label={`Tool server ${s.name}`}>
            <p class="card-title">
              <strong>{s.name}</strong> <span class="tag">{s.state.status}</span>{" "}
              <span class="quiet">{s.transport === "http" ? s.url : [s.command, ...s.args].join(" ")}</span>
            </p>
            <p class="quiet">
              {s.state.tools === null ? "tools not listed yet" : `${s.state.tools} tools`}
              {s.state.toolsDropped > 0 ? ` (${s.state.toolsDropped} left out)` : ""} · {s.state.calls} calls ·{" "}
              {s.state.errors} errors
              {s.state.restarts > 0 ? ` · ${s.state.restarts} restarts` : ""}
              {" · "}
              {s.nests === null ? "every nest" : `nests: ${s.nests.join(", ")}`}
              {s.envNames.length + s.headerNames.length > 0
                ? ` · secrets: ${[...s.envNames, ...s.headerNames].join(", ")}`
                : ""}
            </p>
            {s.state.lastError ? <p>Last error: {s.state.lastError}</p> : null}
            <div class="actions">
              <button type="button" onClick={() => setOpen(open === s.id ? null : s.id)}>
                Tools and policies
              </button>
              <button type="button" class="reject" onClick={() => void remove(s.id)}>
                Remove
              </button>
            </div>
            {open === s.id ? <Tools id={s.id} onChanged={() => void reload()} /> : null}
          </li>
        ))}
      </ul>
      <form onSubmit={(event) => void add(event)} aria-label="Add a tool server">
        <h3>Connect a tool server</h3>
        <fieldset>
          <legend>Kind</legend>
          <label class="inline">
            <input type="radio" checked={kind === "stdio"} onChange={() => setKind("stdio")} /> a command (stdio)
          </label>
          <label class="inline">
            <input type="radio" checked={kind === "http"} onChange={() => setKind("http")} /> a URL (Streamable HTTP)
          </label>
        </fieldset>
        <label>
          Name <input required value={name} onInput={(event) => setName((event.target as HTMLInputElement).value)} />
        </label>
        {kind === "stdio" ? (
          <>
            <label>
              Command{" "}
              <input
                required
                value={command}
                onInput={(event) => setCommand((event.target as HTMLInputElement).value)}
                placeholder="npx"
              />
            </label>
            <label>
              Arguments, one per line{" "}
              <textarea value={args} onInput={(event) => setArgs((event.target as HTMLTextAreaElement).value)} />
            </label>
          </>
        ) : (
          <label>
            URL{" "}
            <input
              type="url"
              required
              value={url}
              onInput={(event) => setUrl((event.target as HTMLInputElement).value)}
            />
          </label>
        )}
        <label>
          {kind === "stdio" ? "Environment" : "Headers"}, NAME=VALUE per line (sent once, never shown again){" "}
          <textarea
            name="secrets"
            value={secrets}
            autocomplete="off"
            onInput={(event) => setSecrets((event.target as HTMLTextAreaElement).value)}
          />
        </label>
        <button type="submit">Connect</button>
      </form>
    </section>
  );
}

function Tools({ id, onChanged }: { id: string; onChanged: () => void }) {
  const { data, reload } = useQuery<{
    toolServer: {
      state?: { status: string; lastError: string | null };
      tools?: Array<{
        name: string;
        description: string;
        policy: string;
        defaultPolicy: string;
        readOnlyHint: boolean | null;
      }>;
      message?: string;
    };
  }>("Loading tools", TOOLS, { id }, id);
  const setPolicy = async (tool: string, policy: string) => {
    const ok = await attempt("Set tool policy", () =>
      mutate("setToolPolicies", SET_POLICY, { id, tool, policy: policy === "default" ? null : policy }),
    );
    if (ok) {
      void reload();
      onChanged();
    }
  };
  const tools = data?.toolServer.tools ?? [];
  return (
    <div>
      {data?.toolServer.message ? <p class="quiet">{data.toolServer.message}</p> : null}
      {data && tools.length === 0 ? <p class="quiet">No tools offered ({data.toolServer.state?.status}).</p> : null}
      <table aria-label="Tools">
        <thead>
          <tr>
            <th scope="col">Tool</th>
            <th scope="col">What it does</th>
            <th scope="col">Policy</th>
          </tr>
        </thead>
        <tbody>
          {tools.map((t) => (
            <tr key={t.name}>
              <td>
                {t.name} {t.readOnlyHint ? <span class="tag">read-only</span> : null}
              </td>
              <td>{t.description}</td>
              <td>
                <select
                  aria-label={`Policy for ${t.name}`}
                  value={t.policy === t.defaultPolicy ? "default" : t.policy}
                  onChange={(event) => void setPolicy(t.name, (event.target as HTMLSelectElement).value)}
                >
                  <option value="default">default ({t.defaultPolicy})</option>
                  <option value="allow">allow</option>
                  <option value="ask">ask</option>
                  <option value="deny">deny</option>
                </select>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

// The Tokens view (admin scope): make a named token (its secret shown once, with a copy button),
// list every token (name, prefix, scopes, last use, expiry) and revoke one. A console opened with
// a token that lacks admin sees the server's refusal naming the scope, and nothing else changes.
import { ConfirmButton } from "./confirm.tsx";
import { useState } from "preact/hooks";
import { mutate } from "./api.ts";
import { useQuery } from "./hooks.ts";
import { attempt } from "./status.ts";

const SCOPES = ["read", "decide", "write", "admin", "metrics"] as const;
const EXPIRIES: Array<[string, number | null]> = [
  ["never", null],
  ["1 day", 86_400],
  ["30 days", 30 * 86_400],
  ["90 days", 90 * 86_400],
  ["1 year", 365 * 86_400],
];

const TOKENS = `query Tokens { tokens { id name prefix scopes createdAt expiresAt lastUsedAt revokedAt } }`;
const CREATE = `mutation CreateToken($name: String!, $scopes: [String!]!, $expiresInS: Int) {
  createToken(name: $name, scopes: $scopes, expiresInS: $expiresInS) {
    __typename ... on CreatedToken { secret token { id name } } ... on Error { code message }
  }
}`;
const REVOKE = `mutation RevokeToken($id: ID!) { revokeToken(id: $id) { __typename ... on Token { id revokedAt } ... on Error { code message } } }`;

interface TokenRow {
  id: string;
  name: string;
  prefix: string;
  scopes: string[];
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

const when = (iso: string | null, none: string) => (iso ? new Date(iso).toLocaleString() : none);

export function TokensView() {
  const { data, reload } = useQuery<{ tokens: TokenRow[] }>("Loading tokens", TOKENS);
  const [name, setName] = useState("");
  const [scopes, setScopes] = useState<Set<string>>(new Set(["read"]));
  const [expires, setExpires] = useState(2);
  const [made, setMade] = useState<{ name: string; secret: string } | null>(null);
  const [copied, setCopied] = useState(false);

  const create = async (event: Event) => {
    event.preventDefault();
    const result = await attempt(`Create token "${name}"`, () =>
      mutate<{ secret: string; token: { name: string } }>("createToken", CREATE, {
        name,
        scopes: SCOPES.filter((s) => scopes.has(s)),
        expiresInS: EXPIRIES[expires]![1],
      }),
    );
    if (!result) return;
    setMade({ name: result.token.name, secret: result.secret });
    setCopied(false);
    setName("");
    void reload();
  };
  const revoke = async (t: TokenRow) => {
    if (await attempt(`Revoke token "${t.name}"`, () => mutate("revokeToken", REVOKE, { id: t.id }))) void reload();
  };
  const copy = async () => {
    if (!made) return;
    const done = await attempt("Copy the secret", async () => {
      await navigator.clipboard.writeText(made.secret);
      return true;
    });
    if (done) setCopied(true);
  };
  const toggle = (scope: string) =>
    setScopes((old) => {
      const next = new Set(old);
      if (next.has(scope)) next.delete(scope);
      else next.add(scope);
      return next;
    });

  return (
    <section aria-labelledby="tokens-heading" class="view">
      <h2 id="tokens-heading">Tokens</h2>
      <form onSubmit={(e) => void create(e)} aria-label="New token">
        <label>
          Name{" "}
          <input value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} maxLength={64} required />
        </label>
        <fieldset class="scopes">
          <legend>Scopes</legend>
          {SCOPES.map((s) => (
            <label key={s} class="inline">
              <input type="checkbox" checked={scopes.has(s)} onChange={() => toggle(s)} /> {s}
            </label>
          ))}
        </fieldset>
        <label>
          Expires{" "}
          <select value={String(expires)} onChange={(e) => setExpires(Number((e.target as HTMLSelectElement).value))}>
            {EXPIRIES.map(([label], i) => (
              <option key={label} value={String(i)}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" disabled={name.trim() === "" || scopes.size === 0}>
          Create token
        </button>
      </form>
      {made ? (
        <div class="secret" role="status" aria-label="New secret">
          <p>
            The secret of <strong>{made.name}</strong>, shown this once: copy it now.
          </p>
          <p>
            <code>{made.secret}</code>{" "}
            <button type="button" onClick={() => void copy()}>
              {copied ? "Copied" : "Copy"}
            </button>{" "}
            <button type="button" onClick={() => setMade(null)}>
              Done
            </button>
          </p>
        </div>
      ) : null}
      <table aria-label="Tokens">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Prefix</th>
            <th scope="col">Scopes</th>
            <th scope="col">Last used</th>
            <th scope="col">Expires</th>
            <th scope="col">State</th>
          </tr>
        </thead>
        <tbody>
          {(data?.tokens ?? []).map((t) => {
            const expired = t.expiresAt !== null && Date.parse(t.expiresAt) <= Date.now();
            return (
              <tr key={t.id} aria-label={`Token ${t.name}`}>
                <td>{t.name}</td>
                <td>
                  <code>{t.prefix}…</code>
                </td>
                <td>{t.scopes.join(", ")}</td>
                <td>{when(t.lastUsedAt, "never")}</td>
                <td>{when(t.expiresAt, "never")}</td>
                <td>
                  {t.revokedAt ? (
                    "revoked"
                  ) : expired ? (
                    "expired"
                  ) : (
                    <ConfirmButton
                      label="Revoke"
                      question={`Revoke "${t.name}"? It stops working at once.`}
                      confirmLabel="Yes, revoke"
                      onConfirm={() => void revoke(t)}
                    />
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </section>
  );
}

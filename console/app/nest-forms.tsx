// The Nests view's two ways to grow the flock from the console: a new nest (a name and its core
// crows; the same guardrails as POST /api/nests, through createNest) and a spun crow (a name, one of
// the 8 working personas and a starting trust; the registry's guardrails, through spinCrow, the
// write Boss's SPIN order makes). Each refusal is shown in the server's words.
import { useState } from "preact/hooks";
import { mutate } from "./api.ts";
import { attempt } from "./status.ts";

const CREATE_NEST = `mutation CreateNest($name: String!, $crows: [String!]!) {
  createNest(name: $name, crows: $crows) { __typename ... on Nest { id name } ... on Error { code message } }
}`;

const SPIN_CROW = `mutation SpinCrow($name: String!, $persona: String!, $trust: String) {
  spinCrow(name: $name, persona: $persona, trust: $trust) {
    __typename ... on SpunCrow { name } ... on SpinRefusedError { reason code message } ... on Error { code message }
  }
}`;

export function NewNestForm({ crows, onCreated }: { crows: string[]; onCreated: (id: string) => void }) {
  const [name, setName] = useState("");
  const [members, setMembers] = useState<Set<string>>(new Set());
  const [busy, setBusy] = useState(false);
  const toggle = (crow: string) =>
    setMembers((old) => {
      const next = new Set(old);
      if (next.has(crow)) next.delete(crow);
      else next.add(crow);
      return next;
    });
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    const made = await attempt(`Create nest "${name}"`, () =>
      mutate<{ id: string }>("createNest", CREATE_NEST, { name, crows: [...members] }),
    );
    setBusy(false);
    if (made) {
      setName("");
      setMembers(new Set());
      onCreated(made.id);
    }
  };
  return (
    <form class="grow" aria-label="Create a nest" onSubmit={(e) => void submit(e)}>
      <h3>New nest</h3>
      <label for="new-nest-name">Name</label>
      <input id="new-nest-name" value={name} maxLength={40} onInput={(e) => setName(e.currentTarget.value)} required />
      <fieldset>
        <legend>Its crows (1 to 8)</legend>
        {crows.map((crow) => (
          <label key={crow} class="inline">
            <input type="checkbox" checked={members.has(crow)} onChange={() => toggle(crow)} /> {crow}
          </label>
        ))}
      </fieldset>
      <button type="submit" disabled={busy || members.size === 0}>
        Create nest
      </button>
    </form>
  );
}

export function SpinCrowForm({ personas, onSpun }: { personas: string[]; onSpun: (name: string) => void }) {
  const [name, setName] = useState("");
  const [persona, setPersona] = useState("");
  const [trust, setTrust] = useState("stranger");
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    const spun = await attempt(`Spin crow "${name}"`, () =>
      mutate<{ name: string }>("spinCrow", SPIN_CROW, { name, persona: persona || personas[0], trust }),
    );
    setBusy(false);
    if (spun) {
      setName("");
      onSpun(spun.name);
    }
  };
  return (
    <form class="grow" aria-label="Spin a crow" onSubmit={(e) => void submit(e)}>
      <h3>Spin a crow</h3>
      <p class="quiet">A new crow runs on one of the working personas and starts as a stranger or a regular.</p>
      <label for="spin-name">Name</label>
      <input id="spin-name" value={name} maxLength={40} onInput={(e) => setName(e.currentTarget.value)} required />
      <label for="spin-persona">Persona</label>
      <select id="spin-persona" value={persona || personas[0]} onChange={(e) => setPersona(e.currentTarget.value)}>
        {personas.map((p) => (
          <option key={p} value={p}>
            {p}
          </option>
        ))}
      </select>
      <label for="spin-trust">Starting trust</label>
      <select id="spin-trust" value={trust} onChange={(e) => setTrust(e.currentTarget.value)}>
        <option value="stranger">stranger</option>
        <option value="regular">regular</option>
      </select>
      <button type="submit" disabled={busy || personas.length === 0}>
        Spin
      </button>
    </form>
  );
}

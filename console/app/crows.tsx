// The personas and the spun crows; and the classifier: its calibration diagram and recent answers.
import { useQuery } from "./hooks.ts";

const CROWS = `query Crows { personas { name epithet strength serviceRole } crows { name persona startingTrust createdAt } }`;
const ANSWERS = `query Answers { classifierAnswers(limit: 30) { id questionId subject answer unsure backend latencyMs truth createdAt } }`;

export function CrowsView() {
  const { data } = useQuery<{
    personas: Array<{ name: string; epithet: string; strength: string; serviceRole: boolean }>;
    crows: Array<{ name: string; persona: string; startingTrust: string; createdAt: string }>;
  }>("Loading crows", CROWS);
  return (
    <section aria-labelledby="crows-heading" class="view">
      <h2 id="crows-heading">Crows</h2>
      <h3>Personas</h3>
      <ul class="personas">
        {(data?.personas ?? []).map((p) => (
          <li key={p.name}>
            <strong>{p.name}</strong>, {p.epithet}{" "}
            <span class="quiet">· {p.serviceRole ? "service role" : p.strength}</span>
          </li>
        ))}
      </ul>
      <h3>Spun crows</h3>
      {data && data.crows.length === 0 ? <p class="quiet">Boss has spun none yet.</p> : null}
      <ul>
        {(data?.crows ?? []).map((c) => (
          <li key={c.name}>
            <strong>{c.name}</strong> runs on {c.persona}, started {c.startingTrust}
          </li>
        ))}
      </ul>
    </section>
  );
}

export function ClassifierView() {
  const { data, reload } = useQuery<{
    classifierAnswers: Array<{
      id: number;
      questionId: string;
      subject: string;
      answer: string;
      unsure: boolean;
      backend: string;
      latencyMs: number;
      truth: string;
      createdAt: string;
    }>;
  }>("Loading classifier answers", ANSWERS);
  return (
    <section aria-labelledby="classifier-heading" class="view">
      <h2 id="classifier-heading">Classifier</h2>
      <figure>
        <img
          src="/console/jev-reliability.svg"
          alt="Calibration diagram: the offline classifier's confidence against its accuracy"
          class="diagram"
        />
        <figcaption>Calibration of the offline model (npm run calibration redraws it).</figcaption>
      </figure>
      <h3>
        Recent answers{" "}
        <button type="button" onClick={() => void reload()}>
          Refresh
        </button>
      </h3>
      <table aria-label="Recent answers">
        <thead>
          <tr>
            <th scope="col">Question</th>
            <th scope="col">Subject</th>
            <th scope="col">Answer</th>
            <th scope="col">Truth</th>
            <th scope="col">Backend</th>
            <th scope="col">ms</th>
          </tr>
        </thead>
        <tbody>
          {(data?.classifierAnswers ?? []).map((a) => (
            <tr key={a.id}>
              <td>{a.questionId}</td>
              <td>{a.subject}</td>
              <td>{a.unsure ? <em>unsure</em> : a.answer}</td>
              <td>{a.truth}</td>
              <td>{a.backend}</td>
              <td>{a.latencyMs}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

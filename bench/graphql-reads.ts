// Benchmark: GraphQL read throughput (issue 9): the trust ledger and a list's events, each next to
// `{ __typename }` on the same server in the same run (the baseline: Yoga's own per-request cost).
// A real server on an ephemeral port holds BENCH_VERDICTS verdicts across holders and task types
// and a list of BENCH_EVENTS events; CONCURRENCY fetches stay in flight for SECONDS per query.
// Prints requests/s per query and its ratio to the baseline, per run and the median of RUNS.
// Run: npm run bench:graphql-reads (BENCH_ONLY=<regex> runs only the matching queries;
// BENCH_READ_CACHE=off runs every query afresh, as after a commit: src/server/graphql/plugins/read-cache.ts)
import { startTestServer } from "../harness/server.ts";
import type { VerdictValue } from "../src/flock/events.ts";
import { NO_VERSION } from "../src/storage/read-version.ts";
import { SYSTEM } from "../src/base/actor.ts";

const VERDICTS = Number(process.env.BENCH_VERDICTS ?? 400);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 300);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
/** off: every query runs afresh (the read cache sees no database version), to show the uncached cost. */
const READ_CACHE = process.env.BENCH_READ_CACHE ?? "on";
/** Only the queries whose label matches (a regex; the baseline always runs): for profiling one read. */
const ONLY = process.env.BENCH_ONLY ? new RegExp(process.env.BENCH_ONLY) : null;

const server = await startTestServer();
try {
  if (READ_CACHE === "off") server.app.database.readVersion = NO_VERSION;
  const holders = ["flock", "Sentry", "crow-ada", "crow-bo", "crow-cy", "spun-1"];
  const taskTypes = ["writing", "research", "code", "errand", "math"];
  const verdicts: VerdictValue[] = ["approved", "approved", "approved", "rejected", "auto", "timeout"];
  for (let i = 0; i < VERDICTS; i++) {
    const holder = holders[i % holders.length]!;
    const taskType = taskTypes[Math.floor(i / holders.length) % taskTypes.length]!;
    await server.app.prisma.$transaction((tx) =>
      server.app.flock.trust.apply(tx, holder, taskType, verdicts[i % verdicts.length]!, `lstbench-${i}`, SYSTEM),
    );
  }
  const listId = "lstbenchreads";
  await server.app.prisma.todoList.create({
    data: { id: listId, requester: "bench", text: "-", tokenBudget: 1, status: "finished" },
  });
  for (let i = 0; i < EVENTS; i++) {
    await server.app.log.append(`list:${listId}`, i % 3 === 0 ? "crow.flying" : "item.triaged", {
      list_id: listId,
      item_id: `${listId}-${(i % 50) + 1}`,
      crow: holders[i % holders.length],
      note: `event ${i} with a little text in it, as the flock's payloads have`,
      ts: new Date().toISOString(),
    });
  }

  // Arguments go as variables, as the console sends them: a query with a string literal is not
  // compiled (src/server/graphql/plugins/compiled-queries.ts), so a literal would measure graphql-js instead.
  const allQueries: [string, string, Record<string, unknown>?][] = [
    ["{ __typename } (baseline)", "{ __typename }"],
    ["trust ledger, no history", "{ trust { holder taskType level levelName streak approvals rejections autos } }"],
    [
      "trust ledger, history(last: 5)",
      "{ trust { holder taskType level levelName streak approvals rejections autos history(last: 5) { id verdict subject from to at } } }",
    ],
    [
      "trust ledger, all history",
      "{ trust { holder taskType level levelName streak approvals rejections autos history { verdict subject from to at } } }",
    ],
    [
      "trust, one holder, with history",
      `query($holder: String) { trust(holder: $holder) { holder taskType level streak history { verdict subject from to at } } }`,
      { holder: "crow-ada" },
    ],
    [
      "list.events (seq name ts payload)",
      `query($id: ID!) { list(id: $id) { id status events { seq name ts payload } } }`,
      { id: listId },
    ],
    ["events(listId) (seq name raw)", `query($id: ID!) { events(listId: $id) { seq name raw } }`, { id: listId }],
  ];
  const queries = allQueries.filter(([label], i) => i === 0 || !ONLY || ONLY.test(label));

  const rate = async (query: string, variables?: Record<string, unknown>): Promise<number> => {
    const body = JSON.stringify({ query, variables });
    const deadline = performance.now() + SECONDS * 1000;
    let done = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (performance.now() < deadline) {
          const response = await fetch(`${server.url}/graphql`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body,
          });
          const answer = (await response.json()) as { errors?: unknown[] };
          if (response.status !== 200 || answer.errors)
            throw new Error(`${query}: ${response.status} ${JSON.stringify(answer).slice(0, 300)}`);
          done += 1;
        }
      }),
    );
    return done / ((performance.now() - t0) / 1000);
  };

  console.log(
    `GraphQL reads (read cache ${READ_CACHE}): ${VERDICTS} verdicts (${holders.length} holders x ${taskTypes.length} task types), a list of ${EVENTS} events; ${CONCURRENCY} concurrent fetches, ${SECONDS} s per query, ${RUNS} runs`,
  );
  for (const [, query, variables] of queries) await rate(query, variables); // warm up every path once
  const ratios = new Map<string, number[]>();
  const rates = new Map<string, number[]>();
  for (let run = 1; run <= RUNS; run++) {
    const base = await rate(queries[0]![1]);
    const line = [`run ${run}: baseline ${base.toFixed(0)}/s`];
    for (const [label, query, variables] of queries.slice(1)) {
      const r = await rate(query, variables);
      (rates.get(label) ?? rates.set(label, []).get(label)!).push(r);
      (ratios.get(label) ?? ratios.set(label, []).get(label)!).push(r / base);
      line.push(`${label} ${r.toFixed(0)}/s ${(r / base).toFixed(2)}x`);
    }
    (rates.get("baseline") ?? rates.set("baseline", []).get("baseline")!).push(base);
    console.log(`  ${line.join("; ")}`);
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  console.log(`median of ${RUNS}: { __typename } ${median(rates.get("baseline")!).toFixed(0)} req/s (baseline)`);
  for (const [label] of queries.slice(1)) {
    console.log(
      `  ${label.padEnd(36)} ${median(rates.get(label)!).toFixed(0).padStart(6)} req/s  ${median(ratios.get(label)!).toFixed(2)}x baseline (goal >= 0.4x)`,
    );
  }
} finally {
  await server.close();
}

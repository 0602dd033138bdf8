// Benchmark: how fast hostile GraphQL documents are refused (issue 8's cases and a few more),
// next to a baseline measured in the same run: the round trip of `{ __typename }` and of a
// documented query on a 50-item list. Prints each refusal's code and its median time over REPEATS.
// Run: npm run bench:graphql-limits
import { startTestServer } from "../harness/server.ts";

const REPEATS = Number(process.env.BENCH_REPEATS ?? 5);

const server = await startTestServer();
try {
  // A finished 50-item list stored directly, so no flock work runs in the background of the timings.
  const listId = "lstbench50";
  await server.app.prisma.todoList.create({
    data: {
      id: listId,
      requester: "bench",
      text: "-",
      tokenBudget: 1,
      status: "finished",
      items: {
        create: Array.from({ length: 50 }, (_, i) => ({ id: `${listId}-${i + 1}`, n: i + 1, text: `item ${i + 1}` })),
      },
    },
  });
  const cases: [string, string][] = [
    ["baseline: { __typename }", "{ __typename }"],
    [
      "baseline: list with 50 items (documented fields)",
      `{ list(id: "${listId}") { id status items { id n text stage approvals { target status } } } }`,
    ],
    [
      "issue: list.items.list.items... nested 9 deep on a 50-item list (took 138 s, then OOM)",
      `{ list(id: "${listId}") { items { list { items { list { items { list { items { list { id } } } } } } } } } }`,
    ],
    [
      "issue: 10,000 aliases of lists(limit:100){items{id text}} (26 s, 1.95 GB)",
      `{${Array.from({ length: 10_000 }, (_, i) => `a${i}: lists(limit: 100) { items { id text } }`).join(" ")}}`,
    ],
    [
      "issue: 100,000 __typename aliases (3.5 s; 1.6 MB, so over the body limit)",
      `{${Array.from({ length: 100_000 }, (_, i) => `a${i}: __typename`).join(" ")}}`,
    ],
    [
      "50,000 __typename aliases (under the body limit)",
      `{${Array.from({ length: 50_000 }, (_, i) => `a${i}: __typename`).join(" ")}}`,
    ],
    ["a selection nested 10,000 deep", `{${"a{".repeat(10_000)}b${"}".repeat(10_000)}}`],
    [
      "920 bytes: 15 aliases of lists(limit:100){items{list{items{text}}}} (took 132 s and 4.7 GB over 100 stored lists)",
      `{ ${Array.from({ length: 15 }, (_, i) => `a${i}: lists(limit:100){ items { list { items { text } } } }`).join(" ")} }`,
    ],
    [
      "16 aliased lists(limit:100)",
      `{${Array.from({ length: 16 }, (_, i) => `a${i}: lists(limit: 100) { items { id text } }`).join(" ")}}`,
    ],
    [
      "at the depth limit (5): list.items.list.items.id on 50 items (2,500 items)",
      `{ list(id: "${listId}") { items { list { items { id } } } } }`,
    ],
    [
      "at the depth and alias limits: 15 aliases of it",
      `{${Array.from({ length: 15 }, (_, i) => `a${i}: list(id: "${listId}") { items { list { items { id } } } }`).join(" ")}}`,
    ],
    [
      "depth 6: list.items.list.items.list.id (2,500 lists)",
      `{ list(id: "${listId}") { items { list { items { list { id } } } } } }`,
    ],
    [
      "depth 7: list.items.list.items.list.items.id",
      `{ list(id: "${listId}") { items { list { items { list { items { id } } } } } } }`,
    ],
  ];
  console.log(`GraphQL refusals, median of ${REPEATS} POST /graphql round trips on loopback`);
  for (const [what, query] of cases) {
    const times: number[] = [];
    let outcome = "";
    for (let i = 0; i < REPEATS; i++) {
      const payload = JSON.stringify({ query });
      const t0 = performance.now();
      const response = await fetch(`${server.url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: payload,
      });
      const answer = (await response.json()) as {
        errors?: { message: string; extensions?: { code?: string } }[];
        message?: string;
      };
      times.push(performance.now() - t0);
      outcome =
        response.status === 413
          ? `413 ${answer.message}`
          : answer.errors
            ? `${response.status} ${answer.errors[0]!.extensions?.code}: ${answer.errors[0]!.message}`
            : `${response.status} data`;
    }
    times.sort((a, b) => a - b);
    console.log(
      `  ${times[Math.floor(times.length / 2)]!.toFixed(1).padStart(7)} ms  ${what}\n             -> ${outcome} (${(Buffer.byteLength(query) / 1024).toFixed(0)} KB)`,
    );
  }
} finally {
  await server.close();
}

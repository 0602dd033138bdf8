// Benchmark: a list (20 items by default; BENCH_ITEMS=50 for issue 9's goal) end to end on the offline brain, with a scripted owner answering every
// approval the moment it is asked (over the real HTTP + SSE surface). Prints wall time from POST to
// list.finished, events written, flights, tokens, and the process's memory. Run: npm run bench
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startTestServer } from "../test/helpers/server.ts";
import { ownerFollows } from "../test/helpers/owner.ts";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ITEM_COUNT = Number(process.env.BENCH_ITEMS ?? 20);
const BASE_ITEMS = [
  "Buy milk",
  "Call the plumber about the leak",
  "Research espresso machines and write a short summary",
  "Brainstorm names for a bakery",
  "Draft an email to the landlord",
  "Plan a weekend trip to the coast",
  "Fix the bug in the login script",
  "Book a dentist appointment",
  "Compare three phone plans",
  "Write a thank-you note to Sam",
  "Pick up the dry cleaning",
  "Organize the garage shelves",
  "Look up the opening hours of the library",
  "Review the draft of the quarterly report",
  "Order a new bike helmet",
  "Schedule the team retrospective",
  "Write a function that parses dates and test it",
  "Pay the electricity bill",
  "Find a recipe for lentil soup and make a shopping list",
  "Return the library books",
];

const ITEMS = Array.from({ length: ITEM_COUNT }, (_, i) => BASE_ITEMS[i % BASE_ITEMS.length]! + (i >= BASE_ITEMS.length ? ` (round ${Math.floor(i / BASE_ITEMS.length) + 1})` : ""));

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function round(index: number) {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "crows-bench-"));
  const server = await startTestServer({ dataDir, env: { CROWS_TOKEN_BUDGET: "200000" } });
  try {
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const res = await server.post("/api/lists", { text: ITEMS.join("\n"), requester: `bench-${index}` });
    const owner = await ownerFollows(server.url, res.body.list_id, {}, 120_000);
    const events = await owner.finished;
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    owner.sse.close();
    const stored = await server.app.prisma.event.count({ where: { stream: `list:${res.body.list_id}` } });
    const flights = events.filter((e) => e.event === "crow.flying").length;
    const finished = events[events.length - 1]!.data;
    const modes = events.filter((e) => e.event === "item.triaged").map((e) => e.data.mode as string);
    return { ms, cpuMsPerEvent: (cpu.user + cpu.system) / 1000 / stored, stored, flights, tokens: finished.tokens_used as number, approvals: owner.answers.length, modes };
  } finally {
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await round(-1); // warm-up, not counted: JIT, module loading, the classifier's model
const results = [];
for (let i = 0; i < ROUNDS; i++) results.push(await round(i));
const last = results[results.length - 1]!;
const count = (mode: string) => last.modes.filter((m) => m === mode).length;
const memory = process.memoryUsage();
console.log(`${ITEM_COUNT}-item list, offline brain, owner approves at once (${ROUNDS} rounds; after one warm-up round)`);
console.log(`  wall time POST -> list.finished: median ${median(results.map((r) => r.ms)).toFixed(0)} ms (runs: ${results.map((r) => r.ms.toFixed(0)).join(", ")})`);
console.log(`  CPU per event (server and the in-process owner client together): median ${median(results.map((r) => r.cpuMsPerEvent)).toFixed(2)} ms (goal <= 2 ms server CPU)`);
console.log(`  events written to the log: ${last.stored} (flights ${last.flights}, approvals answered ${last.approvals})`);
console.log(`  modes: solo ${count("solo")}, split ${count("split")}, murder ${count("murder")}; tokens used ${last.tokens}`);
console.log(`  memory: rss ${(memory.rss / 2 ** 20).toFixed(0)} MiB, heap used ${(memory.heapUsed / 2 ** 20).toFixed(0)} MiB`);

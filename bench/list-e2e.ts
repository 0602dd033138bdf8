// Benchmark: a list (20 items by default; BENCH_ITEMS=50 for issue 9's goal) end to end on the offline brain, with a scripted owner answering every
// approval the moment it is asked (over the real HTTP + SSE surface). Prints wall time from POST to
// list.finished, events written, flights, tokens, and the server's CPU per event. The server runs
// in a child process, so its CPU (process.cpuUsage there) is the server's alone: the owner client
// (SSE parsing, verdict POSTs) runs here and is reported apart. Each round starts a fresh server
// (a new data folder) in the same warm child. The baseline, measured in the same child after each
// round: raw better-sqlite3 storing as many events on the same file, one transaction each with a
// state UPDATE beside the INSERT (the storage floor of the pipeline's events).
// Run: npm run bench   (BENCH_ITEMS, BENCH_ROUNDS; BENCH_SERVER_PROF=<dir> profiles the server)
import { fork, type ChildProcess } from "node:child_process";
import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startTestServer, type TestServer } from "../harness/server.ts";
import { ownerFollows } from "../harness/owner.ts";

type Command =
  | { start: true }
  | { cpu: true }
  | { count: string }
  | { floor: { listId: string; events: number } }
  | { stop: true };
type Reply = { url?: string; cpuMs?: number; count?: number; floorCpuMs?: number; stopped?: true };

/** Raw better-sqlite3 on the server's own file: `events` transactions of UPDATE + last seq + INSERT. */
function storageFloor(file: string, listId: string, events: number): number {
  const db = new Database(file);
  try {
    db.pragma("busy_timeout = 5000");
    const tokens = db.prepare(`UPDATE "TodoList" SET "tokensUsed" = "tokensUsed" + ? WHERE "id" = ?`);
    const last = db.prepare(`SELECT MAX("seq") AS seq FROM "Event" WHERE "stream" = ?`);
    const insert = db.prepare(`INSERT INTO "Event" ("stream", "seq", "name", "payload", "ts") VALUES (?, ?, ?, ?, ?)`);
    const stream = `floor:${listId}`;
    const once = db.transaction((i: number) => {
      tokens.run(0, listId);
      const seq = ((last.get(stream) as { seq: number | null }).seq ?? 0) + 1;
      const now = new Date();
      const payload = JSON.stringify({
        list_id: listId,
        item_id: `${listId}-${i}`,
        crow: "Inky",
        ok: true,
        tokens: 120,
        ts: now.toISOString(),
      });
      insert.run(stream, seq, "crow.landed", payload, now.toISOString().replace("Z", "+00:00"));
    });
    const cpu0 = process.cpuUsage();
    for (let i = 0; i < events; i++) once(i);
    const cpu = process.cpuUsage(cpu0);
    return (cpu.user + cpu.system) / 1000;
  } finally {
    db.close();
  }
}

// ------------------------------------------------------------------------------------------------
// The server side, in a child process: one crows server at a time on a fresh data folder.
if (process.argv[2] === "server") {
  let server: TestServer | undefined;
  let dataDir: string | undefined;
  const stop = async () => {
    await server?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    server = undefined;
  };
  process.on("message", async (message: Command) => {
    let reply: Reply;
    if ("start" in message) {
      await stop();
      dataDir = mkdtempSync(path.join(os.tmpdir(), "crows-bench-"));
      server = await startTestServer({ dataDir, env: { CROWS_TOKEN_BUDGET: "200000" } });
      reply = { url: server.url };
    } else if ("cpu" in message) {
      const cpu = process.cpuUsage();
      reply = { cpuMs: (cpu.user + cpu.system) / 1000 };
    } else if ("count" in message) {
      reply = { count: await server!.app.prisma.event.count({ where: { stream: `list:${message.count}` } }) };
    } else if ("floor" in message) {
      reply = { floorCpuMs: storageFloor(path.join(dataDir!, "crows.db"), message.floor.listId, message.floor.events) };
    } else {
      await stop();
      reply = { stopped: true };
    }
    process.send!(reply);
    if ("stop" in message) process.disconnect();
  });
} else {
  await main();
}

async function main() {
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
  const ITEMS = Array.from(
    { length: ITEM_COUNT },
    (_, i) =>
      BASE_ITEMS[i % BASE_ITEMS.length]! +
      (i >= BASE_ITEMS.length ? ` (round ${Math.floor(i / BASE_ITEMS.length) + 1})` : ""),
  );
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ["server"], {
    execArgv: [
      "--import",
      "tsx",
      ...(process.env.BENCH_SERVER_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_SERVER_PROF}`] : []),
    ],
  });
  // One command at a time: each reply answers the command before it.
  let waiting: { resolve: (reply: Reply) => void; reject: (error: Error) => void } | undefined;
  child.on("message", (reply) => waiting?.resolve(reply as Reply));
  child.on("exit", (code) => waiting?.reject(new Error(`the server child exited (${code})`)));
  const ask = (command: Command) =>
    new Promise<Reply>((resolve, reject) => {
      waiting = { resolve, reject };
      child.send(command);
    });

  async function round(index: number) {
    const { url } = await ask({ start: true });
    const serverCpu0 = (await ask({ cpu: true })).cpuMs!;
    const clientCpu0 = process.cpuUsage();
    const t0 = performance.now();
    const res = await fetch(`${url}/api/lists`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ text: ITEMS.join("\n"), requester: `bench-${index}` }),
    });
    const listId = ((await res.json()) as { list_id: string }).list_id;
    const owner = await ownerFollows(url!, listId, {}, 120_000);
    const events = await owner.finished;
    const ms = performance.now() - t0;
    const serverCpuMs = (await ask({ cpu: true })).cpuMs! - serverCpu0;
    const clientCpu = process.cpuUsage(clientCpu0);
    owner.sse.close();
    const stored = (await ask({ count: listId })).count!;
    const floorCpuMs = (await ask({ floor: { listId, events: stored } })).floorCpuMs!;
    const flights = events.filter((e) => e.event === "crow.flying").length;
    const finished = events[events.length - 1]!.data;
    const modes = events.filter((e) => e.event === "item.triaged").map((e) => e.data.mode as string);
    return {
      ms,
      serverCpuMsPerEvent: serverCpuMs / stored,
      floorCpuMsPerEvent: floorCpuMs / stored,
      clientCpuMsPerEvent: (clientCpu.user + clientCpu.system) / 1000 / stored,
      stored,
      flights,
      tokens: finished.tokens_used as number,
      approvals: owner.answers.length,
      modes,
    };
  }

  try {
    await round(-1); // warm-up, not counted: JIT, module loading, the classifier's model
    const results: Array<Awaited<ReturnType<typeof round>>> = [];
    for (let i = 0; i < ROUNDS; i++) results.push(await round(i));
    const last = results[results.length - 1]!;
    const count = (mode: string) => last.modes.filter((m) => m === mode).length;
    const runs = (pick: (r: (typeof results)[number]) => number, digits: number) =>
      results.map((r) => pick(r).toFixed(digits)).join(", ");
    console.log(
      `${ITEM_COUNT}-item list, offline brain, owner approves at once (${ROUNDS} rounds; after one warm-up round; server in a child process)`,
    );
    console.log(
      `  wall time POST -> list.finished: median ${median(results.map((r) => r.ms)).toFixed(0)} ms (runs: ${runs((r) => r.ms, 0)}) (goal < 1000 ms)`,
    );
    console.log(
      `  server CPU per event: median ${median(results.map((r) => r.serverCpuMsPerEvent)).toFixed(2)} ms (runs: ${runs((r) => r.serverCpuMsPerEvent, 2)}) (goal <= 2 ms)`,
    );
    console.log(
      `  baseline, same child, same run: raw better-sqlite3 storing as many events (one tx each, with a state UPDATE): median ${median(results.map((r) => r.floorCpuMsPerEvent)).toFixed(3)} ms CPU per event; the server spends ${median(results.map((r) => r.serverCpuMsPerEvent / r.floorCpuMsPerEvent)).toFixed(0)}x that`,
    );
    console.log(
      `  owner client CPU per event (this process, not counted above): median ${median(results.map((r) => r.clientCpuMsPerEvent)).toFixed(2)} ms`,
    );
    console.log(
      `  events written to the log: ${last.stored} (flights ${last.flights}, approvals answered ${last.approvals})`,
    );
    console.log(
      `  modes: solo ${count("solo")}, split ${count("split")}, murder ${count("murder")}; tokens used ${last.tokens}`,
    );
  } finally {
    await ask({ stop: true }).catch(() => undefined);
  }
}

// Benchmark: live fan-out of one stream to many SSE clients. Appends N events to a list stream
// while C clients follow it over HTTP, and prints how long until every client has every event,
// plus the database reads the followers made. Run: npm run bench:fanout
import { startTestServer } from "../test/helpers/server.ts";
import { openSse } from "../test/helpers/sse.ts";

const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 50);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 200);

const server = await startTestServer();
try {
  const listId = "bench-fanout";
  // The stream exists once it has a list row (GET /api/events checks it).
  await server.app.prisma.todoList.create({ data: { id: listId, requester: "bench", text: "-", tokenBudget: 1, status: "finished" } });
  const clients = await Promise.all(Array.from({ length: CLIENTS }, () => openSse(`${server.url}/api/events?list_id=${listId}`)));
  let reads = 0;
  const originalRead = server.app.log.read.bind(server.app.log);
  server.app.log.read = async (...args) => {
    reads += 1;
    return originalRead(...args);
  };
  const t0 = performance.now();
  for (let i = 0; i < EVENTS; i++) await server.app.log.append(`list:${listId}`, "bench.tick", { list_id: listId, i, ts: new Date().toISOString() });
  const appended = performance.now() - t0;
  await Promise.all(clients.map((c) => c.waitForCount(EVENTS, 120_000)));
  const delivered = performance.now() - t0;
  for (const c of clients) c.close();
  console.log(`fan-out: ${EVENTS} events to ${CLIENTS} SSE clients`);
  console.log(`  appends done after ${appended.toFixed(0)} ms (${(EVENTS / (appended / 1000)).toFixed(0)} events/s, each committed before it is announced)`);
  console.log(`  every client had every event after ${delivered.toFixed(0)} ms`);
  console.log(`  log reads by followers: ${reads} (${(reads / EVENTS).toFixed(1)} per event)`);
} finally {
  await server.close();
}

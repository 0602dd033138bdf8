// One crows server for bench/tools.ts, in a process of its own so the bench can read the server's
// CPU apart from its owners and the SDK-straight client (which stay in the bench process). Started
// with child_process.fork; it sends `{ url }` once listening and answers over the IPC channel:
//   "cpu"   -> { cpu: process.cpuUsage() } (every thread of this process: the server, Prisma's
//              engine, SQLite; an MCP server it spawns is a process of its own, not counted)
//   "close" -> closes the server and exits.
// BENCH_SERVER_ENV holds the server's environment overrides as JSON.
import { startTestServer } from "../harness/server.ts";

const env = JSON.parse(process.env.BENCH_SERVER_ENV ?? "{}") as Record<string, string>;
const server = await startTestServer({ env });
const send = (message: unknown) => process.send?.(message);

process.on("message", (message) => {
  if (message === "cpu") send({ cpu: process.cpuUsage() });
  if (message === "close")
    void server.close().finally(() => {
      process.disconnect?.();
      process.exit(0);
    });
});
send({ url: server.url });

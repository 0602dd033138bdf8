// A start that fails after the database opened (here: Redis, the bus, cannot be reached) leaves
// nothing open: no file of the data folder held, no client reconnecting in the background, and the
// process ends by itself. The error names Redis and the cause, never the password in REDIS_URL.
import { test } from "uvu";
import * as assert from "uvu/assert";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { mkdtempSync, rmSync } from "node:fs";

const FIXTURE = fileURLToPath(new URL("../fixtures/create-app-and-fail.ts", import.meta.url));

/** A TCP server on loopback that treats each connection as `how` says. */
async function tcpServer(how: (socket: net.Socket) => void): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
    how(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

async function refusedPort(): Promise<number> {
  const server = await tcpServer(() => {});
  await server.close();
  return server.port; // nothing listens there now
}

/**
 * Runs the fixture. The clock for "something held the process open" starts when it printed its
 * outcome, not when it was spawned: on a loaded machine tsx alone may take tens of seconds to load
 * the app, which says nothing about what a failed start leaves behind.
 */
function runFixture(
  dir: string,
  redisUrl: string,
): Promise<{ code: number | null; out: { started: boolean; code?: string; message?: string; openFiles: string[] } }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", FIXTURE, dir, redisUrl], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    let exitClock: NodeJS.Timeout | undefined;
    const fail = (message: string) => {
      child.kill("SIGKILL");
      reject(new Error(`${message}\n${stderr}`));
    };
    const loadBound = setTimeout(() => fail(`no outcome printed within 180 s: ${stdout}`), 180_000);
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
      if (exitClock === undefined && stdout.includes("\n")) {
        clearTimeout(loadBound);
        exitClock = setTimeout(
          () => fail("still running 40 s after its outcome: something held the process open"),
          40_000,
        );
      }
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.on("close", (code) => {
      clearTimeout(loadBound);
      clearTimeout(exitClock);
      try {
        resolve({ code, out: JSON.parse(stdout.trim().split("\n").at(-1)!) });
      } catch {
        reject(new Error(`no answer from the fixture: ${stdout}\n${stderr}`));
      }
    });
  });
}

test("an unreachable Redis fails the start with a clear error and leaves nothing open, whatever is at the address", async () => {
  const closer = await tcpServer((socket) => socket.destroy());
  const notRedis = await tcpServer((socket) =>
    socket.on("data", () => socket.write("HTTP/1.1 400 Bad Request\r\n\r\n")),
  );
  const silent = await tcpServer(() => {});
  const cases = [
    { what: "nothing listening", port: await refusedPort(), cause: /ECONNREFUSED/ },
    { what: "a server that hangs up", port: closer.port, cause: /closed|ECONNRESET|EPIPE/i },
    { what: "a server that is not Redis", port: notRedis.port, cause: /protocol|reply/i },
    { what: "a server that never answers", port: silent.port, cause: /no answer within 5 s/ },
  ];
  try {
    for (const c of cases) {
      const dir = mkdtempSync(path.join(os.tmpdir(), "crows-start-failure-"));
      try {
        const { code, out } = await runFixture(dir, `redis://crows:hunter2-secret@127.0.0.1:${c.port}/0`);
        assert.is(code, 0, c.what);
        assert.is(out.started, false, c.what);
        assert.is(out.code, "redis", c.what);
        assert.match(
          out.message!,
          new RegExp(`^Redis at 127\\.0\\.0\\.1:${c.port} could not be reached \\(.*\\); check REDIS_URL$`),
          c.what,
        );
        assert.match(out.message!, c.cause, `${c.what}: ${out.message}`);
        assert.not.match(out.message!, /hunter2/, "the password never reaches the error");
        assert.equal(out.openFiles, [], `${c.what}: files of the data folder still open`);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  } finally {
    await Promise.all([closer.close(), notRedis.close(), silent.close()]);
  }
});

test.run();

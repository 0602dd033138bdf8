// A real SIGTERM to `npm start` (npm, then node bin/crows serve): the request in flight is
// answered, a list posted on the same connection during the shutdown gets 503 with Retry-After (not
// a 400), the open SSE stream ends cleanly, the server records "stopped" and exits, npm exits 0,
// and no process of it is left running.
import { test } from "uvu";
import * as assert from "uvu/assert";
import net from "node:net";
import path from "node:path";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { openSse } from "../helpers/sse.ts";
import { baseEnv, pidRunning, removeDir, startProcess, tempDataDir, waitFor } from "../helpers/crows-cli.ts";

function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[1]) === pid) children.push(Number(entry));
    } catch {
      // gone already
    }
  }
  return children;
}

/** `promise`, or a failure naming `what` after `timeoutMs`. */
async function withinMs<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), timeoutMs)),
  );
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Responses read off one raw socket: status line, headers, body, in order. An interim
 * "100 Continue" is not one of them; `continued` resolves when it comes.
 */
function readResponses(
  socket: net.Socket,
  count: number,
): {
  continued: Promise<void>;
  responses: Promise<Array<{ status: number; headers: Record<string, string>; body: string }>>;
} {
  let buffer = "";
  let sawContinue!: () => void;
  const continued = new Promise<void>((resolve) => (sawContinue = resolve));
  const responses = new Promise<Array<{ status: number; headers: Record<string, string>; body: string }>>(
    (resolve, reject) => {
      const parse = () => {
        const out: Array<{ status: number; headers: Record<string, string>; body: string }> = [];
        const interim = /^HTTP\/1\.1 100 [^\r]*\r\n\r\n/.exec(buffer);
        if (interim) {
          buffer = buffer.slice(interim[0].length);
          sawContinue();
        }
        let rest = buffer;
        while (out.length < count) {
          const end = rest.indexOf("\r\n\r\n");
          if (end < 0) return undefined;
          const [statusLine, ...headerLines] = rest.slice(0, end).split("\r\n");
          const headers: Record<string, string> = {};
          for (const line of headerLines)
            headers[line.slice(0, line.indexOf(":")).toLowerCase()] = line.slice(line.indexOf(":") + 1).trim();
          const length = Number(headers["content-length"] ?? 0);
          if (rest.length < end + 4 + length) return undefined;
          out.push({ status: Number(statusLine!.split(" ")[1]), headers, body: rest.slice(end + 4, end + 4 + length) });
          rest = rest.slice(end + 4 + length);
        }
        return out;
      };
      socket.on("data", (d: Buffer) => {
        buffer += d.toString();
        const done = parse();
        if (done) resolve(done);
      });
      socket.on("error", reject);
      socket.on("close", () => reject(new Error(`socket closed after: ${buffer}`)));
    },
  );
  return { continued, responses };
}

test("SIGTERM to npm start answers the request in flight, 503s a late list, ends streams, leaves nothing running", async () => {
  const dir = tempDataDir();
  const npm = startProcess("npm", ["start", "--silent"], baseEnv(dir));
  try {
    const readyLine = await waitFor(
      "the ready line",
      () =>
        npm
          .output()
          .stdout.split("\n")
          .find((l) => l.startsWith("{")),
      30_000,
    );
    const ready = JSON.parse(readyLine) as { url: string; pid: number };
    const { port } = new URL(ready.url);

    const posted = await fetch(`${ready.url}/api/lists`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ text: "Buy milk\nCall the bank", requester: "sigterm" }),
    });
    assert.is(posted.status, 202);
    const { list_id } = (await posted.json()) as { list_id: string };
    const sse = await openSse(`${ready.url}/api/events?list_id=${list_id}`);
    await sse.waitFor((m) => m.event === "list.started");

    // A list in flight: headers and half its body sent before the signal, the rest after.
    const body = JSON.stringify({ text: "Water the plants\nFeed the crows", requester: "in-flight" });
    const socket = net.connect(Number(port), "127.0.0.1");
    await new Promise((resolve) => socket.once("connect", resolve));
    const { continued, responses } = readResponses(socket, 2);
    // Expect: 100-continue makes the server say when it has the headers and has begun the request
    // (node answers 100 just before its request event), so the signal comes with it in flight.
    socket.write(
      `POST /api/lists HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\nexpect: 100-continue\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 10)}`,
    );
    await withinMs(continued, 10_000, "the server's 100 Continue");
    const processes = [ready.pid, ...childrenOf(ready.pid)];

    npm.child.kill("SIGTERM");
    const log = path.join(dir, "server.log");
    await waitFor(
      "the server to hear SIGTERM",
      () => readFileSync(log, "utf8").includes("stop: SIGTERM received"),
      10_000,
    );
    // The rest of the body, then a second list pipelined on the same connection during the stop.
    const late = JSON.stringify({ text: "Too late", requester: "late" });
    socket.write(
      `${body.slice(10)}POST /api/lists HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(late)}\r\n\r\n${late}`,
    );
    const [inFlight, refused] = await responses;
    assert.is(inFlight!.status, 202, inFlight!.body);
    assert.match(JSON.parse(inFlight!.body).list_id, /\S/);
    assert.is(refused!.status, 503, refused!.body);
    assert.is(refused!.headers["retry-after"], "5");
    assert.type(JSON.parse(refused!.body).message, "string");

    assert.is(await npm.exited, 0, npm.output().stderr);
    await waitFor("every process of the server to end", () => processes.every((pid) => !pidRunning(pid)), 10_000);
    await waitFor("the stream to end", () => sse.ended(), 5_000);
    assert.ok(sse.messages().length > 0);
    const state = JSON.parse(readFileSync(path.join(dir, "server.json"), "utf8"));
    assert.is(state.stopped, true);
    assert.match(readFileSync(log, "utf8"), /Z stopped\n$/);
    sse.close();
    socket.destroy();
  } finally {
    if (npm.child.exitCode === null) npm.child.kill("SIGKILL");
    removeDir(dir);
  }
});

test("SIGTERM while the server is still starting: it finishes starting, then stops gracefully and releases the folder", async () => {
  const dir = tempDataDir();
  const serve = startProcess(process.execPath, ["bin/crows", "serve"], baseEnv(dir));
  try {
    const log = path.join(dir, "server.log");
    await waitFor("the lock to be taken", () => {
      try {
        return readFileSync(log, "utf8").includes("start: lock taken");
      } catch {
        return false;
      }
    });
    serve.child.kill("SIGTERM");
    assert.is(await serve.exited, 0, serve.output().stderr);
    const text = readFileSync(log, "utf8");
    assert.match(text, /stop: SIGTERM received( while starting)?; /);
    assert.match(text, /Z stopped\n$/);
    assert.not.ok(existsSync(path.join(dir, "server.lock")), "the folder is free again");
  } finally {
    if (serve.child.exitCode === null) serve.child.kill("SIGKILL");
    removeDir(dir);
  }
});

test.run();

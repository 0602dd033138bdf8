// Redis restarts under a running pair of instances (one PostgreSQL, one Redis of this test's own,
// killed -9 and started again on the same port). Lists and a nest request keep running on A while
// Redis is gone; streams followed on B before, during and after the outage each end with exactly
// the log's events: no stream stranded (a follower attached before the outage still gets what is
// appended after Redis is back), nothing lost, nothing duplicated.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawn, type ChildProcess } from "node:child_process";
import net from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { openSse, type SseClient } from "../helpers/sse.ts";
import { eventually, freshDatabase, serviceTests } from "../helpers/scale-services.ts";

const { svc, it } = serviceTests("scale-redis-restart");

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.on("error", reject);
  });
}

/** A Redis of this test's own on loopback, without persistence: a restart forgets everything. */
async function startRedis(port: number, dir: string): Promise<ChildProcess> {
  const child = spawn(
    "redis-server",
    ["--bind", "127.0.0.1", "--port", String(port), "--save", "", "--appendonly", "no", "--dir", dir],
    { stdio: "ignore" },
  );
  await eventually(
    "Redis to accept connections",
    () =>
      new Promise<true | undefined>((resolve) => {
        const socket = net.connect(port, "127.0.0.1", () => {
          socket.end();
          resolve(true);
        });
        socket.on("error", () => resolve(undefined));
      }),
    10_000,
  );
  return child;
}

async function kill9(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGKILL");
  await gone;
}

/** The stream's events as the log holds them, and what the follower got: the same ids, once each. */
async function assertExactlyTheLog(server: TestServer, stream: string, sse: SseClient, what: string): Promise<void> {
  const logged = await server.app.log.read(stream, 0, 10_000);
  // A nest stream's SSE id is the msg_id (<nest>-<seq>); a list stream's is the seq.
  const idOf = (seq: number) => (stream.startsWith("nest:") ? `${stream.slice("nest:".length)}-${seq}` : String(seq));
  const got = sse.messages().map((m) => m.id);
  assert.equal(
    got,
    logged.map((e) => idOf(e.seq)),
    `${what}: the follower's ids are the log's, once each, in order`,
  );
  assert.equal(
    sse.messages().map((m) => m.event),
    logged.map((e) => e.name),
    `${what}: the same events`,
  );
}

it("Redis killed and restarted under two instances: no stream stranded, no event lost or duplicated", async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "crows-redis-"));
  const port = await freePort();
  let redis = await startRedis(port, dir);
  const db = await freshDatabase(svc!.pgUrl);
  const env = {
    DATABASE_URL: db.url,
    REDIS_URL: `redis://127.0.0.1:${port}`,
    CROWS_APPROVAL_WINDOW_MS: "1500",
    CROWS_LEASE_MS: "3000",
  };
  const a = await startTestServer({ env });
  const b = await startTestServer({ env });
  const streams: SseClient[] = [];
  const follow = async (server: TestServer, query: string) => {
    const sse = await openSse(`${server.url}/api/events?${query}`);
    streams.push(sse);
    return sse;
  };
  try {
    // Before the outage: a list and the nest stream, followed on B.
    const before = (await a.post("/api/lists", { text: "Buy milk\nCall the bank", requester: "before" })).body
      .list_id as string;
    const beforeOnB = await follow(b, `list_id=${before}`);
    const nestOnB = await follow(b, "nest_id=todo");
    await beforeOnB.waitFor((m) => m.event === "item.triaged");

    await kill9(redis);
    // During the outage: work goes on, on A; B's followers can learn of it only from the log.
    const during = (await a.post("/api/lists", { text: "Water the plants\nBook the dentist", requester: "during" }))
      .body.list_id as string;
    const posted = await a.post("/api/nests/todo/messages", {
      author: "owner",
      text: "Please draft a short note to the landlord",
      kind: "request",
      to: "Pepper",
    });
    assert.is(posted.status, 201);
    const duringOnB = await follow(b, `list_id=${during}`);
    // The outage lasts until work has gone on without Redis (a crow landed on A) and B's new
    // follower has read from the log alone.
    await eventually(
      "a crow to land on A during the outage",
      async () => ((await a.app.log.read(`list:${during}`)).some((e) => e.name === "crow.landed") ? true : undefined),
      20_000,
    );
    await duringOnB.waitForCount(1, 20_000);
    redis = await startRedis(port, dir);

    // After: new work, followed on both instances.
    const after = (await a.post("/api/lists", { text: "Pay the rent", requester: "after" })).body.list_id as string;
    const afterOnB = await follow(b, `list_id=${after}`);
    const afterOnA = await follow(a, `list_id=${after}`);

    for (const [sse, what] of [
      [beforeOnB, "before"],
      [duringOnB, "during"],
      [afterOnB, "after (B)"],
      [afterOnA, "after (A)"],
    ] as const) {
      await sse
        .waitFor((m) => m.event === "list.finished", 30_000)
        .catch(async (e: Error) => {
          const rows = await a.app.log.read(`list:${what === "during" ? during : what === "before" ? before : after}`);
          throw new Error(
            `${what}: ${e.message}; got ${sse
              .messages()
              .map((m) => m.event)
              .join(",")}; log ${rows.map((r) => r.name).join(",")}`,
          );
        });
    }
    // (Its reply's kind is Jev's to tag; the obligation says it was answered, once.)
    const closed = await eventually(
      "the nest request answered",
      async () => {
        const row = await b.app.prisma.obligation.findUnique({ where: { id: posted.body.msg_id } });
        return row && row.stage !== "awaiting_claim" && row.stage !== "claimed" ? row : undefined;
      },
      20_000,
    );
    const replies = (await b.app.chat.list("todo")).filter(
      (m) => m.refers_to === posted.body.msg_id && m.kind !== "claim",
    );
    assert.equal(
      replies.map((m) => m.msg_id),
      [closed.answerId],
      "one reply, the one that closed it",
    );
    // A marker appended on A to each list stream after it finished: events reach a follower in
    // order, so a duplicate or a late event would have come before it.
    for (const listId of [before, during, after])
      await a.app.log.append(`list:${listId}`, "test.quiet", { marker: true });
    for (const sse of [beforeOnB, duringOnB, afterOnB, afterOnA])
      await sse.waitFor((m) => m.event === "test.quiet", 20_000);
    await assertExactlyTheLog(b, `list:${before}`, beforeOnB, "followed before the outage");
    await assertExactlyTheLog(b, `list:${during}`, duringOnB, "followed during the outage");
    await assertExactlyTheLog(b, `list:${after}`, afterOnB, "followed after the restart, on B");
    await assertExactlyTheLog(a, `list:${after}`, afterOnA, "followed after the restart, on A");
    await eventually(
      "the nest stream caught up on B",
      async () => ((await b.app.log.lastSeq("nest:todo")) <= nestOnB.messages().length ? true : undefined),
      10_000,
    );
    await assertExactlyTheLog(b, "nest:todo", nestOnB, "the nest stream, followed before the outage");
  } finally {
    for (const sse of streams) sse.close();
    await Promise.allSettled([a.close(), b.close()]);
    await kill9(redis);
    await db.drop();
    rmSync(dir, { recursive: true, force: true });
  }
});

it("/readyz follows a real Redis: 200 while it is up, 503 naming it once it is killed, 200 again when it is back", async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "crows-redis-ready-"));
  const port = await freePort();
  let redis = await startRedis(port, dir);
  const db = await freshDatabase(svc!.pgUrl);
  const server = await startTestServer({ env: { DATABASE_URL: db.url, REDIS_URL: `redis://127.0.0.1:${port}` } });
  try {
    const up = await server.get("/readyz");
    assert.is(up.status, 200, up.text);
    await kill9(redis);
    const down = await eventually(
      "/readyz to see Redis gone",
      async () => {
        const res = await server.get("/readyz");
        return res.status === 503 ? res : undefined;
      },
      30_000,
      100,
    );
    assert.equal(down.body, { status: "not ready", checks: { database: "ok", redis: "not connected", storage: "ok" } });
    assert.is(down.headers.get("retry-after"), "5");
    assert.is((await server.get("/healthz")).status, 200, "alive, though not ready");
    redis = await startRedis(port, dir);
    await eventually(
      "/readyz to see Redis back",
      async () => ((await server.get("/readyz")).status === 200 ? true : undefined),
      30_000,
      100,
    );
  } finally {
    await server.close();
    await kill9(redis);
    await db.drop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();

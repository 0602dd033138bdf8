// The SSE subscription writer (src/server/graphql/subscriptions.ts) against the writers it
// replaced: for both protocols a replay and the live events after it are the same bytes as Yoga's
// and graphql-sse's own writers send (a second handler on the same app with nativeSubscriptions
// off), for projected and executed selections alike. A slow reader is waited for; a client that
// goes away in the middle of a replay leaves no listener behind.
import { test } from "uvu";
import * as assert from "uvu/assert";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { getEventListeners } from "node:events";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { createGraphQLHandler, createGraphQLYoga } from "../../src/server/graphql/yoga.ts";
import { openSubscription } from "../../src/server/graphql/subscriptions.ts";
import type { SseSink } from "../../compat/sse.ts";
import { topicOf } from "../../src/log/bus.ts";

let server: TestServer;
let slow: http.Server;
let slowUrl = "";
const REPLAYED = 2_345; // three log pages, the last one short
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const payloadOf = (i: number) => ({
  list_id: "frames",
  i,
  note: i % 7 === 0 ? '\u00e9 \ud83d\udc26 \u2028 "q"' : `event ${i}`,
  nested: i % 5 === 0 ? { a: [i, null, true] } : null,
  ts: new Date(Date.UTC(2026, 0, 1, 0, 0, 0, i)).toISOString(),
});

test.before(async () => {
  server = await startTestServer();
  for (let i = 0; i < REPLAYED; i += 500) {
    await Promise.all(
      Array.from({ length: Math.min(500, REPLAYED - i) }, (_, j) =>
        server.app.log.append(
          "list:frames",
          ["list.started", "item.triaged", "crow.flying"][(i + j) % 3]!,
          payloadOf(i + j),
        ),
      ),
    );
  }
  const handler = createGraphQLHandler(server.app, { nativeSubscriptions: false });
  slow = http.createServer((req, res) => void handler(req, res).catch(() => res.destroy()));
  await new Promise<void>((resolve) => slow.listen(0, "127.0.0.1", resolve));
  slowUrl = `http://127.0.0.1:${(slow.address() as AddressInfo).port}`;
});
test.after(async () => {
  slow.close();
  await server.close();
});

/** Reads a stream's raw text until it holds `frames` `event: next` frames (or it ends); pings left out. */
async function read(
  url: string,
  query: string,
  variables: Record<string, unknown>,
  frames: number,
  onOpen?: () => Promise<void>,
) {
  const abort = new AbortController();
  const response = await fetch(url, {
    method: "POST",
    signal: abort.signal,
    headers: { "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify({ query, variables }),
  });
  let text = "";
  const decoder = new TextDecoder();
  const count = () => text.split("event: next\n").length - 1;
  const timer = setTimeout(() => abort.abort(), 15_000);
  try {
    let opened = false;
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      text += decoder.decode(chunk, { stream: true });
      if (!opened && count() > 0) {
        opened = true;
        await onOpen?.();
      }
      if (count() >= frames) break;
    }
  } catch {
    // aborted: compared below
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
  return {
    status: response.status,
    type: response.headers.get("content-type"),
    text: text.replaceAll(":\n\n", ""),
    frames: count(),
  };
}

const selections: Array<[string, string, Record<string, unknown>]> = [
  [
    "every field",
    `subscription($l: ID!) { listEvents(listId: $l, after: 0) { seq name ts stream payload raw } }`,
    { l: "frames" },
  ],
  [
    "aliases, fragments, __typename",
    `subscription S($l: ID!) { e: listEvents(listId: $l) { __typename n: seq ...F ... on Event { p: payload seq } } } fragment F on Event { ts name }`,
    { l: "frames" },
  ],
  [
    "resumed",
    `subscription($l: ID!, $a: Int) { listEvents(listId: $l, after: $a) { seq payload } }`,
    { l: "frames", a: 1_234 },
  ],
  [
    "executed (a directive)",
    `subscription($l: ID!, $yes: Boolean!) { listEvents(listId: $l) { seq payload @include(if: $yes) name @skip(if: $yes) } }`,
    { l: "frames", yes: true },
  ],
];

for (const path of ["/graphql", "/graphql/stream"]) {
  for (const [what, query, variables] of selections) {
    test(`${path}, ${what}: a replay and the live events after it are the bytes the library writer sends`, async () => {
      const stored = await server.app.log.lastSeq("list:frames");
      const expected = stored - Number(variables.a ?? 0);
      const fast = await read(server.url + path, query, variables, expected);
      const reference = await read(slowUrl + path, query, variables, expected);
      assert.is(fast.status, 200);
      assert.is(fast.type, reference.type);
      assert.is(fast.frames, expected);
      assert.is(reference.frames, expected);
      assert.ok(fast.text === reference.text, `${path} ${what}: the frames differ`);

      // Live: both writers see the same appended events, written the same way.
      const live = 3;
      const appendLive = async () => {
        await sleep(50);
        for (let i = 0; i < live; i++)
          await server.app.log.append("list:frames", "crow.landed", payloadOf(REPLAYED + i));
      };
      const total = expected + live;
      const [fastLive, referenceLive] = await Promise.all([
        read(server.url + path, query, variables, total),
        read(slowUrl + path, query, variables, total),
        appendLive(),
      ]);
      assert.is(fastLive.frames, total);
      assert.ok(fastLive.text === referenceLive.text, `${path} ${what}: live frames differ`);
    });
  }
}

test("a slow reader is waited for: nothing more is read from the log until it drains, then everything arrives in order", async () => {
  const yoga = createGraphQLYoga(server.app);
  const query = `subscription($l: ID!) { listEvents(listId: $l, after: 0) { seq } }`;
  const opened = await openSubscription(
    yoga,
    "graphql-sse",
    { query, variables: { l: "frames" } },
    { req: {} as http.IncomingMessage, res: {} as http.ServerResponse },
    (error) => {
      throw error;
    },
  );
  assert.ok(opened);
  const [body, init] = opened;
  assert.is(init.status, 200);
  let text = "";
  let writes = 0;
  let release: () => void = () => {};
  let closed = false;
  const sink: SseSink = {
    write(chunk) {
      writes += 1;
      text += chunk.toString("utf8");
      return false; // always full: every write waits for a drain
    },
    drained: () => new Promise<void>((resolve) => (release = resolve)),
    end: () => {
      closed = true;
    },
    get closed() {
      return closed;
    },
  };
  const frames = () => text.split("event: next\n").length - 1;
  const stop = body.start(sink);
  const stored = await server.app.log.lastSeq("list:frames");
  let rounds = 0;
  while (frames() < stored && rounds < 100) {
    await sleep(60);
    const [seen, written] = [frames(), writes];
    await sleep(60);
    assert.is(writes, written, "no write while the reader is behind");
    // A page already pulled when the write came back full is still written: at most a page ahead.
    assert.ok(seen <= 1000 * (rounds + 2), `at most a page per drain: ${seen} frames after ${rounds} drains`);
    rounds += 1;
    release();
  }
  assert.is(frames(), stored);
  const seqs = [...text.matchAll(/"seq":(\d+)/g)].map((m) => Number(m[1]));
  assert.equal(
    seqs,
    Array.from({ length: stored }, (_, i) => i + 1),
  );
  stop();
});

test("a client that goes away in the middle of a replay leaves no listener and no follower", async () => {
  const followers = () => (server.app.log as unknown as { closers: Set<unknown> }).closers.size;
  const listeners = () => getEventListeners(server.app.bus as unknown as EventTarget, topicOf("list:frames")).length;
  const before = [followers(), listeners()];
  for (const path of ["/graphql", "/graphql/stream", "/graphql", "/graphql/stream"]) {
    const query = `subscription($l: ID!) { listEvents(listId: $l, after: 0) { seq name ts payload } }`;
    const partial = await read(server.url + path, query, { l: "frames" }, 10);
    assert.ok(
      partial.frames >= 10 && partial.frames < REPLAYED,
      `${path}: read ${partial.frames} frames, then went away`,
    );
  }
  const deadline = Date.now() + 3000;
  while ((followers() !== before[0] || listeners() !== before[1]) && Date.now() < deadline) await sleep(25);
  assert.equal([followers(), listeners()], before);
});

test.run();

// A replay's bytes, pinned: GET /api/events writes, after its opening `retry:` block, exactly
// compat/sse.ts `frame()` of every stored event after the cursor, in seq order, as UTF-8, however
// the server builds its pages (the database lays them out: EventLog.readRendered). Checked on
// SQLite and on PostgreSQL, for a list stream and a nest stream (msg ids), across page boundaries,
// from varied Last-Event-IDs, with payloads that are hard on an encoder.
import http from "node:http";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { freshDatabase, serviceTests } from "../helpers/scale-services.ts";
import { eventStream, frame, OPENING, type SseSink } from "../../compat/sse.ts";
import { listStream, msgIdOf, nestStream } from "../../src/base/streams.ts";

/** Payloads that stress text handling: multi-byte UTF-8, astral code points, escapes, long runs. */
const NOTES = [
  "plain",
  "naïve café, Ærøskøbing, Łódź",
  "鴉が三羽、木の上に",
  "🐦‍⬛ crows 🪶 and 𝕔𝕣𝕠𝕨𝕤",
  "e\u0301 combining, \u200d joiner, \u00a0 nbsp",
  'quotes " and \\ backslash, a tab\tand a newline\nin the text',
  "<script>alert('x')</script> & ampersands",
  "x".repeat(5000),
  "",
];
const NAMES = ["crow.flying", "crow.landed", "item.triaged", "list.started"];

async function fill(server: TestServer, stream: string, count: number): Promise<void> {
  for (let i = 0; i < count; i += 200) {
    await Promise.all(
      Array.from({ length: Math.min(200, count - i) }, (_, k) => {
        const n = i + k;
        return server.app.log.append(stream, NAMES[n % NAMES.length]!, {
          n,
          note: NOTES[n % NOTES.length],
          nested: { list: [n, null, true, 1.5e-7] },
        });
      }),
    );
  }
}

/** Reads the raw body of an SSE response until `until` bytes end it, then hangs up. */
function rawStream(
  url: string,
  lastEventId: string | undefined,
  expectedLength: number,
): Promise<{ status: number; bytes: Buffer }> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, {
      headers: { accept: "text/event-stream", ...(lastEventId === undefined ? {} : { "last-event-id": lastEventId }) },
    });
    const timer = setTimeout(() => {
      request.destroy();
      reject(new Error(`${url}: only part of the replay arrived in 10 s`));
    }, 10_000);
    request.on("response", (response) => {
      const chunks: Buffer[] = [];
      let length = 0;
      response.on("data", (chunk: Buffer) => {
        chunks.push(chunk);
        length += chunk.length;
        if (length >= expectedLength) {
          clearTimeout(timer);
          resolve({ status: response.statusCode ?? 0, bytes: Buffer.concat(chunks) });
          request.destroy();
        }
      });
      response.on("error", () => {});
    });
    request.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

/** What the stream must send after `after`: the opening block, then frame() of each stored event. */
async function expected(
  server: TestServer,
  stream: string,
  after: number,
  idOf: (seq: number) => string,
): Promise<Buffer> {
  const stored = await server.app.log.read(stream, after, 100_000);
  return Buffer.from(OPENING + stored.map((e) => frame(idOf(e.seq), e.name, e.payload)).join(""));
}

async function checkReplays(server: TestServer): Promise<void> {
  const listId = "lstbytes";
  await server.app.prisma.todoList.create({
    data: { id: listId, requester: "bytes", text: "-", tokenBudget: 1, status: "finished" },
  });
  const stream = listStream(listId);
  await fill(server, stream, 2_345); // three pages, the last one partial
  for (const lastEventId of [undefined, "0", "1", "999", "1000", "1001", "2000", "2344"]) {
    const after = lastEventId === undefined ? 0 : Number(lastEventId);
    const want = await expected(server, stream, after, String);
    const got = await rawStream(`${server.url}/api/events?list_id=${listId}`, lastEventId, want.length);
    assert.is(got.status, 200);
    const sent = got.bytes.subarray(0, want.length);
    assert.ok(
      sent.equals(want),
      `list replay after ${lastEventId ?? "(none)"}: ${want.length} bytes expected, first difference at ${firstDifference(sent, want)}`,
    );
  }
  // Last-Event-ID at the end: the opening block, then nothing until a live event.
  const atEnd = await rawStream(`${server.url}/api/events?list_id=${listId}`, "2345", OPENING.length);
  assert.is(atEnd.bytes.toString(), OPENING);

  const created = await server.post("/api/nests", { name: "Bytes nest", crows: ["Pepper"] });
  assert.is(created.status, 201);
  const nestId = created.body.nest_id;
  assert.type(nestId, "string");
  const nest = nestStream(nestId);
  const already = await server.app.log.lastSeq(nest);
  await fill(server, nest, 1_234);
  for (const from of [0, already + 1, already + 1000]) {
    const want = await expected(server, nest, from, (seq) => msgIdOf(nestId, seq));
    const lastEventId = from === 0 ? undefined : msgIdOf(nestId, from);
    const got = await rawStream(`${server.url}/api/events?nest_id=${nestId}`, lastEventId, want.length);
    const sent = got.bytes.subarray(0, want.length);
    assert.ok(
      sent.equals(want),
      `nest replay after ${lastEventId ?? "(none)"}: first difference at ${firstDifference(sent, want)}`,
    );
  }
}

function firstDifference(a: Buffer, b: Buffer): string {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++)
    if (a[i] !== b[i])
      return `byte ${i}: ${JSON.stringify(a.subarray(Math.max(0, i - 20), i + 20).toString())} vs ${JSON.stringify(b.subarray(Math.max(0, i - 20), i + 20).toString())}`;
  return a.length === b.length ? "none" : `length ${a.length} vs ${b.length}`;
}

test("SQLite: a replay is frame() of every stored event after the cursor, byte for byte", async () => {
  const server = await startTestServer();
  try {
    await checkReplays(server);
  } finally {
    await server.close();
  }
});

test("a long replay lets the event loop turn between pages, even to a client that takes every page at once", async () => {
  const server = await startTestServer();
  const abort = new AbortController();
  try {
    const stream = listStream("lstturns");
    await fill(server, stream, 4_500); // five pages
    const writes: Buffer[] = [];
    let pagesBeforeATurn = -1;
    let done!: () => void;
    const allWritten = new Promise<void>((resolve) => (done = resolve));
    const want = await expected(server, stream, 0, String);
    // A sink that never pushes back: write() always true, drained at once (a fast client).
    const sink: SseSink = {
      write: (chunk) => {
        writes.push(chunk);
        if (Buffer.concat(writes).length >= want.length) done();
        return true;
      },
      drained: () => Promise.resolve(),
      end: () => {},
      closed: false,
    };
    const [body] = eventStream({ log: server.app.log, stream, afterSeq: 0, heartbeatMs: 60_000, signal: abort.signal });
    const stop = body.start(sink);
    setImmediate(function count() {
      // Counted in the first turn after the first page went out (the opening block is writes[0]).
      if (writes.length < 2) setImmediate(count);
      else pagesBeforeATurn = writes.length - 1;
    });
    await allWritten;
    stop();
    assert.ok(Buffer.concat(writes).equals(want), "every event once, in order");
    assert.ok(
      pagesBeforeATurn >= 1 && pagesBeforeATurn <= 2,
      `pages written before the loop turned: ${pagesBeforeATurn} of 5`,
    );
  } finally {
    abort.abort();
    await server.close();
  }
});

const { svc, it } = serviceTests("replay-bytes");
it("PostgreSQL: a replay is frame() of every stored event after the cursor, byte for byte", async () => {
  const db = await freshDatabase(svc!.pgUrl);
  const server = await startTestServer({ env: { DATABASE_URL: db.url } });
  try {
    await checkReplays(server);
  } finally {
    await server.close();
    await db.drop();
  }
});

test.run();

// Every resumable subscription (listEvents, nestMessages, trustChanges, approvalChanges) refuses a
// resume point its stream never sent (negative, past the end, not an integer, out of range) with a
// coded 4xx on both SSE transports, before any stream opens: never a silent wait, never the
// protocol library's uncoded "Unable to detect operation AST". docs/rules.md, "Streams".
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
let listId = "";

test.before(async () => {
  server = await startTestServer();
  const list = await server.post("/api/lists", { text: "water the plants", requester: "cursor-tester" });
  listId = list.body.list_id;
  await server.post("/api/nests/todo/messages", { author: "owner", text: "hello flock", kind: "say" });
  await server.post("/api/nests/todo/messages", { author: "owner", text: "and goodbye", kind: "say" });
});
test.after(async () => {
  await server.close();
});

/** POSTs one subscription and reads the answer whole; a stream that stays open past `waitMs` is reported as such. */
async function subscribeOnce(path: string, query: string, variables: Record<string, unknown>, waitMs = 1_500) {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), waitMs);
  const response = await fetch(server.url + path, {
    method: "POST",
    signal: abort.signal,
    headers: { "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify({ query, variables }),
  });
  let text: string;
  try {
    text = await response.text();
  } catch {
    return { status: response.status, text: "", open: true, codes: [] as string[] };
  } finally {
    clearTimeout(timer);
  }
  const codes = [...text.matchAll(/"code":"([^"]+)"/g)].map((m) => m[1]!);
  return { status: response.status, text, open: false, codes };
}

/** Opens a subscription and resolves with the first capture of `pattern` in what it streams. */
async function firstFrom(
  path: string,
  query: string,
  variables: Record<string, unknown>,
  pattern: RegExp,
): Promise<string | undefined> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), 15_000);
  try {
    const response = await fetch(server.url + path, {
      method: "POST",
      signal: abort.signal,
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ query, variables }),
    });
    if (response.status !== 200) return `status ${response.status}`;
    let text = "";
    const decoder = new TextDecoder();
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      text += decoder.decode(chunk, { stream: true });
      const found = pattern.exec(text);
      if (found) return found[1];
    }
    return undefined;
  } catch {
    return undefined; // nothing within the deadline: the caller's assertion names it
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
}

const intCursors = {
  listEvents: `subscription($after: Int) { listEvents(listId: "LIST", after: $after) { seq } }`,
  trustChanges: `subscription($after: Int) { trustChanges(after: $after) { id } }`,
  approvalChanges: `subscription($after: Int) { approvalChanges(after: $after) { id } }`,
};
// Past the end: the log's ids are far below these; out of range and non-integers fail validation.
const badInts: unknown[] = [
  -1,
  -2147483648,
  999_999,
  2_147_483_647,
  2_147_483_648,
  1.5,
  "7",
  "abc",
  true,
  [1],
  { n: 1 },
];
const badMsgIds: unknown[] = [
  "-1",
  "999",
  "todo-999",
  "other-1",
  "abc",
  "1e3",
  "0x1",
  "1.0",
  "todo-",
  "\u0000",
  "\ud800",
  5,
];

for (const path of ["/graphql", "/graphql/stream"]) {
  for (const [field, template] of Object.entries(intCursors)) {
    test(`${field} over ${path}: every resume point the stream never sent is a coded 4xx`, async () => {
      const query = template.replace("LIST", listId);
      for (const after of badInts) {
        const answer = await subscribeOnce(path, query, { after });
        assert.not.ok(answer.open, `${field} after ${JSON.stringify(after)} left the stream open, waiting`);
        assert.ok(
          answer.status >= 400 && answer.status < 500,
          `${field} after ${JSON.stringify(after)}: ${answer.status} ${answer.text}`,
        );
        assert.ok(answer.codes.length > 0, `${field} after ${JSON.stringify(after)} has no code: ${answer.text}`);
        assert.not.match(answer.text, /Unable to detect operation AST/);
      }
    });
  }
  test(`nestMessages over ${path}: every resume point the stream never sent is a coded 4xx`, async () => {
    const query = `subscription($after: String) { nestMessages(nestId: "todo", after: $after) { msgId } }`;
    for (const after of badMsgIds) {
      const answer = await subscribeOnce(path, query, { after });
      assert.not.ok(answer.open, `nestMessages after ${JSON.stringify(after)} left the stream open`);
      assert.ok(
        answer.status >= 400 && answer.status < 500,
        `nestMessages after ${JSON.stringify(after)}: ${answer.status} ${answer.text}`,
      );
      assert.ok(answer.codes.length > 0, `nestMessages after ${JSON.stringify(after)} has no code: ${answer.text}`);
      assert.not.match(answer.text, /Unable to detect operation AST/);
    }
    const unknownNest = await subscribeOnce(
      path,
      `subscription { nestMessages(nestId: "no-such-nest") { msgId } }`,
      {},
    );
    assert.is(unknownNest.status, 404, unknownNest.text);
    assert.equal(unknownNest.codes, ["not_found"]);
  });
  test(`a good resume point over ${path} still streams: the last id sent, and 0`, async () => {
    const lastSeq = await server.app.log.lastSeq(`list:${listId}`);
    const listEvents = intCursors.listEvents.replace("LIST", listId);
    // Each streams what follows its cursor: the first seq after it, an approval, a later message.
    const firstSeq = await firstFrom(path, listEvents, { after: 0 }, /"seq":(\d+)/);
    assert.is(firstSeq, "1", "after 0 streams the list from its first event");
    const lastOne = await firstFrom(path, listEvents, { after: lastSeq - 1 }, /"seq":(\d+)/);
    assert.is(lastOne, String(lastSeq), "after the one before the last streams the last");
    assert.ok(
      await firstFrom(path, intCursors.approvalChanges, { after: 0 }, /"id":(\d+)/),
      "approvalChanges from 0 streams the triage approval",
    );
    const ids = ((await server.get("/api/nests/todo/messages")).body as Array<{ msg_id: string }>).map((m) => m.msg_id);
    const [before, last] = ids.slice(-2);
    const later = await firstFrom(
      path,
      `subscription($after: String) { nestMessages(nestId: "todo", after: $after) { msgId } }`,
      { after: before },
      /"msgId":"([^"]+)"/,
    );
    assert.is(later, last, `nestMessages after ${before} streams the next message`);
    // The last id sent is a good resume point too: the stream opens and waits for what comes next.
    const answer = await subscribeOnce(path, listEvents, { after: lastSeq }, 700);
    assert.is(answer.status, 200);
    assert.ok(answer.open, "after the last id the stream stays open");
  });
}

test("the server keeps serving after all of it", async () => {
  const health = await server.get("/healthz");
  assert.is(health.status, 200);
});

test.run();

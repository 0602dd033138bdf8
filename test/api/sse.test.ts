// GET /api/events: SSE framing, heartbeats, and replay by Last-Event-ID with no gap and no
// duplicate, including across a server restart.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer } from "../helpers/server.ts";
import { openSse } from "../helpers/sse.ts";
import { ownerFollows } from "../helpers/owner.ts";

test("frames are id/event/data lines, heartbeats are comments, headers say event-stream", async () => {
  const server = await startTestServer({ env: { CROWS_HEARTBEAT_MS: "50" } });
  try {
    const { body } = await server.post("/api/lists", { text: "Buy milk", requester: "framer" });
    const sse = await openSse(`${server.url}/api/events?list_id=${body.list_id}`);
    assert.is(sse.status, 200);
    assert.match(sse.headers.get("content-type") ?? "", /^text\/event-stream/);
    assert.is(sse.headers.get("cache-control"), "no-cache");
    await sse.waitFor((m) => m.event === "item.triaged");
    await sse.waitForComment(2000);
    const raw = sse.text();
    const [opening, first] = raw.split("\n\n") as [string, string];
    assert.is(opening, "retry: 2000", "the stream opens with its reconnection delay");
    const lines = first.split("\n");
    assert.is(lines.length, 3);
    assert.is(lines[0], "id: 1");
    assert.is(lines[1], "event: list.started");
    assert.ok(lines[2]!.startsWith("data: {"));
    JSON.parse(lines[2]!.slice(6));
    assert.match(raw, /\n\n: heartbeat\n\n/);
    sse.close();
  } finally {
    await server.close();
  }
});

test("stream errors are JSON: 400 without a list, 404 for an unknown list, 400 for a bad Last-Event-ID", async () => {
  const server = await startTestServer();
  try {
    const none = await server.get("/api/events");
    assert.is(none.status, 400);
    assert.ok(none.body.message);
    const unknown = await server.get("/api/events?list_id=nope");
    assert.is(unknown.status, 404);
    assert.ok(unknown.body.message);
    const { body } = await server.post("/api/lists", { text: "Buy milk", requester: "bad-id" });
    const bad = await server.request("GET", `/api/events?list_id=${body.list_id}`, undefined, {
      "last-event-id": "banana",
    });
    assert.is(bad.status, 400);
  } finally {
    await server.close();
  }
});

test("Last-Event-ID replays exactly the events after it, then live ones, across a restart", async () => {
  let server = await startTestServer({ env: { CROWS_APPROVAL_WINDOW_MS: "60000" } });
  try {
    const { body } = await server.post("/api/lists", { text: "Buy milk\nCall the plumber", requester: "replayer" });
    const listId = body.list_id as string;
    // Let the list reach its pending triage approvals, then restart the server under it.
    const watcher = await openSse(`${server.url}/api/events?list_id=${listId}`);
    await watcher.waitFor((m) => m.event === "item.triaged" && m.data.item_id === `${listId}-2`);
    const before = watcher.messages();
    watcher.close();
    server = await server.restart();
    // A client that saw the first three events resumes from there.
    const resumed = await openSse(`${server.url}/api/events?list_id=${listId}`, { lastEventId: "3" });
    const replayed = await resumed.waitForCount(before.length - 3);
    assert.equal(
      replayed.map((m) => m.id),
      before.slice(3).map((m) => m.id),
      "replay starts right after the given id",
    );
    assert.equal(
      replayed.map((m) => m.raw),
      before.slice(3).map((m) => m.raw),
      "replayed bytes are the stored bytes",
    );
    resumed.close();
    // The pending approvals survived the restart: the owner answers them and the list finishes.
    const owner = await ownerFollows(server.url, listId);
    const all = await owner.finished;
    owner.sse.close();
    assert.equal(
      all.map((m) => m.id),
      all.map((_, i) => String(i + 1)),
      "one gapless sequence across the restart",
    );
    assert.is(all[all.length - 1]!.event, "list.finished");
    assert.ok(owner.answers.length >= 2 && owner.answers.every((a) => a.status === 204));
  } finally {
    await server.close();
  }
});

test.run();

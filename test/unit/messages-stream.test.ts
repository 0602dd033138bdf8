// The nest stream (GET /api/events?nest_id=): every post reaches every open stream of its nest
// once, in msg_id order, as `nest.message` with id <nest_id>-<n> and the full record beside nest_id
// and ts; other nests' posts and the Sentry's watch events stay off it; after a restart a client
// resumes with Last-Event-ID (a msg_id or its bare n) and misses nothing.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startKit, records, RECORD_FIELDS } from "../helpers/nest-kit.ts";

test("every post reaches every open stream of the nest once, in order, and replays after a restart", async () => {
  const kit = await startKit();
  let server = kit.server;
  try {
    await server.post("/api/nests", { name: "Launch copy", crows: ["Pepper", "Sable"] });
    const a = await kit.stream("launch-copy");
    const b = await kit.stream("launch-copy");
    const elsewhere = await kit.stream("todo");
    const posted: string[] = [];
    const authors = ["owner", "Pepper", "Sable", "owner", "Pepper"];
    for (const [i, author] of authors.entries()) {
      const response = await kit.post("launch-copy", { author, text: `line ${i + 1}`, kind: "say" });
      assert.is(response.status, 201);
      posted.push(response.body.msg_id);
    }
    // A request whose responders post from the background reaches the streams too.
    await kit.post("launch-copy", { author: "owner", text: "Pepper, a tagline please", kind: "request", to: "Pepper" });
    await kit.idle();
    const all = await kit.messages("launch-copy");
    assert.is(all.length, 8);
    for (const sse of [a, b]) {
      const got = await sse.waitForCount(8);
      assert.equal(
        got.map((m) => [m.id, m.event]),
        all.map((r: any) => [r.msg_id, "nest.message"]),
      );
      assert.equal(records(got), all, "the payload is the full record");
      const first = got[0]!.data;
      // The owner posted it through a request: its actor is appended after every contract field.
      assert.equal(Object.keys(first), ["nest_id", ...RECORD_FIELDS, "ts", "actor"]);
      assert.equal(first.actor, { kind: "owner" });
      // A post through the API names its poster's token whoever the author; the responders' own posts are no request's.
      assert.equal(got.find((m) => m.data.author === "Pepper")!.data.actor, { kind: "owner" });
      const background = got.find((m) => !posted.includes(m.data.msg_id) && m.data.author !== "owner")!.data;
      assert.equal(Object.keys(background), ["nest_id", ...RECORD_FIELDS, "ts"], "a responder's post carries no actor");
      assert.is(first.nest_id, "launch-copy");
      assert.ok(!Number.isNaN(Date.parse(first.ts)));
    }
    // Nothing more arrives: one copy each (the log holds 8 nest.message events, no watch events).
    assert.equal(
      (await server.app.log.read("nest:launch-copy")).map((e) => e.name),
      Array(8).fill("nest.message"),
    );
    assert.ok(
      (await server.app.log.read("watch:launch-copy")).length > 0,
      "the watchdog logged its verdicts on its own stream",
    );
    assert.is(elsewhere.messages().length, 0, "another nest's stream hears nothing");
    assert.equal([a.messages().length, b.messages().length], [8, 8]);
    a.close();
    b.close();
    elsewhere.close();

    // Restart on the same data: resume after msg 3 by msg_id, and by bare n.
    server = kit.server = await server.restart();
    const byId = await kit.stream("launch-copy", "launch-copy-3");
    const byN = await kit.stream("launch-copy", "3");
    for (const sse of [byId, byN]) {
      const replay = await sse.waitForCount(5);
      assert.equal(
        replay.map((m) => m.id),
        all.slice(3).map((r: any) => r.msg_id),
      );
    }
    const live = await kit.post("launch-copy", { author: "owner", text: "after the restart", kind: "say" });
    assert.is(live.body.msg_id, "launch-copy-9", "numbering carries on across the restart");
    for (const sse of [byId, byN]) {
      const next = await sse.waitFor((m) => m.id === "launch-copy-9");
      assert.is(next.data.text, "after the restart");
      assert.is(sse.messages().length, 6);
      sse.close();
    }
    const bad = await server.get("/api/events?nest_id=launch-copy&last_event_id=todo-2");
    assert.is(bad.status, 400);
    assert.is((await server.get("/api/events?nest_id=nope")).status, 404);
  } finally {
    await kit.close();
  }
});

test.run();

// One rule for every resume point a stream never sent (docs/rules.md "Resuming a stream"): a
// malformed Last-Event-ID ("abc", "-1", another nest's msg_id) and one past the stream's end
// ("999") are both a 400 {"message"} that names the stream's last id, on list streams and nest
// streams alike, and the nestMessages subscription's `after` follows it too. The last id itself,
// 0 and an absent header still resume.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer } from "../helpers/server.ts";
import { openSse } from "../helpers/sse.ts";
import { listStream } from "../../src/base/streams.ts";

test("list stream: malformed and past-the-end Last-Event-IDs are 400s naming the last id; real ones resume", async () => {
  const server = await startTestServer();
  try {
    const { body } = await server.post("/api/lists", { text: "Buy milk", requester: "cursor" });
    const url = `/api/events?list_id=${body.list_id}`;
    const first = await openSse(server.url + url);
    await first.waitFor((m) => m.event === "item.triaged");
    first.close();
    const last = await server.app.log.lastSeq(listStream(body.list_id));
    assert.ok(last >= 3, `the list has events (${last})`);
    for (const bad of ["abc", "-1", "999", String(last + 1), "1.5", "99999999999999999999"]) {
      const response = await server.request("GET", url, undefined, { "last-event-id": bad });
      assert.is(response.status, 400, bad);
      assert.ok(response.body.message.includes(`its last id is ${last}`), `${bad}: ${response.body.message}`);
    }
    // The query parameter follows the same rule.
    assert.is((await server.get(`${url}&last_event_id=999`)).status, 400);
    for (const good of ["", "0", String(last)]) {
      const sse = await openSse(server.url + url, good === "" ? {} : { lastEventId: good });
      assert.is(sse.status, 200, good);
      sse.close();
    }
  } finally {
    await server.close();
  }
});

test("nest stream: a msg_id or n past the end, another nest's id and junk are 400s naming the last msg_id", async () => {
  const server = await startTestServer();
  try {
    await server.post("/api/nests", { name: "Cafe", crows: ["Pepper"] });
    const empty = await server.request("GET", "/api/events?nest_id=cafe", undefined, { "last-event-id": "1" });
    assert.is(empty.status, 400);
    assert.ok(empty.body.message.includes("it has sent no event yet"), empty.body.message);
    for (const text of ["one", "two"])
      assert.is((await server.post("/api/nests/cafe/messages", { author: "owner", text, kind: "say" })).status, 201);
    for (const bad of ["999", "cafe-999", "3", "cafe-3", "todo-1", "abc", "-1"]) {
      const response = await server.request("GET", "/api/events?nest_id=cafe", undefined, { "last-event-id": bad });
      assert.is(response.status, 400, bad);
      assert.ok(response.body.message.includes("its last id is cafe-2"), `${bad}: ${response.body.message}`);
    }
    for (const good of ["cafe-2", "2", "cafe-1", "0"]) {
      const sse = await openSse(`${server.url}/api/events?nest_id=cafe`, { lastEventId: good });
      assert.is(sse.status, 200, good);
      sse.close();
    }
  } finally {
    await server.close();
  }
});

test.run();

// The 404 of POST /api/verdicts says what is not waiting in plain English: "an output verdict",
// "a triage verdict".
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer } from "../helpers/server.ts";
import { openSse } from "../helpers/sse.ts";

test("a verdict nothing waits for: 404 naming 'an output verdict' or 'a triage verdict'", async () => {
  const server = await startTestServer();
  try {
    const { body } = await server.post("/api/lists", { text: "Buy milk", requester: "wording" });
    const itemId = `${body.list_id}-1`;
    const sse = await openSse(`${server.url}/api/events?list_id=${body.list_id}`);
    await sse.waitFor((m) => m.event === "item.triaged");
    const early = await server.post("/api/verdicts", { item_id: itemId, target: "output", approve: true });
    assert.is(early.status, 404);
    assert.is(early.body.message, `Nothing is waiting for an output verdict on ${itemId}.`);
    assert.is((await server.post("/api/verdicts", { item_id: itemId, target: "triage", approve: true })).status, 204);
    const twice = await server.post("/api/verdicts", { item_id: itemId, target: "triage", approve: true });
    assert.is(twice.status, 404);
    assert.is(twice.body.message, `Nothing is waiting for a triage verdict on ${itemId}.`);
    sse.close();
  } finally {
    await server.close();
  }
});

test.run();

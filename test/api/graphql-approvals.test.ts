// approvalChanges on a real server and a real list: every approval that opens and closes, across
// lists, in commit order; resumable by global id with no duplicate; a bad cursor is refused in-band.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { openSse, type SseClient } from "../helpers/sse.ts";

const APPROVALS = `subscription($after: Int) { approvalChanges(after: $after) {
  id change listId itemId target verdict ts
  approval { status deadline item { text stage mode taskType subtasks reason answer crows } }
} }`;

let server: TestServer;

test.before(async () => {
  server = await startTestServer();
});
test.after(async () => {
  await server.close();
});

async function subscribe(after?: number): Promise<SseClient> {
  return openSse(server.url + "/graphql/stream", {
    json: { query: APPROVALS, variables: after === undefined ? {} : { after } },
  });
}

const changes = (sse: SseClient) =>
  sse
    .messages()
    .filter((m) => m.event === "next" && m.data?.data)
    .map((m) => m.data.data.approvalChanges);

async function submit(text: string): Promise<string> {
  const response = await server.post("/api/lists", { text, requester: "ana" });
  assert.is(response.status, 202, response.text);
  return response.body.list_id as string;
}

async function verdict(itemId: string, target: string, approve: boolean): Promise<void> {
  const response = await server.post("/api/verdicts", { item_id: itemId, target, approve });
  assert.is(response.status, 204, response.text);
}

test("opened for each triage with the item's triage and deadline, closed on a verdict; resume sends only what followed", async () => {
  const sse = await subscribe();
  const listA = await submit("- Buy milk\n- Write a haiku about crows");
  await sse.waitFor(() => changes(sse).filter((c) => c.change === "opened").length >= 2, 10_000);
  const opened = changes(sse).filter((c) => c.change === "opened");
  assert.equal(opened.map((c) => [c.listId, c.itemId, c.target]).sort(), [
    [listA, `${listA}-1`, "triage"],
    [listA, `${listA}-2`, "triage"],
  ]);
  for (const c of opened) {
    assert.is(c.verdict, null);
    assert.is(c.approval.status, "pending");
    assert.ok(Date.parse(c.approval.deadline) > Date.now(), "the deadline is ahead");
    assert.ok(["solo", "split", "murder"].includes(c.approval.item.mode));
    assert.type(c.approval.item.reason, "string");
    assert.ok(c.approval.item.text === "Buy milk" || c.approval.item.text === "Write a haiku about crows");
  }

  await verdict(`${listA}-1`, "triage", false);
  await sse.waitFor(() => changes(sse).some((c) => c.change === "closed"), 10_000);
  const closed = changes(sse).find((c) => c.change === "closed");
  assert.equal(
    [closed.itemId, closed.target, closed.verdict, closed.approval.status],
    [`${listA}-1`, "triage", "rejected", "rejected"],
  );

  // Ids rise in commit order, and the cursor resumes exactly after the last one seen.
  const ids = changes(sse).map((c) => c.id);
  assert.equal(
    ids,
    [...ids].sort((a, b) => a - b),
  );
  const cursor = ids[ids.length - 1]!;
  sse.close();

  await verdict(`${listA}-2`, "triage", true); // approved: the output approval opens later
  const resumed = await subscribe(cursor);
  try {
    await resumed.waitFor(() => changes(resumed).some((c) => c.target === "output" && c.change === "opened"), 10_000);
    const got = changes(resumed);
    assert.ok(
      got.every((c) => c.id > cursor),
      "nothing at or before the cursor again",
    );
    assert.equal(
      got.slice(0, 2).map((c) => [c.itemId, c.target, c.change, c.verdict]),
      [
        [`${listA}-2`, "triage", "closed", "approved"],
        [`${listA}-2`, "output", "opened", null],
      ],
    );
    const output = got[1];
    assert.type(output.approval.item.answer, "string");
    assert.ok(output.approval.item.crows.length >= 1, "the answer names its crows");
    await verdict(`${listA}-2`, "output", true);
    await resumed.waitFor(() => changes(resumed).some((c) => c.target === "output" && c.change === "closed"), 10_000);
  } finally {
    resumed.close();
  }
});

test("events that ask nothing of the owner (auto verdicts) are not in the feed, and ids never repeat", async () => {
  const all = await subscribe(0);
  try {
    await all.waitFor(() => changes(all).length >= 5, 10_000);
    const got = changes(all);
    assert.ok(
      got.every((c) =>
        c.change === "closed" ? ["approved", "rejected", "timeout"].includes(c.verdict) : c.verdict === null,
      ),
    );
    assert.is(new Set(got.map((c) => c.id)).size, got.length, "no duplicate ids");
  } finally {
    all.close();
  }
});

test("silence past the deadline closes the approval as timeout, live", async () => {
  const quick = await startTestServer({ env: { CROWS_APPROVAL_WINDOW_MS: "400" } });
  const sse = await openSse(quick.url + "/graphql/stream", { json: { query: APPROVALS, variables: {} } });
  try {
    const submitted = await quick.post("/api/lists", { text: "Buy milk", requester: "ana" });
    assert.is(submitted.status, 202, submitted.text);
    await sse.waitFor(() => changes(sse).some((c) => c.change === "closed"), 10_000);
    const got = changes(sse);
    const itemId = `${submitted.body.list_id}-1`;
    assert.equal(
      got.map((c) => [c.itemId, c.target, c.change, c.verdict]),
      [
        [itemId, "triage", "opened", null],
        [itemId, "triage", "closed", "timeout"],
      ],
    );
    assert.is(got[1].approval.status, "timeout");
  } finally {
    sse.close();
    await quick.close();
  }
});

test("a negative after is refused before the stream opens: 400 with bad_input", async () => {
  for (const after of [-1, -100]) {
    const answer = await fetch(server.url + "/graphql/stream", {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ query: APPROVALS, variables: { after } }),
    });
    const body = (await answer.json()) as { errors: Array<{ extensions: { code: string } }> };
    assert.is(answer.status, 400);
    assert.is(body.errors[0]!.extensions.code, "bad_input");
  }
});

test.run();

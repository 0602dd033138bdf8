// Nest messages over GraphQL: postMessage with its typed refusals, messages/asks/quarantines
// queries with `resolved` computed at read time, and the nestMessages subscription resuming from a
// msg_id over Yoga's SSE and over the graphql-sse protocol.
import { test } from "uvu";
import { requesterKey } from "../../src/flock/rate-limit.ts";
import * as assert from "uvu/assert";
import { createClient } from "graphql-sse";
import { startKit, type Kit } from "../helpers/nest-kit.ts";
import { openSse } from "../helpers/sse.ts";

async function gql(kit: Kit, query: string, variables: Record<string, unknown> = {}): Promise<any> {
  const response = await kit.server.request("POST", "/graphql", { query, variables });
  assert.is(response.status, 200, response.text);
  return response.body;
}

const POST = `mutation Post($nestId: ID!, $author: String!, $text: String!, $kind: String, $to: String, $refersTo: String, $approvalPhrase: String) {
  postMessage(nestId: $nestId, author: $author, text: $text, kind: $kind, to: $to, refersTo: $refersTo, approvalPhrase: $approvalPhrase) {
    __typename
    ... on Message { msgId nestId n kind author text to refersTo taggedBy mode modeTaggedBy invited approvalPhrase resolved ts }
    ... on Error { code message }
    ... on RateLimitedError { cooldownS }
  }
}`;

test("postMessage: the stored record, and each refusal as a typed error", async () => {
  const kit = await startKit();
  try {
    const ok = await gql(kit, POST, { nestId: "todo", author: "owner", text: " hello ", kind: "say" });
    assert.equal(ok.data.postMessage, {
      __typename: "Message",
      msgId: "todo-1",
      nestId: "todo",
      n: 1,
      kind: "say",
      author: "owner",
      text: "hello",
      to: "",
      refersTo: "",
      taggedBy: "header",
      mode: "",
      modeTaggedBy: "",
      invited: 0,
      approvalPhrase: "",
      resolved: "",
      ts: ok.data.postMessage.ts,
    });
    const missing = await gql(kit, POST, { nestId: "nope", author: "owner", text: "hi" });
    assert.equal(missing.data.postMessage, {
      __typename: "NotFoundError",
      code: "not_found",
      message: 'No nest "nope".',
    });
    const bad = await gql(kit, POST, { nestId: "todo", author: "owner", text: "  " });
    assert.equal(bad.data.postMessage, {
      __typename: "BadInputError",
      code: "bad_input",
      message: '"text" must be 1-2000 characters after trimming, got 0.',
    });
    await kit.server.app.prisma.quarantine.create({
      data: { crow: "Hugin", nestId: "todo", flagMsgId: "a", askMsgId: "b", referent: "c" },
    });
    const forbidden = await gql(kit, POST, { nestId: "todo", author: "Hugin", text: "hi", kind: "say" });
    assert.equal(forbidden.data.postMessage, {
      __typename: "ForbiddenError",
      code: "forbidden",
      message: "Hugin is quarantined pending the owner's decision.",
    });
    await kit.server.app.prisma.requester.create({
      data: { name: requesterKey("Rook"), pranks: 1, cooldownUntil: new Date(Date.now() + 30_000) },
    });
    const limited = await gql(kit, POST, { nestId: "todo", author: "Rook", text: "hi", kind: "say" });
    assert.is(limited.data.postMessage.__typename, "RateLimitedError");
    assert.ok(limited.data.postMessage.cooldownS > 0 && limited.data.postMessage.cooldownS <= 30);
    // REST and GraphQL share one path: the refused posts stored nothing.
    assert.is((await kit.messages("todo")).length, 1);
  } finally {
    await kit.close();
  }
});

test("messages, asks with their resolution, quarantines", async () => {
  const kit = await startKit({ env: { CROWS_APPROVAL_WINDOW_MS: "60000" } });
  try {
    const ask = await gql(kit, POST, {
      nestId: "todo",
      author: "owner",
      text: "Buy the tickets?",
      kind: "ask_owner",
      approvalPhrase: "buy them",
    });
    const open = await gql(kit, POST, {
      nestId: "todo",
      author: "Quill",
      text: "Cancel the dentist?",
      kind: "ask_owner",
      approvalPhrase: "cancel it",
    });
    await gql(kit, POST, {
      nestId: "todo",
      author: "owner",
      text: "Buy them",
      kind: "say",
      refersTo: ask.data.postMessage.msgId,
    });
    await kit.server.app.prisma.quarantine.create({
      data: { crow: "Inky", nestId: "todo", flagMsgId: "todo-9", askMsgId: "todo-10", referent: "todo-8" },
    });
    const result = await gql(
      kit,
      `query($nestId: ID!) {
        messages(nestId: $nestId, after: 1) { msgId kind resolved }
        open: asks(nestId: $nestId, resolved: "") { message { msgId author } resolved approvalPhrase approvedBy { msgId } }
        approved: asks(nestId: $nestId, resolved: "approved") { message { msgId } resolved approvedBy { msgId text } quarantine { crow } }
        quarantines(status: quarantined) { crow status retired referent }
        nest(id: $nestId) { messages(after: 2) { msgId } }
      }`,
      { nestId: "todo" },
    );
    assert.is(result.errors, undefined, JSON.stringify(result.errors));
    assert.equal(result.data.messages, [
      { msgId: "todo-2", kind: "ask_owner", resolved: "" },
      { msgId: "todo-3", kind: "say", resolved: "" },
    ]);
    assert.equal(result.data.open, [
      {
        message: { msgId: open.data.postMessage.msgId, author: "Quill" },
        resolved: "",
        approvalPhrase: "cancel it",
        approvedBy: null,
      },
    ]);
    assert.equal(result.data.approved, [
      {
        message: { msgId: "todo-1" },
        resolved: "approved",
        approvedBy: { msgId: "todo-3", text: "Buy them" },
        quarantine: null,
      },
    ]);
    assert.equal(result.data.quarantines, [
      { crow: "Inky", status: "quarantined", retired: false, referent: "todo-8" },
    ]);
    assert.equal(result.data.nest.messages, [{ msgId: "todo-3" }]);
    const unknown = await kit.server.request("POST", "/graphql", { query: `{ messages(nestId: "nope") { msgId } }` });
    assert.is(unknown.status, 404, "a refusal at the top level carries its REST status");
    assert.is(unknown.body.errors[0].message, 'No nest "nope".');
    assert.is(unknown.body.errors[0].extensions.code, "not_found");
  } finally {
    await kit.close();
  }
});

const SUBSCRIBE = `subscription($nestId: ID!, $after: String) { nestMessages(nestId: $nestId, after: $after) { msgId n author text resolved } }`;

/** Reads `next` frames of a Yoga SSE subscription (the shared SSE client) until `count` arrived. */
async function yogaSubscription(
  kit: Kit,
  variables: Record<string, unknown>,
  count: number,
  onFrame: (seen: number) => Promise<void>,
): Promise<any[]> {
  const sse = await openSse(kit.server.url + "/graphql", { json: { query: SUBSCRIBE, variables } });
  assert.ok((sse.headers.get("content-type") ?? "").startsWith("text/event-stream"));
  const nexts = () => sse.messages().filter((m) => m.event === "next" && m.data?.data);
  try {
    for (let seen = 1; seen <= count; seen++) {
      await sse.waitFor(() => nexts().length >= seen);
      await onFrame(seen);
    }
    return nexts().map((m) => m.data.data.nestMessages);
  } finally {
    sse.close();
  }
}

test("nestMessages resumes from a msg_id over Yoga SSE and graphql-sse, then follows live posts", async () => {
  const kit = await startKit();
  try {
    for (const text of ["one", "two", "three"]) await kit.post("todo", { author: "owner", text, kind: "say" });
    const yoga = await yogaSubscription(kit, { nestId: "todo", after: "todo-1" }, 3, async (seen) => {
      if (seen === 2) await kit.post("todo", { author: "Pepper", text: "four", kind: "say" });
    });
    assert.equal(
      yoga.map((m) => [m.msgId, m.n, m.author, m.text]),
      [
        ["todo-2", 2, "owner", "two"],
        ["todo-3", 3, "owner", "three"],
        ["todo-4", 4, "Pepper", "four"],
      ],
    );
    // Resume across a restart with the bare number, over the graphql-sse protocol.
    kit.server = await kit.server.restart();
    const client = createClient({ url: kit.server.url + "/graphql/stream", retryAttempts: 0 });
    const seen: string[] = [];
    try {
      for await (const result of client.iterate<{ nestMessages: { msgId: string; text: string } }>({
        query: SUBSCRIBE,
        variables: { nestId: "todo", after: "3" },
      })) {
        assert.is(result.errors, undefined);
        seen.push(`${result.data!.nestMessages.msgId} ${result.data!.nestMessages.text}`);
        if (seen.length === 1) await kit.post("todo", { author: "Sable", text: "five", kind: "say" });
        if (seen.length === 2) break;
      }
    } finally {
      client.dispose();
    }
    assert.equal(seen, ["todo-4 four", "todo-5 five"]);
    // A bad resume point or an unknown nest is refused in-band, and the stream ends.
    for (const [variables, message] of [
      [
        { nestId: "todo", after: "lists-3" },
        'after \\"lists-3\\" is not an id this stream sent; its last id is todo-5.',
      ],
      [{ nestId: "todo", after: "999" }, 'after \\"999\\" is not an id this stream sent; its last id is todo-5.'],
      [{ nestId: "nope" }, 'No nest \\"nope\\".'],
    ] as const) {
      const response = await fetch(kit.server.url + "/graphql", {
        method: "POST",
        headers: { "content-type": "application/json", accept: "text/event-stream" },
        body: JSON.stringify({ query: SUBSCRIBE, variables }),
      });
      const text = await response.text();
      assert.ok(text.includes(message), text);
      assert.ok(!text.includes('nestMessages":{'), "no message was sent");
    }
  } finally {
    await kit.close();
  }
});

test.run();

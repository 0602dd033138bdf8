// A reason with the owner's reply to an ask (issue 33, docs/rules.md "Reasons"): optional, bounded
// as a verdict's reason, sent over REST, GraphQL and the decide link's page; stored on the reply,
// shown on its record (last, only when given) and appended last to its nest.message payload, so
// the ask.resolved webhook carries it; refused on anything but the owner's reply to an ask.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { startReceiver } from "../helpers/webhook-receiver.ts";
import { nestStream } from "../../src/base/streams.ts";
import { withKit, waitForRecord, CLEAN, OFF_TOPIC } from "../helpers/nest-kit.ts";

async function ask(server: TestServer, phrase: string): Promise<string> {
  const posted = await server.post("/api/nests/todo/messages", {
    author: "owner",
    kind: "ask_owner",
    text: `May the crows order beans? Reply "${phrase}".`,
    approval_phrase: phrase,
  });
  assert.is(posted.status, 201, JSON.stringify(posted.body));
  return posted.body.msg_id;
}

/** The nest.message payload of one message, as stored in the log. */
async function payloadOf(server: TestServer, msgId: string): Promise<Record<string, unknown>> {
  const events = await server.app.log.read(nestStream("todo"), 0, 100_000);
  const found = events.map((e) => JSON.parse(e.payload)).find((p) => p.msg_id === msgId);
  assert.ok(found, `the event of ${msgId}`);
  return found;
}

test("REST: the reply's reason is stored, shown last on its record and last on its event; bad ones are 400s", async () => {
  const server = await startTestServer();
  try {
    const askId = await ask(server, "go ahead");
    const reply = await server.post("/api/nests/todo/messages", {
      author: "owner",
      text: "go ahead",
      refers_to: askId,
      reason: "  only the house blend  ",
    });
    assert.is(reply.status, 201, JSON.stringify(reply.body));
    assert.is(reply.body.reason, "only the house blend", "trimmed");
    assert.is(Object.keys(reply.body).at(-1), "reason", "last on the record");
    const records = (await server.get("/api/nests/todo/messages")).body as any[];
    const shown = records.find((r) => r.msg_id === reply.body.msg_id);
    assert.is(shown.reason, "only the house blend");
    assert.is(records.find((r) => r.msg_id === askId).resolved, "approved", "the reply still approves");
    assert.ok(
      records.filter((r) => r.msg_id !== reply.body.msg_id).every((r) => !("reason" in r)),
      "no other record gains a field",
    );
    const payload = await payloadOf(server, reply.body.msg_id);
    assert.equal(Object.keys(payload).slice(-3), ["ts", "actor", "reason"], "appended last, after the actor");
    assert.is(payload.reason, "only the house blend");
    assert.not.ok("reason" in (await payloadOf(server, askId)), "the ask's event is unchanged");

    // Refused: anything but the owner's reply to an ask, a reason too long, or not text.
    const other = await ask(server, "fine");
    const bad: Array<[string, Record<string, unknown>, RegExp]> = [
      ["no referent", { author: "owner", text: "fine", reason: "x" }, /reply to an ask only/],
      ["not an ask", { author: "owner", text: "fine", refers_to: reply.body.msg_id, reason: "x" }, /reply to an ask/],
      ["a crow", { author: "Hugin", text: "fine", refers_to: other, reason: "x" }, /reply to an ask only/],
      ["too long", { author: "owner", text: "fine", refers_to: other, reason: "y".repeat(1001) }, /at most 1,000/],
      ["not text", { author: "owner", text: "fine", refers_to: other, reason: 7 }, /reason/],
    ];
    for (const [what, body, message] of bad) {
      const res = await server.post("/api/nests/todo/messages", body);
      assert.is(res.status, 400, `${what}: ${JSON.stringify(res.body)}`);
      assert.match(res.body.message, message, what);
    }
    const after = (await server.get("/api/nests/todo/messages")).body as any[];
    assert.is(after.find((r) => r.msg_id === other).resolved, "", "no refused reply approved anything");
    // Only spaces is no reason: the reply is stored bare, as before.
    const bare = await server.post("/api/nests/todo/messages", {
      author: "owner",
      text: "fine",
      refers_to: other,
      reason: "   ",
    });
    assert.is(bare.status, 201);
    assert.not.ok("reason" in bare.body);
  } finally {
    await server.close();
  }
});

test("GraphQL: postMessage takes a reason; Message.reason shows it (null elsewhere); a bad one is a BadInputError", async () => {
  const server = await startTestServer();
  try {
    const askId = await ask(server, "yes please");
    const post = (reason: string) =>
      server.post("/graphql", {
        query: `mutation($ask: String, $reason: String) {
          postMessage(nestId: "todo", author: "owner", text: "yes please", refersTo: $ask, reason: $reason) {
            __typename ... on Message { msgId reason } ... on BadInputError { message }
          }
        }`,
        variables: { ask: askId, reason },
      });
    const tooLong = await post("z".repeat(1001));
    assert.is(tooLong.body.data.postMessage.__typename, "BadInputError", tooLong.text);
    const res = await post("the oat milk too");
    assert.not.ok(res.body.errors, res.text);
    const posted = res.body.data.postMessage;
    assert.is(posted.reason, "the oat milk too");
    const read = await server.post("/graphql", { query: `{ messages(nestId: "todo") { msgId reason } }` });
    assert.not.ok(read.body.errors, read.text);
    const byId = new Map(read.body.data.messages.map((m: any) => [m.msgId, m.reason]));
    assert.is(byId.get(posted.msgId), "the oat milk too");
    assert.is(byId.get(askId), null);
  } finally {
    await server.close();
  }
});

test("the decide link's page takes a reason with the reply; ask.resolved carries it", async () => {
  const receiver = await startReceiver();
  const server = await startTestServer({
    env: { CROWS_WEBHOOK_ALLOW_PRIVATE: "1", CROWS_WEBHOOK_POLL_S: "0.05", CROWS_APPROVAL_WINDOW_MS: "600000" },
  });
  try {
    const added = await server.request("POST", "/api/webhooks", { url: receiver.url });
    assert.is(added.status, 201, added.text);
    receiver.secrets.push(added.body.secret);
    const askId = await ask(server, "order them");
    await receiver.waitFor((r) => r.some((d) => d.body.type === "ask.opened" && d.body.data.msg_id === askId));
    const opened = receiver.received.find((d) => d.body.type === "ask.opened")!.body.data;
    const page = await fetch(opened.approve_url).then((r) => r.text());
    assert.match(page, /<textarea name="reason"/, "the page offers a reason box");
    const origin = new URL(opened.approve_url).origin;
    const form = { origin, "content-type": "application/x-www-form-urlencoded" };
    // Too long: nothing is replied, and the page says why.
    const refused = await fetch(opened.approve_url, {
      method: "POST",
      headers: form,
      body: new URLSearchParams({ reason: "w".repeat(1001) }).toString(),
    });
    assert.is(refused.status, 400);
    assert.match(await refused.text(), /Nothing was replied/);
    const pressed = await fetch(opened.approve_url, {
      method: "POST",
      headers: form,
      body: new URLSearchParams({ reason: "two bags, no more" }).toString(),
    });
    assert.is(pressed.status, 200, await pressed.text());
    const records = (await server.get("/api/nests/todo/messages")).body as any[];
    const reply = records.find((r) => r.refers_to === askId && r.author === "owner");
    assert.equal([reply.text, reply.reason], ["order them", "two bags, no more"]);
    assert.is(records.find((r) => r.msg_id === askId).resolved, "approved");
    await receiver.waitFor((r) => r.some((d) => d.body.type === "ask.resolved" && d.body.data.ask_id === askId));
    const resolved = receiver.received.find((d) => d.body.type === "ask.resolved")!.body.data;
    assert.equal([resolved.verdict, resolved.reason], ["approved", "two bags, no more"]);
    assert.equal(resolved.actor, { kind: "link", webhook_id: added.body.id });
  } finally {
    await server.close();
    await receiver.close();
  }
});

test("the Sentry's ask: the reinstate's reason is kept on the Sentry's trust entry", () =>
  withKit(async (kit) => {
    kit.plan.watch = (state) => (state.author === "Sable" ? OFF_TOPIC : CLEAN);
    await kit.server.post("/api/nests", { name: "Crew", crows: ["Sable"] });
    const sse = await kit.stream("crew");
    try {
      await kit.post("crew", { author: "owner", text: "Summarise the notes, Sable", kind: "request", to: "Sable" });
      const ask = await waitForRecord(sse, (r) => r.kind === "ask_owner" && r.approval_phrase === "reinstate Sable");
      kit.plan.watch = () => CLEAN;
      const reply = await kit.post("crew", {
        author: "owner",
        text: "reinstate Sable",
        refers_to: ask.msg_id,
        reason: "the notes were off topic, not Sable",
      });
      assert.is(reply.status, 201, JSON.stringify(reply.body));
      await kit.idle();
      const entry = await kit.server.app.prisma.trustEntry.findFirst({
        where: { holder: "Sentry", taskType: "triage/watch", subject: ask.msg_id },
      });
      assert.equal([entry?.verdict, entry?.reason], ["approved", "the notes were off topic, not Sable"]);
    } finally {
      sse.close();
    }
  }));

test.run();

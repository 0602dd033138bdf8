// Silence counts as no, and a receiver hears it (docs/nests-chat.md "ask_owner", docs/webhooks.md
// "Event types"): a nest ask nobody answers within CROWS_APPROVAL_WINDOW_MS gets exactly one
// ask.expired in the log (watch:<nest_id>) and exactly one ask.resolved delivery with verdict
// timeout; an ask answered in time never expires and its one ask.resolved says approved. Many asks
// with varied answers and deadlines each get their own outcome, the nest's SSE wire carries only
// its messages, an ask left when the server stops expires once after it starts again, and an
// expiry never reaches a receiver before its ask.opened.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startKit, type Kit } from "../helpers/nest-kit.ts";
import { startReceiver, type Receiver, type Received } from "../helpers/webhook-receiver.ts";
import { eventually } from "../helpers/scale-services.ts";
import type { TestServer } from "../helpers/server.ts";
import { nestStream, watchStream } from "../../src/base/streams.ts";

const WINDOW_MS = 4000;

async function setUp(
  windowMs = WINDOW_MS,
  env: Record<string, string> = {},
): Promise<{ kit: Kit; receiver: Receiver }> {
  const receiver = await startReceiver();
  const kit = await startKit({
    env: {
      CROWS_WEBHOOK_ALLOW_PRIVATE: "1",
      CROWS_WEBHOOK_POLL_S: "0.05",
      CROWS_APPROVAL_WINDOW_MS: String(windowMs),
      ...env,
    },
  });
  const added = await kit.server.post("/api/webhooks", { url: receiver.url });
  assert.is(added.status, 201, added.text);
  receiver.secrets.push(added.body.secret);
  return { kit, receiver };
}

async function ask(kit: Kit, author: string, text: string, phrase: string): Promise<string> {
  const posted = await kit.post("todo", { author, text, kind: "ask_owner", approval_phrase: phrase });
  assert.is(posted.status, 201, JSON.stringify(posted.body));
  return posted.body.msg_id;
}

async function reply(kit: Kit, text: string, refersTo?: string): Promise<string> {
  const posted = await kit.post("todo", {
    author: "owner",
    kind: "say",
    text,
    ...(refersTo ? { refers_to: refersTo } : {}),
  });
  assert.is(posted.status, 201, JSON.stringify(posted.body));
  return posted.body.msg_id;
}

/** The ask.expired events of the nest's side log, as payloads. */
async function expiries(server: TestServer, askId: string): Promise<any[]> {
  const events = await server.app.log.read(watchStream("todo"), 0, 100_000);
  return events
    .filter((e) => e.name === "ask.expired")
    .map((e) => JSON.parse(e.payload))
    .filter((p) => p.ask_id === askId);
}

/** Deliveries of one type about one ask, one per webhook-id (a receiver dedupes on it). */
function delivered(receiver: Receiver, type: string, askId: string): Received[] {
  const byId = new Map<string, Received>();
  for (const d of receiver.received) {
    const about = type === "ask.opened" ? d.body.data.msg_id : d.body.data.ask_id;
    if (d.body.type === type && about === askId && !byId.has(d.id)) byId.set(d.id, d);
  }
  return [...byId.values()];
}

/**
 * The quiet that makes "exactly one" provable: no ask's obligation is open (so no expiry can be
 * appended any more) and the endpoint has no delivery left pending (so everything logged was sent).
 */
async function quiet(server: TestServer): Promise<void> {
  const prisma = server.app.prisma;
  await eventually(
    "every ask closed",
    async () =>
      (await prisma.obligation.count({
        where: { id: { startsWith: "ask:" }, stage: { in: ["awaiting_claim", "claimed"] } },
      })) === 0
        ? true
        : undefined,
    30_000,
  );
  // The outbox empty (every event expanded into its deliveries) and no delivery pending.
  await eventually(
    "every delivery sent",
    async () =>
      (await prisma.webhookOutbox.count()) + (await prisma.webhookDelivery.count({ where: { state: "pending" } })) === 0
        ? true
        : undefined,
    30_000,
  );
}

const resolvedOnGet = async (kit: Kit, askId: string) =>
  (await kit.messages("todo")).find((m: any) => m.msg_id === askId).resolved;

type Outcome = "approved" | "timeout";

test("each ask gets its own outcome: unanswered ones expire once (ask.resolved, verdict timeout), answered ones never do", async () => {
  const { kit, receiver } = await setUp();
  try {
    const expected = new Map<string, Outcome>();
    const phrases = new Map<string, string>();
    const replies = new Map<string, string>();
    const park = async (author: string, text: string, phrase: string, outcome: Outcome) => {
      const id = await ask(kit, author, text, phrase);
      expected.set(id, outcome);
      phrases.set(id, phrase);
      return id;
    };

    // Round one, posted together. The askers are the owner-facing roles, so the owner's own posts
    // (every reply) stay inside the rate limit of docs/flock.md §5.
    const venue = await park("Sentry", "May the crows book the venue?", "book it", "approved");
    await park("Quill", "Shall I send the newsletter?", "send it", "timeout");
    const cake = await park("Sentry", "Order the cake?", "order the cake", "timeout");
    await park("Quill", "Ship the release?", "ship it", "timeout");
    const go = await park("Quill", "Start the migration?", "Go", "approved");
    replies.set(venue, await reply(kit, "  Book It ", venue)); // trimmed and lowercased: a yes
    await reply(kit, "no thanks", cake); // a reply, but not the phrase: not a yes
    await reply(kit, "ship it"); // the phrase, but referring to nothing: not an answer to the ask
    replies.set(go, await reply(kit, "go", go));

    // Round two, once round one's first expiry is out: later deadlines, interleaved with round one's.
    await receiver.waitFor(
      (r) => r.some((d) => d.body.type === "ask.resolved" && d.body.data.verdict === "timeout"),
      30_000,
      "round one's first expiry",
    );
    const domain = await park("Sentry", "Renew the domain?", "renew it", "timeout");
    const budget = await park("Quill", "Approve the Q3 budget?", "approve budget", "approved");
    const invoice = await park("Sentry", "Pay the printer's invoice?", "pay it", "timeout");
    replies.set(budget, await reply(kit, "APPROVE BUDGET", budget));
    assert.is(await resolvedOnGet(kit, domain), "", "open inside its window");

    // The invoice expires; an exact reply after that is too late and resolves nothing.
    await receiver.waitFor(
      () => delivered(receiver, "ask.resolved", invoice).length > 0,
      30_000,
      "the invoice's expiry",
    );
    const late = await reply(kit, "pay it", invoice);
    await receiver.waitFor(() => delivered(receiver, "ask.resolved", domain).length > 0, 30_000, "the domain's expiry");
    await quiet(kit.server);
    const lateDelivery = await kit.server.app.prisma.webhookDelivery.findMany({
      where: {
        type: "ask.resolved",
        eventId: {
          in: (await kit.server.app.log.read(nestStream("todo"), 0, 100_000))
            .filter((e) => JSON.parse(e.payload).msg_id === late)
            .map((e) => e.id),
        },
      },
    });
    assert.equal(
      lateDelivery.map((d) => d.state),
      ["dropped"],
      "the late reply's ask.resolved was not sent: it resolved nothing",
    );

    assert.equal(receiver.unverified, [], "every delivery verified with standardwebhooks");
    const order = receiver.received.map((d) => d.id);
    for (const [askId, outcome] of expected) {
      const what = `${askId} (${phrases.get(askId)})`;
      const opened = delivered(receiver, "ask.opened", askId);
      const resolved = delivered(receiver, "ask.resolved", askId);
      assert.is(opened.length, 1, `${what}: one ask.opened`);
      assert.is(resolved.length, 1, `${what}: exactly one ask.resolved, got ${resolved.length}`);
      assert.ok(order.indexOf(resolved[0]!.id) > order.indexOf(opened[0]!.id), `${what}: resolved after opened`);
      const data = resolved[0]!.body.data;
      const logged = await expiries(kit.server, askId);
      const row = await kit.server.app.prisma.obligation.findUniqueOrThrow({ where: { id: `ask:${askId}` } });
      if (outcome === "timeout") {
        assert.is(logged.length, 1, `${what}: exactly one ask.expired in the log`);
        assert.equal(data, logged[0], `${what}: the delivery's data is the logged expiry`);
        assert.equal(
          [data.nest_id, data.ask_id, data.approval_phrase, data.verdict, data.resolved, data.actor],
          ["todo", askId, phrases.get(askId), "timeout", "rejected", { kind: "system" }],
          what,
        );
        assert.is(data.deadline, opened[0]!.body.data.deadline, `${what}: the deadline ask.opened announced`);
        assert.ok(
          Date.parse(data.ts) > Date.parse(data.deadline),
          `${what}: expired after its deadline (${data.ts} vs ${data.deadline})`,
        );
        assert.is(await resolvedOnGet(kit, askId), "rejected");
        assert.is(row.stage, "declined");
      } else {
        assert.is(logged.length, 0, `${what}: answered in time, never expired`);
        assert.equal(
          [data.ask_id, data.msg_id, data.verdict, data.resolved, data.approval_phrase],
          [askId, replies.get(askId), "approved", "approved", phrases.get(askId)],
          what,
        );
        assert.is(await resolvedOnGet(kit, askId), "approved");
        assert.equal([row.stage, row.answerId], ["answered", replies.get(askId)]);
      }
    }

    // The nest's stream, and so its compat SSE wire, still carries exactly one nest.message per message.
    const messages = await kit.messages("todo");
    const stream = await kit.server.app.log.read(nestStream("todo"), 0, 100_000);
    assert.equal([...new Set(stream.map((e) => e.name))], ["nest.message"]);
    assert.is(stream.length, messages.length);
    const sse = await kit.stream("todo", "0");
    try {
      const frames = await sse.waitForCount(messages.length, 15_000);
      assert.equal(
        frames.map((f) => f.event),
        messages.map(() => "nest.message"),
      );
      assert.equal(
        frames.map((f) => f.id),
        messages.map((m: any) => m.msg_id),
      );
    } finally {
      sse.close();
    }
  } finally {
    await kit.close();
    await receiver.close();
  }
});

test("an ask left when the server stops expires once after it starts again past the deadline; one answered before the stop never does", async () => {
  const windowMs = 2500;
  // Short leases: a restarted server's sweeps come every 200 ms.
  const { kit, receiver } = await setUp(windowMs, { CROWS_LEASE_MS: "600" });
  try {
    const left = await ask(kit, "Sentry", "May the crows book the venue?", "book it");
    const answered = await ask(kit, "Quill", "Shall I send the newsletter?", "send it");
    await reply(kit, "send it", answered);
    await receiver.waitFor(
      () =>
        delivered(receiver, "ask.opened", left).length === 1 &&
        delivered(receiver, "ask.resolved", answered).length === 1,
      20_000,
      "the opened and approved asks",
    );
    const deadline = Date.parse(delivered(receiver, "ask.opened", left)[0]!.body.data.deadline);
    let stoppedAt = 0;
    let startedAt = 0;
    kit.server = await kit.server.restart({
      whileDown: async () => {
        stoppedAt = Date.now();
        await eventually(
          "the deadline to pass while the server is down",
          async () => (Date.now() > deadline + 200 ? true : undefined),
          windowMs + 20_000,
        );
        startedAt = Date.now();
      },
    });
    assert.ok(
      stoppedAt < deadline,
      `the server stopped ${stoppedAt - deadline} ms after the deadline, not before: raise the window`,
    );
    // The restarted server may expire it at once (its first lease sweep): none is stamped before it started.
    assert.equal(
      (await expiries(kit.server, left)).filter((e) => Date.parse(e.ts) < startedAt),
      [],
      "nothing expired while the server was down",
    );

    await receiver.waitFor(() => delivered(receiver, "ask.resolved", left).length > 0, 30_000, "the left ask's expiry");
    await quiet(kit.server);
    const [expired] = await expiries(kit.server, left);
    assert.ok(Date.parse(expired.ts) >= startedAt, "expired by the restarted server");
    assert.is(expired.deadline, new Date(deadline).toISOString());
    assert.equal(
      delivered(receiver, "ask.resolved", left).map((d) => d.body.data),
      [expired],
    );
    assert.is(await resolvedOnGet(kit, left), "rejected");

    // Once more: a restart after the expiry takes nothing up again (two lease sweeps prove it looked).
    kit.server = await kit.server.restart();
    const swept = kit.server.app.chat.obligationSweepsDone();
    await eventually(
      "two lease sweeps after the restart",
      async () => (kit.server.app.chat.obligationSweepsDone() >= swept + 2 ? true : undefined),
      20_000,
    );
    await quiet(kit.server);
    assert.is((await expiries(kit.server, left)).length, 1, "still one expiry");
    assert.equal(await expiries(kit.server, answered), [], "the answered ask never expired");
    assert.is(delivered(receiver, "ask.resolved", left).length, 1);
    assert.equal(
      delivered(receiver, "ask.resolved", answered).map((d) => d.body.data.verdict),
      ["approved"],
    );
    assert.equal(receiver.unverified, []);
  } finally {
    await kit.close();
    await receiver.close();
  }
});

test("an expiry waits in line behind its ask.opened at a receiver that asked for a retry later", async () => {
  const { kit, receiver } = await setUp(1500);
  try {
    // The ask.opened's first try is told to come back in 3 s; its ask's window is 1.5 s.
    let refused = false;
    receiver.answer = ({ body }) => {
      if (body.type !== "ask.opened" || refused) return {};
      refused = true;
      return { status: 503, headers: { "retry-after": "3" } };
    };
    const asked = await ask(kit, "Quill", "Shall I send the newsletter?", "send it");
    await receiver.waitFor(() => delivered(receiver, "ask.resolved", asked).length > 0, 30_000, "the expiry");
    const [expired] = await expiries(kit.server, asked);
    const opened = delivered(receiver, "ask.opened", asked)[0]!;
    const resolved = delivered(receiver, "ask.resolved", asked)[0]!;
    const openedTries = receiver.received.filter((d) => d.id === opened.id);
    assert.is(openedTries.length, 2, "refused once, then delivered");
    assert.ok(
      Date.parse(expired.ts) < openedTries[1]!.at,
      "the expiry was logged while ask.opened waited for its retry",
    );
    assert.equal(receiver.acked, [opened.id, resolved.id], "ask.opened was delivered before its ask.resolved");
  } finally {
    await kit.close();
    await receiver.close();
  }
});

test.run();

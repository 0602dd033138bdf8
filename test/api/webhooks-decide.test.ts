// Decide links, with and without CROWS_TOKEN: a GET (and a HEAD) changes nothing; the POST decides
// once, through the verdict path, with the link as the actor; a second POST changes nothing; a
// link for one approval cannot decide another; a link past its deadline, or tampered with, is
// refused. The same for a nest ask: the POST posts the owner's reply with the approval phrase.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { startReceiver, type Receiver } from "../helpers/webhook-receiver.ts";
import { signLink } from "../../src/webhooks/links.ts";

const TOKEN = "decide-links-test-token-0123456789";
const ENV = { CROWS_WEBHOOK_ALLOW_PRIVATE: "1", CROWS_WEBHOOK_POLL_S: "0.05", CROWS_APPROVAL_WINDOW_MS: "60000" };

for (const token of [undefined, TOKEN]) {
  const label = token ? "with CROWS_TOKEN" : "without a token";
  const auth: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};

  /** A link fetched the way a mail client or a browser would: no token, no cookie. */
  const open = (url: string, method = "GET") =>
    fetch(url, { method, headers: { accept: "text/html" }, redirect: "manual" }).then(async (r) => ({
      status: r.status,
      text: await r.text(),
      headers: r.headers,
    }));
  /** The page's button: a same-origin form POST with no fields. */
  const press = (url: string) =>
    fetch(url, {
      method: "POST",
      headers: {
        origin: new URL(url).origin,
        "content-type": "application/x-www-form-urlencoded",
        accept: "text/html",
      },
    }).then(async (r) => ({ status: r.status, text: await r.text() }));

  async function setUp(
    env: Record<string, string> = {},
  ): Promise<{ server: TestServer; receiver: Receiver; endpointId: string }> {
    const receiver = await startReceiver();
    const server = await startTestServer({ env: { ...ENV, ...(token ? { CROWS_TOKEN: token } : {}), ...env } });
    const added = await server.request("POST", "/api/webhooks", { url: receiver.url }, auth);
    assert.is(added.status, 201, added.text);
    receiver.secrets.push(added.body.secret);
    return { server, receiver, endpointId: added.body.id };
  }

  test(`${label}: GET shows, POST decides once with the link as actor, a second POST and the other link change nothing`, async () => {
    const { server, receiver, endpointId } = await setUp();
    try {
      const list = await server.request(
        "POST",
        "/api/lists",
        { text: "Buy milk\nWrite a haiku about crows", requester: "links" },
        auth,
      );
      assert.is(list.status, 202, list.text);
      const listId = list.body.list_id as string;
      await receiver.waitFor((r) => r.filter((d) => d.body.type === "approval.requested").length >= 2);
      const [first, second] = receiver.received
        .filter((d) => d.body.type === "approval.requested")
        .map((d) => d.body.data);
      assert.equal([first.item, second.item].sort(), [`${listId}-1`, `${listId}-2`]);
      const pending = () => server.app.log.state.approval(first.item, "triage").then((row) => row?.status);

      for (const method of ["GET", "HEAD", "GET"]) {
        const page = await open(first.approve_url, method);
        assert.is(page.status, 200, page.text);
        assert.is(page.headers.get("cache-control"), "no-store");
        if (method === "GET") {
          assert.match(page.text, /<form method="post"><button type="submit">Approve<\/button><\/form>/);
          assert.match(page.text, /Buy milk|Write a haiku/);
        }
        assert.is(await pending(), "pending");
      }
      assert.is((await open(first.reject_url)).status, 200);
      assert.is(await pending(), "pending");

      // Tampered: a flipped mac, claims from another link under this one's mac, a cut link.
      const [claimsA, macA] = new URL(first.approve_url).pathname.slice("/decide/".length).split(".");
      const [claimsB] = new URL(second.approve_url).pathname.slice("/decide/".length).split(".");
      const base = new URL(first.approve_url).origin;
      const flipped = `${base}/decide/${claimsA}.${macA![0] === "A" ? "B" : "A"}${macA!.slice(1)}`;
      for (const bad of [flipped, `${base}/decide/${claimsB}.${macA}`]) {
        assert.is((await open(bad)).status, 404);
        const pressed = await press(bad);
        assert.is(pressed.status, 404);
        assert.match(pressed.text, /not valid/);
      }
      assert.is(await pending(), "pending");
      assert.is(await server.app.log.state.approval(second.item, "triage").then((r) => r?.status), "pending");

      const decided = await press(first.approve_url);
      assert.is(decided.status, 200, decided.text);
      assert.match(decided.text, /approved/);
      assert.is(await pending(), "approved");
      const again = await press(first.approve_url);
      assert.is(again.status, 409);
      assert.match(again.text, /Already decided/);
      assert.is((await press(first.reject_url)).status, 409);
      assert.is((await open(first.approve_url)).status, 409);
      assert.is(await pending(), "approved");
      // The other approval is untouched by any of it.
      assert.is(await server.app.log.state.approval(second.item, "triage").then((r) => r?.status), "pending");

      // The verdict records the link as its actor, and the receiver gets it on approval.decided.
      const verdicts = (await server.app.log.read(`list:${listId}`))
        .filter((e) => e.name === "verdict")
        .map((e) => JSON.parse(e.payload));
      assert.equal(
        verdicts.map((v) => [v.item_id, v.verdict, v.actor]),
        [[first.item, "approved", { kind: "link", webhook_id: endpointId }]],
      );
      await receiver.waitFor((r) => r.some((d) => d.body.type === "approval.decided"));
      assert.equal(receiver.received.find((d) => d.body.type === "approval.decided")!.body.data.actor, {
        kind: "link",
        webhook_id: endpointId,
      });

      // Reject through the second approval's link.
      assert.is((await press(second.reject_url)).status, 200);
      assert.is(await server.app.log.state.approval(second.item, "triage").then((r) => r?.status), "rejected");
      assert.equal(receiver.unverified, []);

      if (token) {
        // Only decide links pass without the token: the API and shapes that are not a link still ask for it.
        assert.is((await fetch(`${server.url}/api/webhooks`)).status, 401);
        assert.is((await fetch(`${server.url}/decide/nothing`)).status, 401);
        assert.is(
          (
            await fetch(`${server.url}/api/verdicts`, {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: "{}",
            })
          ).status,
          401,
        );
      }
    } finally {
      await server.close();
      await receiver.close();
    }
  });

  test(`${label}: a link past its deadline is refused and changes nothing`, async () => {
    const { server, receiver, endpointId } = await setUp();
    try {
      const list = await server.request("POST", "/api/lists", { text: "Buy milk", requester: "links" }, auth);
      const listId = list.body.list_id as string;
      await receiver.waitFor((r) => r.some((d) => d.body.type === "approval.requested"));
      const key = await server.app.webhooks.linkKey();
      const subject = { kind: "approval" as const, itemId: `${listId}-1`, target: "triage" };
      for (const expiresMs of [Date.now() - 1, Date.now() - 60_000, 0]) {
        const url = server.url + signLink(key, { subject, action: "approve", webhookId: endpointId, expiresMs });
        const page = await open(url);
        assert.is(page.status, 410);
        assert.match(page.text, /expired/);
        assert.is((await press(url)).status, 410);
      }
      assert.is(await server.app.log.state.approval(subject.itemId, "triage").then((r) => r?.status), "pending");
      // Signed by another key: not this server's link.
      const forged =
        server.url +
        signLink(Buffer.alloc(32, 1), {
          subject,
          action: "approve",
          webhookId: endpointId,
          expiresMs: Date.now() + 60_000,
        });
      assert.is((await press(forged)).status, 404);
      assert.is(await server.app.log.state.approval(subject.itemId, "triage").then((r) => r?.status), "pending");
      await server.request(
        "POST",
        "/api/verdicts",
        { item_id: subject.itemId, target: "triage", approve: false },
        auth,
      );
      await server.app.flock.settled(listId);
    } finally {
      await server.close();
      await receiver.close();
    }
  });

  test(`${label}: an ask's link posts the owner's reply with the phrase, once`, async () => {
    const { server, receiver } = await setUp();
    try {
      const asked = await server.request(
        "POST",
        "/api/nests/todo/messages",
        { author: "owner", text: "Ship the launch copy?", kind: "ask_owner", approval_phrase: "Ship It" },
        auth,
      );
      assert.is(asked.status, 201, asked.text);
      await receiver.waitFor((r) => r.some((d) => d.body.type === "ask.opened"));
      const opened = receiver.received.find((d) => d.body.type === "ask.opened")!.body.data;
      assert.is(opened.msg_id, asked.body.msg_id);
      assert.is(opened.approval_phrase, "Ship It");
      const messages = () => server.app.prisma.message.count({ where: { nestId: "todo" } });
      const before = await messages();
      const page = await open(opened.approve_url);
      assert.is(page.status, 200);
      assert.match(page.text, /Ship It/);
      assert.is(await messages(), before);
      const pressed = await press(opened.approve_url);
      assert.is(pressed.status, 200, pressed.text);
      const ask = await server.app.prisma.message.findUniqueOrThrow({ where: { id: asked.body.msg_id } });
      assert.ok(ask.approvedAt);
      const after = await messages();
      assert.ok(after > before);
      assert.is((await press(opened.approve_url)).status, 409);
      assert.is(
        await server.app.prisma.message.count({
          where: { nestId: "todo", author: "owner", refersTo: asked.body.msg_id },
        }),
        1,
      );
      await receiver.waitFor((r) => r.some((d) => d.body.type === "ask.resolved"));
      const resolved = receiver.received.find((d) => d.body.type === "ask.resolved")!.body.data;
      assert.equal(
        [resolved.ask_id, resolved.resolved, resolved.approval_phrase],
        [asked.body.msg_id, "approved", "Ship It"],
      );
    } finally {
      await server.close();
      await receiver.close();
    }
  });

  test(`${label}: an expired ask's link answers "expired" and changes nothing`, async () => {
    const { server, receiver } = await setUp({ CROWS_APPROVAL_WINDOW_MS: "1500" });
    try {
      const asked = await server.request(
        "POST",
        "/api/nests/todo/messages",
        { author: "Quill", text: "Send the newsletter?", kind: "ask_owner", approval_phrase: "send it" },
        auth,
      );
      assert.is(asked.status, 201, asked.text);
      const askId = asked.body.msg_id as string;
      await receiver.waitFor(
        (r) => r.some((d) => d.body.type === "ask.resolved" && d.body.data.ask_id === askId),
        20_000,
        "the ask's expiry",
      );
      const opened = receiver.received.find((d) => d.body.type === "ask.opened")!.body.data;
      const state = async () => {
        const ask = await server.app.prisma.message.findUniqueOrThrow({ where: { id: askId } });
        const events = await server.app.prisma.event.count();
        return {
          approvedAt: ask.approvedAt,
          messages: await server.app.prisma.message.count({ where: { nestId: "todo" } }),
          events,
        };
      };
      const before = await state();
      assert.is(before.approvedAt, null);
      for (const method of ["GET", "HEAD", "POST", "GET", "POST"]) {
        const page = method === "POST" ? await press(opened.approve_url) : await open(opened.approve_url, method);
        assert.is(page.status, 410, `${method}: ${page.text}`);
        if (method !== "HEAD") assert.match(page.text, /expired/);
        assert.equal(await state(), before, `${method} changed nothing: no reply posted, no event appended`);
      }
      assert.equal(
        receiver.received
          .filter((d) => d.body.type === "ask.resolved")
          .map((d) => [d.body.data.ask_id, d.body.data.verdict]),
        [[askId, "timeout"]],
      );
    } finally {
      await server.close();
      await receiver.close();
    }
  });
}

test.run();

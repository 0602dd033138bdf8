// Notices people already read (docs/webhooks.md "Formats"): an endpoint asks for a Slack-,
// Discord- or ntfy-shaped body, and a real receiver on loopback for each checks its shape the way
// that service reads it, the decide links in it, the item's text, and the Standard Webhooks
// signature over the body exactly as sent. `standard` stays the default. The format is set over
// REST and GraphQL, shown on every read, and a bad one is a 400.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createHmac } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { startTestServer, type TestServer } from "../helpers/server.ts";

interface Got {
  headers: http.IncomingHttpHeaders;
  raw: string;
}

/** A receiver that keeps each request's headers and raw body, and answers as the service would. */
async function receiver(status = 200) {
  const got: Got[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      got.push({ headers: req.headers, raw: Buffer.concat(chunks).toString("utf8") });
      res.writeHead(status).end(status === 200 ? "ok" : "");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return {
    url,
    got,
    async waitFor(check: (g: Got) => boolean, what: string): Promise<Got> {
      const deadline = Date.now() + 60_000;
      for (;;) {
        const found = got.find(check);
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; got ${got.length}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * The Standard Webhooks signature over the raw body: by the spec's own steps with node:crypto for
 * every format, and with the standardwebhooks package too where the body is JSON (it parses it).
 */
function verify(secret: string, got: Got): void {
  const id = String(got.headers["webhook-id"]);
  const ts = String(got.headers["webhook-timestamp"]);
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  const expected = createHmac("sha256", key).update(`${id}.${ts}.${got.raw}`).digest("base64");
  const presented = String(got.headers["webhook-signature"])
    .split(" ")
    .map((part) => part.replace(/^v1,/, ""));
  assert.ok(presented.includes(expected), "signed over the body as sent");
  if (/^application\/json/.test(String(got.headers["content-type"])))
    new Webhook(secret).verify(got.raw, {
      "webhook-id": id,
      "webhook-timestamp": ts,
      "webhook-signature": String(got.headers["webhook-signature"]),
    });
}

const decideLink = /^http:\/\/127\.0\.0\.1:\d+\/decide\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/;

let server: TestServer;
test.before(async () => {
  server = await startTestServer({ env: { CROWS_WEBHOOK_ALLOW_PRIVATE: "1", CROWS_WEBHOOK_POLL_MS: "50" } });
});
test.after(async () => {
  await server.close();
});

test("slack, discord and ntfy bodies, each signed, each naming the item with its decide links; standard stays the default", async () => {
  const receivers = {
    standard: await receiver(204),
    slack: await receiver(),
    discord: await receiver(204),
    ntfy: await receiver(),
  };
  const secrets: Record<string, string> = {};
  try {
    for (const [format, r] of Object.entries(receivers)) {
      const body =
        format === "standard"
          ? { url: r.url, events: ["approval.requested"] }
          : { url: r.url, events: ["approval.requested"], format };
      const added = await server.post("/api/webhooks", body);
      assert.is(added.status, 201, added.text);
      assert.is(added.body.format, format);
      secrets[format] = added.body.secret;
    }
    const listed = (await server.get("/api/webhooks")).body.webhooks as Array<{ url: string; format: string }>;
    for (const [format, r] of Object.entries(receivers)) assert.is(listed.find((e) => e.url === r.url)?.format, format);

    const list = await server.post("/api/lists", { text: "Buy oat milk ☕", requester: "formats" });
    assert.is(list.status, 202, list.text);
    const itemId = `${list.body.list_id}-1`;

    // Standard Webhooks, as before.
    const standard = await receivers.standard.waitFor(() => true, "the standard delivery");
    verify(secrets.standard!, standard);
    assert.match(String(standard.headers["content-type"]), /^application\/json/);
    const delivery = JSON.parse(standard.raw);
    assert.is(delivery.type, "approval.requested");
    assert.is(delivery.data.item, itemId);

    // Slack incoming webhook: {text, blocks}, a mrkdwn section and link buttons.
    const slack = await receivers.slack.waitFor(() => true, "the slack delivery");
    verify(secrets.slack!, slack);
    assert.match(String(slack.headers["content-type"]), /^application\/json/);
    const s = JSON.parse(slack.raw);
    assert.equal(Object.keys(s).sort(), ["blocks", "text"]);
    assert.type(s.text, "string");
    assert.match(s.text, /The triage of "Buy oat milk ☕" waits for your verdict/);
    assert.is(s.blocks[0].type, "section");
    assert.is(s.blocks[0].text.type, "mrkdwn");
    assert.match(s.blocks[0].text.text, /Buy oat milk ☕/);
    assert.is(s.blocks[1].type, "actions");
    assert.equal(
      s.blocks[1].elements.map((e: any) => [e.type, e.text.type, e.text.text]),
      [
        ["button", "plain_text", "Approve"],
        ["button", "plain_text", "Reject"],
      ],
    );
    for (const e of s.blocks[1].elements) assert.match(e.url, decideLink);
    assert.ok(s.text.includes(s.blocks[1].elements[0].url), "the text carries the link for clients without blocks");

    // Discord: {content, embeds}, the links in markdown, no mentions parsed.
    const discord = await receivers.discord.waitFor(() => true, "the discord delivery");
    verify(secrets.discord!, discord);
    const d = JSON.parse(discord.raw);
    assert.type(d.content, "string");
    assert.ok(d.content.length <= 2000);
    assert.match(d.content, /Buy oat milk ☕/);
    const links = [...d.content.matchAll(/\[(Approve|Reject)\]\(([^)]+)\)/g)].map((m) => [m[1], m[2]]);
    assert.equal(
      links.map((l) => l[0]),
      ["Approve", "Reject"],
    );
    for (const [, url] of links) assert.match(url!, decideLink);
    assert.is(d.embeds.length, 1);
    assert.type(d.embeds[0].title, "string");
    assert.match(d.embeds[0].description, /Buy oat milk ☕/);
    assert.equal(d.allowed_mentions, { parse: [] });

    // ntfy: the text as a plain body; Title, Click and Actions headers (ASCII), view actions.
    const ntfy = await receivers.ntfy.waitFor(() => true, "the ntfy delivery");
    verify(secrets.ntfy!, ntfy);
    assert.match(String(ntfy.headers["content-type"]), /^text\/plain/);
    assert.match(ntfy.raw, /The triage of "Buy oat milk ☕" waits for your verdict/);
    assert.type(ntfy.headers.title, "string");
    assert.match(String(ntfy.headers.click), decideLink);
    const actions = String(ntfy.headers.actions)
      .split(";")
      .map((a) => a.split(",").map((p) => p.trim()));
    assert.equal(
      actions.map((a) => [a[0], a[1]]),
      [
        ["view", "Approve"],
        ["view", "Reject"],
      ],
    );
    for (const a of actions) assert.match(a[2]!, decideLink);
    assert.is(String(ntfy.headers.click), actions[0]![2]);

    // The same approval's links, signed per endpoint, all decide it: one link from Slack approves.
    const pressed = await fetch(s.blocks[1].elements[0].url, {
      method: "POST",
      headers: { origin: server.url, "content-type": "application/x-www-form-urlencoded" },
    });
    assert.is(pressed.status, 200, await pressed.text());
    assert.is((await server.app.log.state.approval(itemId, "triage"))?.status, "approved");
  } finally {
    for (const r of Object.values(receivers)) await r.close();
  }
});

test("a bad format is a 400 on REST and a refusal on GraphQL; GraphQL sets and shows it", async () => {
  const bad = await server.post("/api/webhooks", { url: "http://127.0.0.1:9/x", format: "teams" });
  assert.is(bad.status, 400, bad.text);
  assert.match(bad.body.message, /format/);
  // Whatever the bad value, the same 400 names the allowed values plainly, and nothing is stored.
  const allowed = '"format" must be one of standard, slack, discord, ntfy; leave it out for standard.';
  for (const format of ["teams", "", "Slack", " slack", 42, true, ["slack"], { name: "slack" }]) {
    const answer = await server.post("/api/webhooks", { url: "http://127.0.0.1:9/w", format });
    assert.is(answer.status, 400, `${JSON.stringify(format)}: ${answer.text}`);
    assert.equal(answer.body, { message: allowed }, JSON.stringify(format));
  }
  const stored = (await server.get("/api/webhooks")).body.webhooks as Array<{ url: string }>;
  assert.not.ok(
    stored.some((e) => e.url.startsWith("http://127.0.0.1:9/")),
    "no refused endpoint was stored",
  );
  const gql = (query: string, variables: object) => server.post("/graphql", { query, variables });
  const added = await gql(
    `mutation Add($url: String!, $format: String) { addWebhook(url: $url, format: $format) {
      __typename ... on WebhookSecret { endpoint { format } } ... on Error { message } } }`,
    { url: "http://127.0.0.1:9/y", format: "discord" },
  );
  assert.is(added.status, 200, added.text);
  assert.is(added.body.data.addWebhook.endpoint?.format, "discord", added.text);
  const refused = await gql(
    `mutation Add($url: String!, $format: String) { addWebhook(url: $url, format: $format) { __typename ... on Error { message } } }`,
    { url: "http://127.0.0.1:9/z", format: "teams" },
  );
  assert.match(refused.body.data.addWebhook.message, /format/, refused.text);
  assert.is(refused.body.data.addWebhook.message, allowed, "GraphQL names the same allowed values");
});

test.run();

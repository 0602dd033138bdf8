// The webhook management API over HTTP: add (the secret once), list (never a secret), remove,
// who may call it, bad input as 400s; rotation with both signatures valid in the grace (and only
// the new one after it); paged deliveries; redeliver and recover, with the same webhook-ids.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { readUntil, startReceiver } from "../helpers/webhook-receiver.ts";
import { ownerFollows } from "../helpers/owner.ts";

const ENV = {
  CROWS_WEBHOOK_ALLOW_PRIVATE: "1",
  CROWS_WEBHOOK_POLL_S: "0.05",
  CROWS_APPROVAL_WINDOW_MS: "60000",
  CROWS_WEBHOOK_RETRY_SCHEDULE: "0,0.1",
};

async function runList(server: TestServer, text: string): Promise<string> {
  const { body } = await server.post("/api/lists", { text, requester: "manage" });
  const owner = await ownerFollows(server.url, body.list_id);
  await owner.finished;
  owner.sse.close();
  return body.list_id;
}

test("add, list, remove; the secret shown once; bad input is a 400 naming the rule", async () => {
  const server = await startTestServer({ env: ENV });
  try {
    const added = await server.post("/api/webhooks", {
      url: "http://127.0.0.1:9/hook",
      events: ["approval.requested", "list.finished"],
      description: "phone relay",
    });
    assert.is(added.status, 201, added.text);
    assert.match(added.body.secret, /^whsec_/);
    assert.equal(
      [added.body.url, added.body.events, added.body.description, added.body.disabled],
      ["http://127.0.0.1:9/hook", ["approval.requested", "list.finished"], "phone relay", false],
    );
    const all = await server.post("/api/webhooks", { url: "https://example.com/hook" });
    assert.equal(all.body.events, []);
    const listed = await server.get("/api/webhooks");
    assert.is(listed.status, 200);
    assert.equal(
      listed.body.webhooks.map((w: any) => w.id),
      [added.body.id, all.body.id],
    );
    assert.ok(!listed.text.includes(added.body.secret.slice(6)) && !listed.text.includes(all.body.secret.slice(6)));
    assert.ok(listed.body.webhooks.every((w: any) => !("secret" in w)));

    const bad: Array<[unknown, RegExp]> = [
      [{}, /"url"/],
      [{ url: "" }, /"url"/],
      [{ url: "ftp://example.com" }, /https/],
      [{ url: "http://169.254.169.254/" }, /link-local/],
      [{ url: "http://0.0.0.0/" }, /unspecified/],
      [{ url: "http://example.com/" }, /https/],
      [{ url: "https://example.com/", events: "all" }, /"events"/],
      [{ url: "https://example.com/", events: ["approval.requested", "nope"] }, /"events"/],
      [{ url: "https://example.com/", description: 5 }, /"description"/],
      [[1, 2], /JSON object/],
    ];
    for (const [body, message] of bad) {
      const answer = await server.post("/api/webhooks", body);
      assert.is(answer.status, 400, JSON.stringify(body));
      assert.match(answer.body.message, message);
    }
    assert.is(
      (await server.request("POST", "/api/webhooks", "{not json", { "content-type": "application/json" })).status,
      400,
    );
    assert.is((await server.get("/api/webhooks/nope/deliveries")).status, 404);
    assert.is((await server.get(`/api/webhooks/${added.body.id}/deliveries?limit=0`)).status, 400);
    assert.is((await server.get(`/api/webhooks/${added.body.id}/deliveries?cursor=x`)).status, 400);
    assert.is((await server.post(`/api/webhooks/${added.body.id}/recover`, { since_event_id: "1" })).status, 400);
    assert.is((await server.post(`/api/webhooks/${added.body.id}/deliveries/msg_1_x/redeliver`)).status, 404);
    assert.is((await server.request("DELETE", `/api/webhooks/${added.body.id}`)).status, 204);
    assert.is((await server.request("DELETE", `/api/webhooks/${added.body.id}`)).status, 404);
    assert.equal(
      (await server.get("/api/webhooks")).body.webhooks.map((w: any) => w.id),
      [all.body.id],
    );
    assert.is((await server.request("PUT", "/api/webhooks")).status, 405);
  } finally {
    await server.close();
  }
  // Private targets need CROWS_WEBHOOK_ALLOW_PRIVATE=1.
  const strict = await startTestServer({ env: { ...ENV, CROWS_WEBHOOK_ALLOW_PRIVATE: "0" } });
  try {
    for (const url of ["http://127.0.0.1:9/", "http://localhost:9/", "http://10.0.0.2/", "http://[::1]/"]) {
      const answer = await strict.post("/api/webhooks", { url });
      assert.is(answer.status, 400, url);
      assert.match(answer.body.message, /CROWS_WEBHOOK_ALLOW_PRIVATE=1/);
    }
  } finally {
    await strict.close();
  }
});

test("only the owner manages webhooks: a read-only token gets a 403, no token a 401", async () => {
  const owner = "manage-owner-token-0123456789";
  const reader = "manage-reader-token-0123456789";
  const server = await startTestServer({ env: { ...ENV, CROWS_TOKEN: owner, CROWS_READ_TOKENS: reader } });
  try {
    const as = (token: string) => ({ authorization: `Bearer ${token}` });
    const added = await server.request("POST", "/api/webhooks", { url: "https://example.com/x" }, as(owner));
    assert.is(added.status, 201);
    for (const [method, path] of [
      ["GET", "/api/webhooks"],
      ["POST", "/api/webhooks"],
      ["DELETE", `/api/webhooks/${added.body.id}`],
      ["GET", `/api/webhooks/${added.body.id}/deliveries`],
      ["POST", `/api/webhooks/${added.body.id}/rotate-secret`],
    ] as const) {
      const body = method === "POST" ? { url: "https://example.com/y" } : undefined;
      assert.is((await server.request(method, path, body, as(reader))).status, 403, `${method} ${path}`);
      assert.is((await server.request(method, path, body)).status, 401, `${method} ${path}`);
    }
    assert.is((await server.request("GET", "/api/webhooks", undefined, as(owner))).body.webhooks.length, 1);
  } finally {
    await server.close();
  }
});

test("rotation: both secrets sign in the grace, then only the new one; redeliver and recover keep the webhook-ids", async () => {
  const receiver = await startReceiver();
  const server = await startTestServer({ env: ENV });
  try {
    const added = await server.post("/api/webhooks", {
      url: receiver.url,
      events: ["list.finished", "approval.requested"],
    });
    const old = added.body.secret as string;
    receiver.secrets.push(old);
    const first = await runList(server, "Buy milk");
    await receiver.waitFor((r) => r.some((d) => d.body.type === "list.finished" && d.body.data.list_id === first));
    assert.ok(receiver.received.every((d) => d.verifiedWith.length === 1 && d.verifiedWith[0] === old));

    const rotated = await server.post(`/api/webhooks/${added.body.id}/rotate-secret`);
    assert.is(rotated.status, 200);
    const fresh = rotated.body.secret as string;
    assert.ok(fresh !== old && /^whsec_/.test(fresh));
    assert.ok(Date.parse(rotated.body.previous_secret_expires_at) > Date.now() + 23 * 3600_000);
    receiver.secrets.push(fresh);
    const count = receiver.received.length;
    const second = await runList(server, "Write a haiku");
    await receiver.waitFor((r) => r.some((d) => d.body.type === "list.finished" && d.body.data.list_id === second));
    const during = receiver.received.slice(count);
    assert.ok(during.length >= 2);
    for (const d of during) {
      assert.equal(d.verifiedWith.sort(), [old, fresh].sort());
      assert.is(d.signature.split(" ").length, 2);
    }

    // Paged deliveries: every delivery once, in event order, through the cursor.
    const seen: any[] = [];
    let cursor: string | null = "";
    do {
      const page = await server.get(`/api/webhooks/${added.body.id}/deliveries?limit=2&cursor=${cursor}`);
      assert.is(page.status, 200);
      assert.ok(page.body.deliveries.length <= 2);
      seen.push(...page.body.deliveries);
      cursor = page.body.next_cursor;
    } while (cursor);
    assert.equal(
      seen.map((d) => d.id),
      receiver.received.map((d) => d.id),
    );
    assert.ok(seen.every((d) => d.state === "delivered" || d.attempts.length === 0 || d.attempts.length === 1));

    // Redeliver: the same id, signed with the current secrets.
    const target = seen[0];
    const before = receiver.received.length;
    const again = await server.post(`/api/webhooks/${added.body.id}/deliveries/${target.id}/redeliver`);
    assert.is(again.status, 202, again.text);
    await receiver.waitFor((r) => r.length > before);
    const redelivered = receiver.received[before]!;
    assert.is(redelivered.id, target.id);
    assert.equal(redelivered.body, receiver.received.find((d) => d.id === target.id)!.body);
    assert.ok(redelivered.verifiedWith.includes(fresh));

    // Recover from an event id: the same ids again for every wanted event after it, in order.
    const afterFirst = seen.findIndex((d) => d.type === "list.finished");
    const since = seen[afterFirst].event_id as number;
    const mark = receiver.received.length;
    const recovered = await server.post(`/api/webhooks/${added.body.id}/recover`, { since_event_id: since });
    assert.is(recovered.status, 202, recovered.text);
    const expected = seen.filter((d) => d.event_id > since).map((d) => d.id);
    assert.is(recovered.body.queued, expected.length);
    await receiver.waitFor((r) => r.length >= mark + expected.length);
    assert.equal(
      receiver.received.slice(mark).map((d) => d.id),
      expected,
    );
    assert.equal(receiver.unverified, []);
  } finally {
    await server.close();
    await receiver.close();
  }
});

test("after the grace only the new secret signs", async () => {
  const receiver = await startReceiver();
  const server = await startTestServer({ env: { ...ENV, CROWS_WEBHOOK_ROTATION_GRACE_S: "0" } });
  try {
    const added = await server.post("/api/webhooks", { url: receiver.url, events: ["list.finished"] });
    const rotated = await server.post(`/api/webhooks/${added.body.id}/rotate-secret`);
    receiver.secrets.push(added.body.secret, rotated.body.secret);
    await runList(server, "Buy milk");
    await receiver.waitFor((r) => r.length >= 1);
    assert.equal(receiver.received[0]!.verifiedWith, [rotated.body.secret]);
    assert.is(receiver.received[0]!.signature.split(" ").length, 1);
    const page = await readUntil(
      () => server.get(`/api/webhooks/${added.body.id}/deliveries`),
      (p) => p.body.deliveries[0]?.state === "delivered",
    );
    assert.is(page.body.deliveries[0].state, "delivered");
  } finally {
    await server.close();
    await receiver.close();
  }
});

test("GraphQL: the same endpoints, the secret only in what adds or rotates, refusals as typed results, the admin scope only", async () => {
  const owner = "graphql-owner-token-0123456789";
  const reader = "graphql-reader-token-0123456789";
  const server = await startTestServer({ env: { ...ENV, CROWS_TOKEN: owner, CROWS_READ_TOKENS: reader } });
  const gql = async (token: string, query: string, variables: object = {}) =>
    (await server.request("POST", "/graphql", { query, variables }, { authorization: `Bearer ${token}` })).body;
  try {
    const added = await gql(
      owner,
      `mutation($url: String!) { addWebhook(url: $url, events: ["list.finished"], description: "gql") { __typename ... on WebhookSecret { secret endpoint { id url events description disabled } } ... on Error { code message } } }`,
      { url: "https://example.com/gql" },
    );
    const { secret, endpoint } = added.data.addWebhook;
    assert.match(secret, /^whsec_/);
    assert.equal(
      [endpoint.url, endpoint.events, endpoint.description, endpoint.disabled],
      ["https://example.com/gql", ["list.finished"], "gql", false],
    );
    const listed = await gql(owner, `{ webhooks { __typename ... on QueryWebhooksSuccess { data { id url } } } }`);
    assert.equal(
      listed.data.webhooks.data.map((w: any) => w.id),
      [endpoint.id],
    );
    assert.ok(!JSON.stringify(listed).includes(secret.slice(6)));
    const bad = await gql(
      owner,
      `mutation { addWebhook(url: "http://169.254.169.254/") { __typename ... on Error { code message } } }`,
    );
    assert.equal([bad.data.addWebhook.__typename, bad.data.addWebhook.code], ["BadInputError", "bad_input"]);
    const rotated = await gql(
      owner,
      `mutation($id: ID!) { rotateWebhookSecret(id: $id) { ... on WebhookSecret { secret previousSecretExpiresAt } } }`,
      { id: endpoint.id },
    );
    assert.ok(
      rotated.data.rotateWebhookSecret.secret !== secret && rotated.data.rotateWebhookSecret.previousSecretExpiresAt,
    );
    const page = await gql(
      owner,
      `query($id: ID!) { webhookDeliveries(id: $id) { ... on WebhookDeliveryPage { deliveries { id } nextCursor } } }`,
      { id: endpoint.id },
    );
    assert.equal(page.data.webhookDeliveries, { deliveries: [], nextCursor: null });
    const missing = await gql(owner, `mutation { removeWebhook(id: "nope") { __typename ... on Error { code } } }`);
    assert.equal(missing.data.removeWebhook, { __typename: "NotFoundError", code: "not_found" });
    // A token without the admin scope is refused the whole operation, naming the scope (docs/security.md "Scopes").
    const asReader = await gql(reader, `{ webhooks { __typename ... on Error { code } } }`);
    assert.is(asReader.data, null);
    assert.is(asReader.errors?.[0]?.extensions?.code, "forbidden");
    assert.match(asReader.errors[0].message, /"admin" scope/);
    const removed = await gql(
      owner,
      `mutation($id: ID!) { removeWebhook(id: $id) { __typename ... on MutationRemoveWebhookSuccess { data } } }`,
      { id: endpoint.id },
    );
    assert.equal(removed.data.removeWebhook, { __typename: "MutationRemoveWebhookSuccess", data: true });
  } finally {
    await server.close();
  }
});

test.run();

// Every decision says who made it: a verdict through REST (a named token), one through GraphQL
// (the owner) and one by timeout (system) each name the right actor in the event, in the Approval
// row and in the audit trail (GraphQL auditEntries and GET /api/audit, filtered and paged). Lists,
// nest posts, ask replies and token changes carry the actor too, appended after the contract's
// fields; a decide-only token may reply to an ask but not post anything else.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { openSse, type SseClient } from "../helpers/sse.ts";
import { bearer, makeToken, type MadeToken } from "../helpers/tokens.ts";

const OWNER = "owner-token-for-actors-0123456789";
let server: TestServer;
let decider: MadeToken;
let writer: MadeToken;

test.before(async () => {
  server = await startTestServer({
    env: { CROWS_TOKEN: OWNER, CROWS_APPROVAL_WINDOW_MS: "4000", CROWS_BANTER_WAIT_MS: "0" },
  });
  decider = await makeToken(server, "ci-bot", ["decide", "read"], bearer(OWNER));
  writer = await makeToken(server, "list-writer", ["write"], bearer(OWNER));
});
test.after(async () => {
  await server.close();
});

const gql = async (query: string, variables: Record<string, unknown>, token: string) =>
  (await server.request("POST", "/graphql", { query, variables }, bearer(token))).body;

async function triagedItems(sse: SseClient, count: number): Promise<string[]> {
  const items: string[] = [];
  await sse.waitFor((m) => {
    if (m.event === "item.triaged" && m.data.needs_approval && !items.includes(m.data.item_id))
      items.push(m.data.item_id);
    return items.length >= count;
  }, 20_000);
  return items;
}

test("a verdict via REST (named token), via GraphQL (owner) and by timeout (system): the event, the Approval row and the audit trail agree", async () => {
  const posted = await server.request(
    "POST",
    "/api/lists",
    { text: "- buy milk\n- write a haiku about crows\n- plan a picnic", requester: "ana" },
    bearer(writer.secret),
  );
  assert.is(posted.status, 202);
  const listId: string = posted.body.list_id;
  const sse = await openSse(`${server.url}/api/events?list_id=${listId}`, { headers: bearer(OWNER) });
  try {
    const started = await sse.waitFor((m) => m.event === "list.started");
    assert.equal(started.data.actor, { kind: "token", token_id: writer.id, token_name: "list-writer" });
    assert.is(Object.keys(started.data).at(-1), "actor");

    const [viaRest, viaGraphql, byTimeout] = await triagedItems(sse, 3);
    const rest = await server.request(
      "POST",
      "/api/verdicts",
      { item_id: viaRest, target: "triage", approve: true },
      bearer(decider.secret),
    );
    assert.is(rest.status, 204);
    const viaGql = await gql(
      "mutation V($id: ID!) { postVerdict(itemId: $id, target: triage, approve: false) { ... on Approval { status decidedBy { kind tokenId tokenName } } } }",
      { id: viaGraphql },
      OWNER,
    );
    assert.equal(viaGql.data.postVerdict, {
      status: "rejected",
      decidedBy: { kind: "owner", tokenId: null, tokenName: null },
    });

    const verdictOf = async (itemId: string) =>
      (
        await sse.waitFor(
          (m) => m.event === "verdict" && m.data.item_id === itemId && m.data.target === "triage",
          20_000,
        )
      ).data;
    const expected = {
      [viaRest!]: { kind: "token", token_id: decider.id, token_name: "ci-bot" },
      [viaGraphql!]: { kind: "owner" },
      [byTimeout!]: { kind: "system" },
    };
    for (const [itemId, actor] of Object.entries(expected)) {
      const verdict = await verdictOf(itemId);
      assert.equal(
        Object.keys(verdict),
        ["list_id", "item_id", "target", "verdict", "ts", "actor"],
        "docs/contract.md's fields in order, actor appended",
      );
      assert.equal(verdict.actor, actor, `${itemId}'s verdict`);
      const row = await server.app.prisma.approval.findUniqueOrThrow({
        where: { itemId_target: { itemId, target: "triage" } },
      });
      assert.equal(
        [row.decidedBy, row.decidedByTokenId, row.decidedByTokenName],
        [actor.kind, (actor as any).token_id ?? null, (actor as any).token_name ?? null],
        `${itemId}'s Approval`,
      );
    }
    assert.is((await verdictOf(byTimeout!)).verdict, "timeout");
    // The trust changes a verdict causes name the same actor.
    for (const change of sse.messages().filter((m) => m.event === "trust.changed"))
      assert.ok(change.data.actor, "trust.changed carries its verdict's actor");

    // GraphQL: the approvals history says who decided; auditEntries filters by actor kind and token.
    const approvals = await gql(
      "{ approvals(limit: 50) { itemId target status decidedBy { kind tokenId tokenName } } }",
      {},
      decider.secret,
    );
    for (const [itemId, actor] of Object.entries(expected)) {
      const a = approvals.data.approvals.find((x: any) => x.itemId === itemId && x.target === "triage");
      assert.equal(a.decidedBy, {
        kind: actor.kind,
        tokenId: (actor as any).token_id ?? null,
        tokenName: (actor as any).token_name ?? null,
      });
    }
    const audit = async (args: string) =>
      (
        await gql(
          `{ auditEntries(${args}) { ... on AuditPage { nextCursor entries { id kind stream actor { kind tokenId tokenName } payload } } ... on Error { code message } } }`,
          {},
          decider.secret,
        )
      ).data.auditEntries;
    const byToken = await audit(`kinds: ["verdict"], tokenId: "${decider.id}"`);
    assert.equal(
      byToken.entries.map((e: any) => [e.payload.item_id, e.payload.target]),
      [[viaRest, "triage"]],
    );
    assert.equal(byToken.entries[0].actor, { kind: "token", tokenId: decider.id, tokenName: "ci-bot" });
    // Triage verdicts only: an approved item's output may time out later, which is the system's too.
    const triage = (page: any) =>
      page.entries.filter((e: any) => e.payload.target === "triage").map((e: any) => e.payload.item_id);
    const bySystem = await audit(`kinds: ["verdict"], actorKind: system`);
    assert.ok(bySystem.entries.every((e: any) => e.actor.kind === "system"));
    assert.equal(triage(bySystem), [byTimeout]);
    const byOwner = await audit(`kinds: ["verdict"], actorKind: owner`);
    assert.equal(triage(byOwner), [viaGraphql]);

    // REST: the same trail as JSON.
    const restAudit = await server.request(
      "GET",
      `/api/audit?kind=verdict&actor_kind=token&token_id=${decider.id}`,
      undefined,
      bearer(decider.secret),
    );
    assert.is(restAudit.status, 200);
    assert.equal(
      restAudit.body.entries.map((e: any) => [e.kind, e.payload.item_id, e.actor.token_name]),
      [["verdict", viaRest, "ci-bot"]],
    );
    const writes = await server.request(
      "GET",
      `/api/audit?kind=list.started&token_id=${writer.id}`,
      undefined,
      bearer(OWNER),
    );
    assert.equal(
      writes.body.entries.map((e: any) => e.payload.list_id),
      [listId],
    );
  } finally {
    sse.close();
  }
});

test("the audit trail pages by cursor, newest first, without gaps or repeats, and filters by time; bad filters are a 400", async () => {
  // From a fixed cursor: the first test's list may still be timing out its outputs meanwhile.
  const newest = (await server.request("GET", "/api/audit?limit=1", undefined, bearer(OWNER))).body.entries[0]
    .id as number;
  const all = (await server.request("GET", `/api/audit?limit=500&before=${newest + 1}`, undefined, bearer(OWNER))).body
    .entries as any[];
  assert.ok(all.length >= 5);
  assert.equal(
    all.map((e) => e.id),
    [...all.map((e) => e.id)].sort((a, b) => b - a),
  );
  for (const size of [1, 2, 3, 7]) {
    const walked: number[] = [];
    let cursor: number | null = newest + 1;
    do {
      const page: { entries: Array<{ id: number }>; next_cursor: number | null } = (
        await server.request("GET", `/api/audit?limit=${size}&before=${cursor}`, undefined, bearer(OWNER))
      ).body;
      walked.push(...page.entries.map((e: any) => e.id));
      cursor = page.next_cursor;
    } while (cursor);
    assert.equal(
      walked,
      all.map((e) => e.id),
      `pages of ${size}`,
    );
  }
  const middle = all[Math.floor(all.length / 2)]!;
  const since = (
    await server.request("GET", `/api/audit?limit=500&since=${encodeURIComponent(middle.ts)}`, undefined, bearer(OWNER))
  ).body.entries as any[];
  assert.ok(since.every((e) => Date.parse(e.ts) >= Date.parse(middle.ts)));
  assert.ok(since.some((e) => e.id === middle.id));
  const until = (
    await server.request("GET", `/api/audit?limit=500&until=${encodeURIComponent(middle.ts)}`, undefined, bearer(OWNER))
  ).body.entries as any[];
  assert.ok(until.every((e) => Date.parse(e.ts) <= Date.parse(middle.ts)));
  for (const bad of [
    "limit=0",
    "limit=501",
    "limit=x",
    "before=-1",
    "actor_kind=robot",
    "token_id=nope",
    "since=yesterday",
    "actor_kind=owner&token_id=tok_0000000000000000",
  ]) {
    const answer = await server.request("GET", `/api/audit?${bad}`, undefined, bearer(OWNER));
    assert.is(answer.status, 400, bad);
    assert.type(answer.body.message, "string");
  }
});

test("nest posts carry their poster's actor; a decide-only token may answer an ask but post nothing else", async () => {
  const say = await server.request(
    "POST",
    "/api/nests/todo/messages",
    { author: "owner", text: "hello from a script", kind: "say" },
    bearer(writer.secret),
  );
  assert.is(say.status, 201);
  assert.equal(Object.keys(say.body).includes("actor"), false, "the record itself keeps its fields");
  const ask = await server.request(
    "POST",
    "/api/nests/todo/messages",
    { author: "owner", text: "Ship it?", kind: "ask_owner", approval_phrase: "ship it" },
    bearer(OWNER),
  );
  assert.is(ask.status, 201);
  assert.is(ask.body.kind, "ask_owner");
  for (const body of [
    { author: "owner", text: "just talking" },
    { author: "owner", text: "ship it", refers_to: say.body.msg_id },
    { author: "Pepper", text: "ship it", refers_to: ask.body.msg_id },
  ]) {
    const refused = await server.request("POST", "/api/nests/todo/messages", body, bearer(decider.secret));
    assert.is(refused.status, 403, JSON.stringify(body));
    assert.match(refused.body.message, /"write" scope/);
    const viaGql = await gql(
      'mutation P($a: String!, $t: String!, $r: String) { postMessage(nestId: "todo", author: $a, text: $t, refersTo: $r) { __typename ... on Error { message } } }',
      { a: body.author, t: body.text, r: body.refers_to ?? null },
      decider.secret,
    );
    assert.is(viaGql.data.postMessage.__typename, "ForbiddenError");
  }
  const reply = await server.request(
    "POST",
    "/api/nests/todo/messages",
    { author: "owner", text: "Ship it", refers_to: ask.body.msg_id },
    bearer(decider.secret),
  );
  assert.is(reply.status, 201);
  const events = await server.app.log.read("nest:todo");
  const actorOf = (msgId: string) =>
    JSON.parse(events.find((e) => JSON.parse(e.payload).msg_id === msgId)!.payload).actor;
  assert.equal(actorOf(say.body.msg_id), { kind: "token", token_id: writer.id, token_name: "list-writer" });
  assert.equal(actorOf(ask.body.msg_id), { kind: "owner" });
  assert.equal(actorOf(reply.body.msg_id), { kind: "token", token_id: decider.id, token_name: "ci-bot" });
  const resolved = (await server.request("GET", "/api/nests/todo/messages", undefined, bearer(OWNER))).body.find(
    (r: any) => r.msg_id === ask.body.msg_id,
  );
  assert.is(resolved.resolved, "approved");
  const trail = (
    await server.request("GET", `/api/audit?kind=nest.message&token_id=${decider.id}`, undefined, bearer(OWNER))
  ).body.entries;
  assert.equal(
    trail.map((e: any) => e.payload.msg_id),
    [reply.body.msg_id],
  );
});

test("token changes are events naming who made them, never the secret", async () => {
  const admin = await makeToken(server, "rotator", ["admin", "read"], bearer(OWNER));
  const minted = await makeToken(server, "minted-by-rotator", ["read"], bearer(admin.secret));
  assert.is((await server.request("DELETE", `/api/tokens/${minted.id}`, undefined, bearer(admin.secret))).status, 204);
  const events = (await server.app.log.read("tokens")).map((e) => ({ name: e.name, payload: JSON.parse(e.payload) }));
  const created = events.find((e) => e.name === "token.created" && e.payload.token_id === minted.id)!;
  assert.equal(Object.keys(created.payload), ["token_id", "name", "prefix", "scopes", "expires_at", "ts", "actor"]);
  assert.equal(created.payload.actor, { kind: "token", token_id: admin.id, token_name: "rotator" });
  const revoked = events.find((e) => e.name === "token.revoked" && e.payload.token_id === minted.id)!;
  assert.equal(revoked.payload.actor, { kind: "token", token_id: admin.id, token_name: "rotator" });
  const ownerMade = events.find((e) => e.name === "token.created" && e.payload.token_id === admin.id)!;
  assert.equal(ownerMade.payload.actor, { kind: "owner" });
  assert.not.ok(JSON.stringify(events).includes(minted.secret));
  assert.not.ok(JSON.stringify(events).includes(admin.secret));
});

test.run();

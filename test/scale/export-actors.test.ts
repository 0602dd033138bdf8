// Who decided, through every export. Approvals decided by two named tokens (over REST and over
// GraphQL), by the owner, through a webhook's decide links, by timeout and by trust skipping them
// must name that decider on the verdict's event, on each trust.changed it caused, in the verdicts
// CSV, and in every trust-history row the verdict wrote: the CSV, the REST history pages and
// GraphQL's trustHistory, on SQLite and on PostgreSQL. The Sentry's ledger rows name whoever
// answered its watchdog ask.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { startReceiver, type Receiver } from "../helpers/webhook-receiver.ts";
import { bearer, makeToken, type MadeToken } from "../helpers/tokens.ts";
import { csvObjects } from "../helpers/csv.ts";
import { withKit, waitForRecord, CLEAN, OFF_TOPIC, type Kit } from "../helpers/nest-kit.ts";
import { freshDatabase, services } from "../helpers/scale-services.ts";
import { openSse } from "../helpers/sse.ts";

const OWNER = "owner-token-for-the-export-actors-01";
const WEBHOOKS = { CROWS_WEBHOOK_ALLOW_PRIVATE: "1", CROWS_WEBHOOK_POLL_S: "0.05" };

interface ActorWire {
  kind: string;
  token_id?: string;
  token_name?: string;
  webhook_id?: string;
}
const SYSTEM: ActorWire = { kind: "system" };
type Auth = Record<string, string>;
/** No CROWS_TOKEN: a request from loopback with no token is the owner. */
const LOOPBACK_OWNER: Auth = {};
const ACTOR_HEADERS = ["actor", "actor_token_id", "actor_token_name"];

/** What the CSV's three documented actor columns say of an actor. */
const columnsOf = (actor: ActorWire | null | undefined) => [
  actor?.kind ?? "",
  actor?.token_id ?? "",
  actor?.token_name ?? "",
];
const tokenActor = (token: MadeToken): ActorWire => ({ kind: "token", token_id: token.id, token_name: token.name });
/** GraphQL's Actor for a wire actor. */
const gqlActor = (actor: ActorWire) => ({
  kind: actor.kind,
  tokenId: actor.token_id ?? null,
  tokenName: actor.token_name ?? null,
  webhookId: actor.webhook_id ?? null,
});

/** A decide link's button: a same-origin form POST with no fields. */
const press = (url: string) =>
  fetch(url, {
    method: "POST",
    headers: { origin: new URL(url).origin, "content-type": "application/x-www-form-urlencoded", accept: "text/html" },
  }).then((r) => r.status);

async function exportText(server: TestServer, path: string, auth: Auth): Promise<string> {
  const response = await fetch(server.url + path, { headers: auth });
  assert.is(response.status, 200, path);
  return response.text();
}

/** Every event of the NDJSON export, parsed. */
async function exportedEvents(
  server: TestServer,
  auth: Auth,
): Promise<Array<{ id: number; stream: string; seq: number; name: string; ts: string; payload: any }>> {
  return (await exportText(server, "/api/export/events", auth))
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line));
}

/** The whole trust history through GraphQL's connection, 100 a page. */
async function graphqlHistory(server: TestServer, auth: Auth): Promise<any[]> {
  const nodes: any[] = [];
  let after: string | null = null;
  for (;;) {
    const answer = await server.request(
      "POST",
      "/graphql",
      {
        query:
          "query H($after: String) { trustHistory(first: 100, after: $after) { pageInfo { hasNextPage endCursor } edges { node { id holder subject verdict actor { kind tokenId tokenName webhookId } } } } }",
        variables: { after },
      },
      auth,
    );
    assert.equal(answer.body.errors, undefined, JSON.stringify(answer.body.errors));
    const page = answer.body.data.trustHistory;
    nodes.push(...page.edges.map((e: any) => e.node));
    if (!page.pageInfo.hasNextPage) return nodes;
    after = page.pageInfo.endCursor;
  }
}

/** The whole trust history through GET /api/trust/history, oldest first. */
async function restHistory(server: TestServer, auth: Auth, limit: number): Promise<any[]> {
  const pages: any[][] = [];
  let before: number | null = null;
  do {
    const answer: { status: number; body: any } = await server.request(
      "GET",
      `/api/trust/history?limit=${limit}${before === null ? "" : `&before=${before}`}`,
      undefined,
      auth,
    );
    assert.is(answer.status, 200);
    pages.unshift(answer.body.history);
    before = answer.body.next_before;
  } while (before !== null);
  return pages.flat();
}

/**
 * Every trust-history row (CSV, REST, GraphQL) names `expected(row)`, and the three agree row by
 * row; returns the CSV's rows.
 */
async function assertHistoryActors(
  server: TestServer,
  auth: Auth,
  expected: (row: Record<string, any>) => ActorWire,
): Promise<Array<Record<string, string>>> {
  const csv = csvObjects(await exportText(server, "/api/export/trust-history", auth));
  assert.equal(
    csv.header,
    ["id", "at", "holder", "task_type", "verdict", "subject", "from", "to", ...ACTOR_HEADERS],
    "the documented columns, unchanged",
  );
  for (const row of csv.rows)
    assert.equal(
      [row.actor, row.actor_token_id, row.actor_token_name],
      columnsOf(expected(row)),
      `trust-history row ${JSON.stringify(row)}`,
    );
  const viaGraphql = await graphqlHistory(server, auth);
  assert.equal(
    viaGraphql.map((n) => n.id),
    csv.rows.map((r) => Number(r.id)),
    "GraphQL pages the same rows",
  );
  viaGraphql.forEach((node) => {
    assert.equal(node.actor, gqlActor(expected(node)), `GraphQL entry ${node.id}`);
  });
  for (const limit of [7, 100]) {
    const viaRest = await restHistory(server, auth, limit);
    assert.equal(
      viaRest.map((e) => e.id),
      csv.rows.map((r) => Number(r.id)),
      `REST pages of ${limit}: the same rows`,
    );
    viaRest.forEach((entry) => {
      assert.equal(entry.actor, expected(entry), `REST entry ${entry.id}`);
    });
  }
  return csv.rows;
}

/** GraphQL's trustChanges, replayed from the start, names the same actor as each logged trust.changed. */
async function assertSubscribedChanges(
  server: TestServer,
  auth: Auth,
  logged: Array<{ id: number; payload: any }>,
): Promise<void> {
  const query = "subscription { trustChanges(after: 0) { id holder actor { kind tokenId tokenName webhookId } } }";
  const stream = await openSse(`${server.url}/graphql/stream`, { headers: auth, json: { query } });
  try {
    const frames = await stream.waitForCount(logged.length, 20_000);
    const changes = frames.filter((f) => f.event === "next").map((f) => f.data.data.trustChanges);
    assert.equal(
      changes.map((c) => c.id),
      logged.map((l) => l.id),
    );
    changes.forEach((c, i) => {
      assert.equal(c.actor, gqlActor(logged[i]!.payload.actor), `trustChanges ${c.id} (${c.holder})`);
    });
  } finally {
    stream.close();
  }
}

type Way =
  | { by: "ci" | "night" | "owner"; via: "rest" | "graphql"; approve: boolean }
  | { by: "link"; approve: boolean }
  | { by: "nobody" };

/** Who answers the n-th approval asked for, in turn; "nobody" lets it time out. */
const PLAN: Way[] = [
  { by: "ci", via: "rest", approve: true },
  { by: "night", via: "graphql", approve: true },
  { by: "owner", via: "rest", approve: true },
  { by: "link", approve: true },
  { by: "ci", via: "graphql", approve: false },
  { by: "nobody" },
  { by: "owner", via: "graphql", approve: false },
  { by: "link", approve: false },
  { by: "night", via: "rest", approve: true },
  { by: "owner", via: "rest", approve: true },
];

/** Two lists whose approvals are answered every way in turn, then every export read back. */
async function everyWayOfDeciding(database: Record<string, string>): Promise<void> {
  const receiver: Receiver = await startReceiver();
  // A window long enough for a prompt answer on a loaded machine, short enough to wait out.
  const server = await startTestServer({
    env: {
      CROWS_TOKEN: OWNER,
      CROWS_APPROVAL_WINDOW_MS: "6000",
      CROWS_BANTER_WAIT_MS: "0",
      CROWS_ITEM_CONCURRENCY: "24",
      ...WEBHOOKS,
      ...database,
    },
  });
  try {
    const ci = await makeToken(server, "ci-bot", ["decide", "read"], bearer(OWNER));
    // A name a CSV must quote: a comma and quotes.
    const night = await makeToken(server, 'night shift, "B"', ["decide"], bearer(OWNER));
    const added = await server.request(
      "POST",
      "/api/webhooks",
      { url: receiver.url, events: ["approval.requested"] },
      bearer(OWNER),
    );
    assert.is(added.status, 201, added.text);
    receiver.secrets.push(added.body.secret);
    const link: ActorWire = { kind: "link", webhook_id: added.body.id };
    const tokens = { ci, night };

    /** The actor of a decision that landed, or null when the window closed first (then it timed out). */
    async function decide(
      way: Way,
      data: { item: string; target: string; approve_url: string; reject_url: string },
    ): Promise<ActorWire | null> {
      if (way.by === "nobody") return null;
      if (way.by === "link")
        return (await press(way.approve ? data.approve_url : data.reject_url)) === 200 ? link : null;
      const secret = way.by === "owner" ? OWNER : tokens[way.by].secret;
      const actor = way.by === "owner" ? { kind: "owner" } : tokenActor(tokens[way.by]);
      if (way.via === "rest") {
        const answer = await server.request(
          "POST",
          "/api/verdicts",
          { item_id: data.item, target: data.target, approve: way.approve },
          bearer(secret),
        );
        assert.ok(answer.status === 204 || answer.status === 404, answer.text);
        return answer.status === 204 ? actor : null;
      }
      const answer = await server.request(
        "POST",
        "/graphql",
        {
          query:
            "mutation V($i: ID!, $t: VerdictTarget!, $a: Boolean!) { postVerdict(itemId: $i, target: $t, approve: $a) { __typename } }",
          variables: { i: data.item, t: data.target, a: way.approve },
        },
        bearer(secret),
      );
      const typename = answer.body.data?.postVerdict?.__typename;
      assert.ok(typename === "Approval" || typename === "NotFoundError", answer.text);
      return typename === "Approval" ? actor : null;
    }

    const lists: string[] = [];
    const post = async (text: string) => {
      const posted = await server.request("POST", "/api/lists", { text, requester: "exporter" }, bearer(OWNER));
      assert.is(posted.status, 202, posted.text);
      lists.push(posted.body.list_id);
    };
    // One task type first, so the plan's three approvals in a row promote flock|writing (a
    // trust.changed by the third decider); the second list, of mixed types, once those are in.
    await post(
      "- write a haiku about crows\n- draft a thank-you note\n- write an email to the landlord\n- draft a blog post about gardening\n- write a short essay on rain\n- draft a letter to grandma\n- write a toast for the wedding",
    );
    const secondList =
      "- buy milk\n- plan the launch week\n- research the history of ravens\n- fix the flaky login test\n- compare three note-taking apps\n- book a dentist appointment";

    // Answer every approval as it is asked for, in the plan's turn, until every list finished.
    const decided = new Map<string, ActorWire | null>(); // item|target -> who decided (null: nobody did in time)
    let turn = 0;
    const deadline = Date.now() + 120_000;
    while (
      (await server.app.prisma.todoList.count({ where: { id: { in: lists }, status: "finished" } })) < lists.length
    ) {
      assert.ok(Date.now() < deadline, "the lists finished");
      const asked = receiver.received.filter((d) => d.body.type === "approval.requested").map((d) => d.body.data);
      const fresh = asked.filter((data) => !decided.has(`${data.item}|${data.target}`));
      for (const data of fresh)
        decided.set(`${data.item}|${data.target}`, await decide(PLAN[turn++ % PLAN.length]!, data));
      if (turn >= 3 && lists.length === 1) await post(secondList);
      if (fresh.length === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.ok(turn >= PLAN.length, `every way of deciding had its turn (${turn} approvals)`);
    const landed = [...decided.values()].filter((a) => a !== null);
    for (const who of [tokenActor(ci), tokenActor(night), { kind: "owner" }, link])
      assert.ok(
        landed.some((a) => JSON.stringify(a) === JSON.stringify(who)),
        `${JSON.stringify(who)} decided one`,
      );

    /** Whoever decided a target: the one whose answer landed, else the server (timeout, auto). */
    const deciderOf = (itemId: string, target: string): ActorWire => decided.get(`${itemId}|${target}`) ?? SYSTEM;

    // The log: each verdict names its decider, and each trust.changed the verdict before it in its stream.
    const events = await exportedEvents(server, bearer(OWNER));
    const verdicts = events.filter((e) => e.name === "verdict");
    assert.ok(verdicts.length > 13, `${verdicts.length} verdicts`);
    for (const v of verdicts) {
      const decider = deciderOf(v.payload.item_id, v.payload.target);
      assert.equal(v.payload.actor, decider, `${v.payload.item_id} ${v.payload.target}: ${v.payload.verdict}`);
      if (decider === SYSTEM)
        assert.ok(
          ["timeout", "auto"].includes(v.payload.verdict),
          `${v.payload.item_id}: nobody answered, so ${v.payload.verdict}`,
        );
    }
    assert.ok(
      verdicts.some((v) => v.payload.verdict === "timeout"),
      "one timed out",
    );
    const changes = events.filter((e) => e.name === "trust.changed");
    assert.ok(changes.length > 0, "some verdicts moved a level");
    for (const change of changes) {
      const cause = events
        .filter((e) => e.stream === change.stream && e.seq < change.seq && e.name === "verdict")
        .at(-1)!;
      assert.equal(
        change.payload.actor,
        cause.payload.actor,
        `trust.changed ${change.payload.holder} after ${cause.payload.item_id}`,
      );
    }
    await assertSubscribedChanges(server, bearer(OWNER), changes);

    // Each approval keeps its decider whole: a link's names its webhook.
    const approvals = await server.request(
      "POST",
      "/graphql",
      { query: "{ approvals(limit: 500) { itemId target decidedBy { kind tokenId tokenName webhookId } } }" },
      bearer(OWNER),
    );
    assert.is(approvals.body.data.approvals.length, verdicts.length);
    for (const a of approvals.body.data.approvals)
      assert.equal(a.decidedBy, gqlActor(deciderOf(a.itemId, a.target)), `${a.itemId} ${a.target}'s approval`);

    // The verdicts CSV: the NDJSON's verdicts, field for field, actor columns included.
    const csv = csvObjects(await exportText(server, "/api/export/verdicts", bearer(OWNER)));
    assert.equal(csv.header, ["event_id", "ts", "list_id", "item_id", "target", "verdict", ...ACTOR_HEADERS]);
    assert.equal(
      csv.rows.map((r) => Object.values(r)),
      verdicts.map((v) => [
        String(v.id),
        v.ts,
        v.payload.list_id,
        v.payload.item_id,
        v.payload.target,
        v.payload.verdict,
        ...columnsOf(deciderOf(v.payload.item_id, v.payload.target)),
      ]),
    );

    // The trust history: each row names the decider of the verdict that wrote it (triage for
    // holder flock, the output for a crow), and has the verdict the log has.
    const verdictOf = new Map(
      verdicts.map((v) => [`${v.payload.item_id}|${v.payload.target}`, v.payload.verdict as string]),
    );
    const targetOf = (holder: string) => (holder === "flock" ? "triage" : "output");
    const rows = await assertHistoryActors(server, bearer(OWNER), (row) =>
      deciderOf(row.subject, targetOf(row.holder)),
    );
    for (const row of rows)
      assert.is(row.verdict, verdictOf.get(`${row.subject}|${targetOf(row.holder!)}`), `row ${row.id}`);
    const written = verdicts.reduce(
      (sum, v) =>
        sum +
        (v.payload.target === "triage"
          ? 1
          : events.find((e) => e.name === "item.answered" && e.payload.item_id === v.payload.item_id)!.payload.crows
              .length),
      0,
    );
    assert.is(rows.length, written, "a row per verdict per holder");
  } finally {
    await server.close();
    await receiver.close();
  }
}

test("SQLite: each verdict, its trust changes and its trust-history rows name who decided, in every export", () =>
  everyWayOfDeciding({}));

// The ledger's writes and reads are SQL of their own per provider (src/storage/).
const svc = services("export-actors");
if (svc) {
  test("PostgreSQL: each verdict, its trust changes and its trust-history rows name who decided, in every export", async () => {
    const db = await freshDatabase(svc.pgUrl);
    try {
      await everyWayOfDeciding({ DATABASE_URL: db.url });
    } finally {
      await db.drop();
    }
  });
}

test("the Sentry's ledger rows and its trust.changed name who answered its watchdog ask: the owner, a token or a link", async () => {
  const receiver = await startReceiver();
  try {
    await withKit(
      async (kit: Kit) => {
        const breachers = new Set<string>();
        kit.plan.watch = (state) => (breachers.has(state.author) ? OFF_TOPIC : CLEAN);
        const added = await kit.server.post("/api/webhooks", { url: receiver.url, events: ["ask.opened"] });
        assert.is(added.status, 201);
        receiver.secrets.push(added.body.secret);
        // No CROWS_TOKEN: loopback is the owner, and a named token still says who it is.
        const ops = await makeToken(kit.server, "ops-desk", ["decide", "read"], LOOPBACK_OWNER);
        const pager = await makeToken(kit.server, 'pager, "duty"', ["decide"], LOOPBACK_OWNER);
        const asks: Array<{ ask: string; by: ActorWire }> = [];
        const ways: Array<{ by: ActorWire; answer: (askId: string, phrase: string) => Promise<boolean> }> = [
          {
            by: { kind: "owner" },
            answer: (askId, phrase) =>
              kit.post("todo", { author: "owner", text: phrase, refers_to: askId }).then((r) => r.status === 201),
          },
          {
            by: tokenActor(ops),
            answer: (askId, phrase) =>
              kit.server
                .request(
                  "POST",
                  "/api/nests/todo/messages",
                  { author: "owner", text: `  ${phrase.toUpperCase()} `, refers_to: askId },
                  bearer(ops.secret),
                )
                .then((r) => r.status === 201),
          },
          {
            by: { kind: "link", webhook_id: added.body.id },
            answer: async (askId) => {
              await receiver.waitFor((r) =>
                r.some((d) => d.body.type === "ask.opened" && d.body.data.msg_id === askId),
              );
              return (
                (await press(receiver.received.find((d) => d.body.data.msg_id === askId)!.body.data.approve_url)) ===
                200
              );
            },
          },
          {
            by: tokenActor(pager),
            answer: (askId, phrase) =>
              kit.server
                .request(
                  "POST",
                  "/api/nests/todo/messages",
                  { author: "owner", text: phrase, refers_to: askId },
                  bearer(pager.secret),
                )
                .then((r) => r.status === 201),
          },
        ];
        for (const [n, crow] of ["Hugin", "Munin", "Pepper", "Inky"].entries()) {
          // The owner posts a lot here; the requester strikes would prank it (messages-api tests those).
          await kit.server.app.prisma.requester.deleteMany({ where: { name: "owner" } });
          breachers.add(crow);
          const sse = await kit.stream("todo");
          try {
            await kit.post("todo", {
              author: "owner",
              text: `Summarise the meeting notes, ${crow}`,
              kind: "request",
              to: crow,
            });
            const ask = await waitForRecord(
              sse,
              (r) => r.kind === "ask_owner" && r.approval_phrase === `reinstate ${crow}`,
              20_000,
            );
            await kit.idle();
            const way = ways[n]!;
            assert.ok(await way.answer(ask.msg_id, ask.approval_phrase), `${crow}'s ask answered by ${way.by.kind}`);
            asks.push({ ask: ask.msg_id, by: way.by });
          } finally {
            sse.close();
          }
        }
        const byAsk = new Map(asks.map((a) => [a.ask, a.by]));
        const rows = await assertHistoryActors(kit.server, LOOPBACK_OWNER, (row) => {
          assert.is(row.holder, "Sentry", "only the Sentry's record moved");
          return byAsk.get(row.subject)!;
        });
        assert.equal(
          rows.map((r) => r.subject),
          asks.map((a) => a.ask),
          "one row per answered ask, in order",
        );
        // Three approvals in a row: stranger -> regular, on the third answer.
        const changes = (await exportedEvents(kit.server, LOOPBACK_OWNER)).filter((e) => e.name === "trust.changed");
        assert.equal(
          changes.map((c) => [c.stream, c.payload.holder, c.payload.from, c.payload.to]),
          [["watch:todo", "Sentry", 0, 1]],
        );
        assert.equal(changes[0]!.payload.actor, asks[2]!.by);
        await assertSubscribedChanges(kit.server, LOOPBACK_OWNER, changes);
        assert.is(Object.keys(changes[0]!.payload).at(-1), "actor", "appended after the event's own fields");
      },
      { env: WEBHOOKS },
    );
  } finally {
    await receiver.close();
  }
});

test.run();

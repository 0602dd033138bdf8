// Named tokens across two instances on one PostgreSQL and one Redis: a token made on A works on B;
// revoked on A, it is refused on B on the very next request (B re-reads the row on PostgreSQL) and
// its open streams on B end at once (the revocation rides the Redis bus), on REST SSE and GraphQL.
// A verdict decided on B by a named token names it in A's audit trail.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { openSse } from "../helpers/sse.ts";
import { instancePair, services } from "../helpers/scale-services.ts";
import { bearer, makeToken } from "../helpers/tokens.ts";

const svc = services("scale-tokens");
const it = svc ? test : test.skip;
const OWNER = "owner-token-for-two-instances-0123";
const HEARTBEAT_MS = 5_000; // long: a cut in well under it is the bus, not the sweep

const pair = svc
  ? instancePair(svc, {
      CROWS_TOKEN: OWNER,
      CROWS_HEARTBEAT_MS: String(HEARTBEAT_MS),
      CROWS_APPROVAL_WINDOW_MS: "60000",
    })
  : undefined;

it("revoked on A: refused on B at once, and B's open streams of it end at once", async () => {
  const { a, b } = pair!;
  for (let round = 0; round < 3; round++) {
    const token = await makeToken(a, `shared-${round}`, ["read"], bearer(OWNER));
    const bystander = await makeToken(b, `bystander-${round}`, ["read"], bearer(OWNER));
    assert.is(
      (await b.request("GET", "/api/nests", undefined, bearer(token.secret))).status,
      200,
      "made on A, works on B",
    );
    const streams = [
      await openSse(`${b.url}/api/events?nest_id=todo`, { headers: bearer(token.secret) }),
      await openSse(`${b.url}/graphql/stream`, {
        headers: bearer(token.secret),
        json: { query: "subscription { trustChanges(after: 0) { id } }" },
      }),
    ];
    const kept = await openSse(`${b.url}/api/events?nest_id=todo`, { headers: bearer(bystander.secret) });
    for (const s of streams) assert.is(s.status, 200);
    assert.is((await a.request("DELETE", `/api/tokens/${token.id}`, undefined, bearer(OWNER))).status, 204);
    const revokedAt = Date.now();
    assert.is(
      (await b.request("GET", "/api/nests", undefined, bearer(token.secret))).status,
      401,
      "refused on B on the next request",
    );
    assert.is((await a.request("GET", "/api/nests", undefined, bearer(token.secret))).status, 401);
    for (const s of streams) {
      while (!s.ended()) {
        assert.ok(Date.now() - revokedAt < HEARTBEAT_MS / 2, "cut on B well within a heartbeat");
        await new Promise((r) => setTimeout(r, 10));
      }
    }
    assert.not.ok(kept.ended(), "another token's stream on B stays open");
    assert.is((await b.request("GET", "/api/nests", undefined, bearer(bystander.secret))).status, 200);
    kept.close();
  }
});

it("a verdict decided on B with a named token is named in the Approval row and in A's audit trail", async () => {
  const { a, b } = pair!;
  const decider = await makeToken(a, "pg-decider", ["decide"], bearer(OWNER));
  const posted = await a.request("POST", "/api/lists", { text: "Buy milk", requester: "scale-tokens" }, bearer(OWNER));
  assert.is(posted.status, 202);
  const itemId = `${posted.body.list_id}-1`;
  const sse = await openSse(`${a.url}/api/events?list_id=${posted.body.list_id}`, { headers: bearer(OWNER) });
  try {
    await sse.waitFor((m) => m.event === "item.triaged" && m.data.needs_approval, 20_000);
    assert.is(
      (
        await b.request(
          "POST",
          "/api/verdicts",
          { item_id: itemId, target: "triage", approve: true },
          bearer(decider.secret),
        )
      ).status,
      204,
    );
    const verdict = await sse.waitFor((m) => m.event === "verdict" && m.data.item_id === itemId, 20_000);
    assert.equal(verdict.data.actor, { kind: "token", token_id: decider.id, token_name: "pg-decider" });
    const row = await a.app.prisma.approval.findUniqueOrThrow({
      where: { itemId_target: { itemId, target: "triage" } },
    });
    assert.equal([row.decidedBy, row.decidedByTokenId, row.decidedByTokenName], ["token", decider.id, "pg-decider"]);
    const trail = await a.request("GET", `/api/audit?kind=verdict&token_id=${decider.id}`, undefined, bearer(OWNER));
    assert.equal(
      trail.body.entries.map((e: any) => e.payload.item_id),
      [itemId],
    );
  } finally {
    sse.close();
  }
});

test.run();

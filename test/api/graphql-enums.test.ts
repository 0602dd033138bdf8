// Every GraphQL enum is the domain's own closed set (schema/enums.ts): introspected from a real
// server, each enum's values are exactly the array the engine uses, no enum lacks one, and no
// schema file spells an enum's values out a second time. Then the fields that were String until
// their enum came answer real values, on the wire as the same words: a token's scopes, every
// refusal's code, a webhook delivery's state (FlightWaitChange.kind: test/graphql-flights.test.ts).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { startReceiver } from "../helpers/webhook-receiver.ts";
import { ownerFollows } from "../helpers/owner.ts";
import { bearer, makeToken } from "../helpers/tokens.ts";
import { eventually } from "../helpers/scale-services.ts";
import { ACTOR_KINDS } from "../../src/base/actor.ts";
import { TASK_TYPES } from "../../src/base/roster.ts";
import { TRIAGE_MODES } from "../../src/base/triage.ts";
import { ERROR_CODES } from "../../src/base/errors.ts";
import { SCOPES } from "../../src/access/scopes.ts";
import { DELIVERY_STATES } from "../../src/storage/webhooks/types.ts";
import { CLASSIFIER_BACKENDS, QUESTION_TYPES } from "../../src/classifier/jev.ts";
import { SKIP_REASONS, TARGETS, VERDICTS } from "../../src/flock/events.ts";
import { APPROVAL_STATUSES } from "../../src/flock/approvals.ts";
import { ITEM_STAGES, LIST_STATUSES } from "../../src/flock/stages.ts";
import { LEVEL_NAMES } from "../../src/flock/trust.ts";
import { BOARD_CHANGE_KINDS } from "../../src/flock/flight-board.ts";
import { KINDS, TAGGED_BY } from "../../src/nests/message.ts";
import { SPUN_TRUST } from "../../src/nests/registry.ts";
import { QUARANTINE_STATUSES } from "../../src/nests/membership.ts";
import { APPROVAL_CHANGE_KINDS } from "../../schema/approvals.ts";
import { TOOL_DECISIONS } from "../../src/flock/tool-events.ts";
import { TOOL_CALL_CHANGE_KINDS } from "../../schema/tool-call-changes.ts";

/** Each enum the schema has, and the domain array it must be. */
const DOMAIN: Record<string, readonly string[]> = {
  ActorKind: ACTOR_KINDS,
  ApprovalChangeKind: APPROVAL_CHANGE_KINDS,
  ApprovalStatus: APPROVAL_STATUSES,
  ClassifierBackend: CLASSIFIER_BACKENDS,
  ErrorCode: ERROR_CODES,
  FlightWaitChangeKind: BOARD_CHANGE_KINDS,
  ItemMode: TRIAGE_MODES,
  ItemStage: ITEM_STAGES,
  LevelName: LEVEL_NAMES,
  ListStatus: LIST_STATUSES,
  MessageKind: KINDS,
  QuarantineStatus: QUARANTINE_STATUSES,
  QuestionType: QUESTION_TYPES,
  Scope: SCOPES,
  SkipReason: SKIP_REASONS,
  StartingTrust: SPUN_TRUST,
  TaggedBy: TAGGED_BY,
  TaskType: TASK_TYPES,
  ToolCallChangeKind: TOOL_CALL_CHANGE_KINDS,
  ToolCallDecision: TOOL_DECISIONS,
  Verdict: VERDICTS,
  VerdictTarget: TARGETS,
  WebhookDeliveryState: DELIVERY_STATES,
};

const ENV = { CROWS_WEBHOOK_ALLOW_PRIVATE: "1", CROWS_WEBHOOK_POLL_S: "0.05", CROWS_WEBHOOK_RETRY_SCHEDULE: "0,0.05" };

let server: TestServer;
test.before(async () => {
  server = await startTestServer({ env: ENV });
});
test.after(async () => {
  await server.close();
});

async function gql(query: string, variables: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  const answer = await server.request("POST", "/graphql", { query, variables }, headers);
  assert.is(answer.status, 200, answer.text);
  assert.is(answer.body.errors, undefined, JSON.stringify(answer.body.errors));
  return answer.body.data;
}

test("introspected, every enum's values are its domain array's, and every enum has one", async () => {
  const data = await gql(`{ __schema { types { name kind enumValues(includeDeprecated: true) { name } } } }`);
  const enums = (
    data.__schema.types as Array<{ name: string; kind: string; enumValues: Array<{ name: string }> | null }>
  ).filter((t) => t.kind === "ENUM" && !t.name.startsWith("__"));
  assert.equal(
    enums.map((e) => e.name).sort(),
    Object.keys(DOMAIN).sort(),
    "an enum the table does not name has no domain array to answer to",
  );
  for (const e of enums) {
    const domain = DOMAIN[e.name]!;
    assert.is(new Set(domain).size, domain.length, `${e.name}: the domain array names each value once`);
    // The served schema is sorted (schema/print.ts), so the sets are compared, not the order.
    assert.equal(e.enumValues!.map((v) => v.name).sort(), [...domain].sort(), e.name);
  }
});

test("no schema file lists an enum's values itself: every enumType takes a named array", () => {
  const dir = fileURLToPath(new URL("../../schema/", import.meta.url));
  const literal: string[] = [];
  let calls = 0;
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".ts"))) {
    const text = readFileSync(dir + file, "utf8");
    for (const call of text.matchAll(/builder\.enumType\(\s*"(\w+)"[\s\S]*?\bvalues:\s*([^,\n]+)/g)) {
      calls += 1;
      if (!/^[A-Z_][A-Z0-9_]*$/.test(call[2]!.trim())) literal.push(`${file}: ${call[1]} values: ${call[2]}`);
    }
  }
  assert.is(calls, Object.keys(DOMAIN).length, "every enum of the table is found by the scan");
  assert.equal(literal, []);
});

test("Token.scopes: each token's scopes come back as the words it was made with, in SCOPES order", async () => {
  const sets: string[][] = [
    ["read"],
    ["metrics"],
    ["decide", "read"],
    ["admin", "write", "read"],
    [...SCOPES].reverse(),
  ];
  for (const [i, scopes] of sets.entries()) {
    const made = await gql(
      `mutation($name: String!, $scopes: [String!]!) { createToken(name: $name, scopes: $scopes) { __typename ... on CreatedToken { token { name scopes } } ... on Error { code message } } }`,
      { name: `enum-${i}`, scopes },
    );
    assert.is(made.createToken.__typename, "CreatedToken", JSON.stringify(made.createToken));
    assert.equal(
      made.createToken.token.scopes,
      SCOPES.filter((s) => scopes.includes(s)),
    );
  }
  const listed = await gql(`{ tokens { name scopes } }`);
  const ours = (listed.tokens as Array<{ name: string; scopes: string[] }>).filter((t) => t.name.startsWith("enum-"));
  assert.equal(
    ours.map((t) => t.scopes),
    sets.map((scopes) => SCOPES.filter((s) => scopes.includes(s))),
  );
});

test("Error.code: a real refusal of every code, each the word its class carries", async () => {
  const admin = await makeToken(server, "enum-admin-only", ["admin"], {});
  const created = await gql(`mutation { createNest(name: "Enum room", crows: ["Hugin"]) { __typename } }`);
  assert.is(created.createNest.__typename, "Nest");
  const refused = await gql(`mutation {
    badInput: submitList(text: "   ", requester: "owner") { __typename ... on Error { code } }
    notFound: postVerdict(itemId: "nolist-1", target: triage, approve: true) { __typename ... on Error { code } }
    conflict: createNest(name: "ENUM ROOM", crows: ["Hugin"]) { __typename ... on Error { code } }
  }`);
  const forbidden = await gql(
    `mutation { createToken(name: "wider", scopes: ["metrics"]) { __typename ... on Error { code } } }`,
    {},
    bearer(admin.secret),
  );
  let limited: { __typename: string; code: string } | undefined;
  for (let i = 0; i < 15 && !limited; i++) {
    const answer = await gql(
      `mutation { submitList(text: "water the plants", requester: "enum-flooder") { __typename ... on Error { code } } }`,
    );
    if (answer.submitList.__typename === "RateLimitedError") limited = answer.submitList;
  }
  assert.ok(limited, "15 submissions in a few seconds earn a prank");
  const seen = [refused.badInput, refused.notFound, refused.conflict, forbidden.createToken, limited];
  assert.equal(
    seen.map((r: { __typename: string; code: string }) => [r.__typename, r.code]),
    [
      ["BadInputError", "bad_input"],
      ["NotFoundError", "not_found"],
      ["ConflictError", "conflict"],
      ["ForbiddenError", "forbidden"],
      ["RateLimitedError", "rate_limited"],
    ],
  );
  assert.equal(seen.map((r) => r!.code).sort(), [...ERROR_CODES].sort(), "every code of the domain was answered");
});

test("WebhookDelivery.state: deliveries the receiver took read delivered, refused ones failed once the retries run out", async () => {
  const receiver = await startReceiver();
  receiver.answer = ({ body }) => ({ status: body?.type === "approval.requested" ? 500 : 204 });
  try {
    const added = await gql(
      `mutation($url: String!) { addWebhook(url: $url, events: ["approval.requested", "list.finished"]) { __typename ... on WebhookSecret { endpoint { id } } ... on Error { code message } } }`,
      { url: receiver.url },
    );
    const id = added.addWebhook.endpoint.id as string;
    const { body } = await server.post("/api/lists", { text: "Buy milk\nWrite a haiku", requester: "enum-webhooks" });
    const owner = await ownerFollows(server.url, body.list_id);
    await owner.finished;
    owner.sse.close();
    type Delivery = { type: string; state: string };
    const settled = await eventually(
      "every delivery to leave pending",
      async () => {
        const page = await gql(
          `query($id: ID!) { webhookDeliveries(id: $id, limit: 100) { __typename ... on WebhookDeliveryPage { deliveries { type state } } } }`,
          { id },
        );
        const deliveries = page.webhookDeliveries.deliveries as Delivery[];
        return deliveries.some((d) => d.type === "list.finished") && deliveries.every((d) => d.state !== "pending")
          ? deliveries
          : undefined;
      },
      20_000,
    );
    assert.ok(
      settled.some((d) => d.type === "approval.requested"),
      "the list asked for approvals",
    );
    for (const d of settled)
      assert.is(d.state, d.type === "approval.requested" ? "failed" : "delivered", JSON.stringify(d));
    assert.ok(settled.every((d) => (DELIVERY_STATES as readonly string[]).includes(d.state)));
  } finally {
    await receiver.close();
  }
});

test.run();

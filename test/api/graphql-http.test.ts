// GraphQL over plain HTTP on a real server: GraphiQL served without CDN assets, queries, and
// mutations whose expected refusals arrive as typed error objects inside the result union.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { SYSTEM } from "../../src/base/actor.ts";

let server: TestServer;

test.before(async () => {
  server = await startTestServer();
});
test.after(async () => {
  await server.close();
});

const gql = (query: string, variables?: Record<string, unknown>) => server.post("/graphql", { query, variables });

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await probe();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test("GraphiQL page is served with every asset inline (no http/https CDN URLs)", async () => {
  const response = await fetch(server.url + "/graphql", { headers: { accept: "text/html" } });
  assert.is(response.status, 200);
  assert.match(response.headers.get("content-type") ?? "", /text\/html/);
  const html = await response.text();
  assert.match(html, /graphiql/i);
  const external = [
    ...html.matchAll(/<(?:script|link|img)\b[^>]*\b(?:src|href)\s*=\s*["']?(https?:\/\/[^"' >]+)/gi),
  ].map((m) => m[1]);
  assert.equal(external, [], "no script, stylesheet or image loads from another host");
  assert.not.match(html, /unpkg\.com|cdn\.jsdelivr\.net|esm\.sh|cdnjs\.cloudflare\.com/);
});

test("paths other than /graphql and /graphql/stream are 404", async () => {
  assert.is((await fetch(server.url + "/nope")).status, 404);
  assert.is((await fetch(server.url + "/graphqlx")).status, 404);
  assert.is((await fetch(server.url + "/nope/graphql/stream", { method: "POST" })).status, 404);
});

test("personas query lists the eight workers then the four service roles", async () => {
  const { status, body } = await gql("{ personas { name epithet strength backstory serviceRole } }");
  assert.is(status, 200);
  assert.is(body.errors, undefined);
  const names = body.data.personas.map((p: { name: string }) => p.name);
  assert.equal(names, [
    "Hugin",
    "Munin",
    "Pepper",
    "Inky",
    "Sable",
    "Rook",
    "Jackdaw",
    "Corvina",
    "Sentry",
    "Elder",
    "Quill",
    "Boss",
  ]);
  const sentry = body.data.personas[8];
  assert.ok(sentry.serviceRole);
  assert.ok(sentry.backstory.length > 20 && sentry.epithet && sentry.strength);
  assert.not.ok(body.data.personas[0].serviceRole);
});

test("trust query starts empty", async () => {
  const { status, body } = await gql("{ trust { holder taskType level levelName approvals history { verdict } } }");
  assert.is(status, 200);
  assert.equal(body.data, { trust: [] });
  assert.equal(Object.keys(body), ["data", "extensions"], "data and the cost, nothing else");
  assert.is(body.extensions.cost.limit, 100_000);
});

test("submitList with empty text returns a BadInputError object, not a top-level error", async () => {
  const { status, body } = await gql(
    `mutation { submitList(text: "   ", requester: "owner") { __typename ... on Error { code message } ... on SubmittedList { listId } } }`,
  );
  assert.is(status, 200);
  assert.is(body.errors, undefined);
  assert.is(body.data.submitList.__typename, "BadInputError");
  assert.is(body.data.submitList.code, "bad_input");
  assert.ok(body.data.submitList.message.length > 0);
});

test("submitList into an unknown nest returns a NotFoundError object", async () => {
  const { body } = await gql(
    `mutation { submitList(text: "buy milk", requester: "owner", nestId: "no-such-nest") { __typename ... on Error { code } } }`,
  );
  assert.is(body.errors, undefined);
  assert.equal(body.data.submitList, { __typename: "NotFoundError", code: "not_found" });
});

test("postVerdict with nothing waiting returns a NotFoundError object", async () => {
  const { status, body } = await gql(
    `mutation { postVerdict(itemId: "nolist-1", target: triage, approve: true) { __typename ... on Error { code message } } }`,
  );
  assert.is(status, 200);
  assert.is(body.errors, undefined);
  assert.is(body.data.postVerdict.__typename, "NotFoundError");
  assert.is(body.data.postVerdict.code, "not_found");
});

test("a bad target is rejected by the schema itself (VerdictTarget enum)", async () => {
  const { body } = await gql(`mutation { postVerdict(itemId: "x-1", target: banana, approve: true) { __typename } }`);
  assert.is(body.data, undefined, "validation fails before anything runs");
  assert.match(body.errors[0].message, /VerdictTarget/);
});

test("a refusal on a field without an error union keeps its code and HTTP status", async () => {
  const { status, body } = await gql(`{ events(listId: "x", after: -1) { seq } }`);
  assert.is(status, 400);
  assert.is(body.errors[0].extensions.code, "bad_input");
  assert.match(body.errors[0].message, /after/);
});

test("an unexpected failure is masked: no internals reach the client", async () => {
  const flock = server.app.flock as unknown as { postVerdict: (...args: unknown[]) => Promise<void> };
  const original = flock.postVerdict;
  flock.postVerdict = async () => {
    throw new Error("SQLITE_BUSY at /secret/data/crows.db");
  };
  try {
    const { body } = await gql(
      `mutation { postVerdict(itemId: "x-1", target: output, approve: false) { __typename } }`,
    );
    assert.is(body.data, null);
    assert.is(body.errors[0].message, "Unexpected error.");
    assert.is(body.errors[0].extensions.code, "INTERNAL_SERVER_ERROR");
    assert.not.match(JSON.stringify(body), /secret|SQLITE/);
  } finally {
    flock.postVerdict = original;
  }
});

test("end to end: submit, read the list, approve its triage, see the verdict and the trust history", async () => {
  const submitted = await gql(
    `mutation { submitList(text: "buy milk\\nwrite a haiku about crows", requester: "owner") {
      __typename ... on SubmittedList { listId list { id requester status items { id n text } } } ... on Error { code message } } }`,
  );
  assert.is(submitted.body.errors, undefined);
  const result = submitted.body.data.submitList;
  assert.is(result.__typename, "SubmittedList", JSON.stringify(result));
  const listId: string = result.listId;
  assert.is(result.list.id, listId);
  assert.is(result.list.requester, "owner");
  assert.equal(
    result.list.items.map((i: { id: string; text: string }) => [i.id, i.text]),
    [
      [`${listId}-1`, "buy milk"],
      [`${listId}-2`, "write a haiku about crows"],
    ],
  );

  const lists = await gql(`{ lists(requester: "owner") { id } }`);
  assert.ok(lists.body.data.lists.some((l: { id: string }) => l.id === listId));

  // A new flock trusts nobody, so each item's triage waits for the owner.
  const itemId = `${listId}-1`;
  await until("a pending triage approval", async () => {
    const { body } = await gql(`{ approvals(status: pending) { itemId target pending } }`);
    return body.data.approvals.find(
      (a: { itemId: string; target: string }) => a.itemId === itemId && a.target === "triage",
    );
  });

  const verdict = await gql(
    `mutation($itemId: ID!) { postVerdict(itemId: $itemId, target: triage, approve: true) {
      __typename ... on Approval { itemId target status pending decidedAt item { id } } ... on Error { code } } }`,
    { itemId },
  );
  assert.is(verdict.body.errors, undefined);
  const approval = verdict.body.data.postVerdict;
  assert.is(approval.__typename, "Approval");
  assert.is(approval.status, "approved");
  assert.is(approval.pending, false);
  assert.ok(approval.decidedAt);
  assert.is(approval.item.id, itemId);

  // A second answer finds nothing waiting.
  const again = await gql(
    `mutation($itemId: ID!) { postVerdict(itemId: $itemId, target: triage, approve: true) { __typename } }`,
    {
      itemId,
    },
  );
  assert.is(again.body.data.postVerdict.__typename, "NotFoundError");

  const trust = await gql(
    `{ trust(holder: "flock") { holder taskType level levelName streak approvals history { verdict subject from to at } } }`,
  );
  const records = trust.body.data.trust;
  assert.ok(records.length >= 1, JSON.stringify(trust.body));
  const entry = records
    .flatMap((r: { history: Array<{ subject: string }> }) => r.history)
    .find((h: { subject: string }) => h.subject === itemId);
  assert.ok(entry, "the approved triage is in the flock's history");
  assert.is(entry.verdict, "approved");
  assert.ok(records.some((r: { approvals: number; streak: number }) => r.approvals >= 1 && r.streak >= 1));

  const events = await gql(`query($id: ID!) { list(id: $id) { events { seq name } } }`, { id: listId });
  const names = events.body.data.list.events.map((e: { name: string }) => e.name);
  assert.is(names[0], "list.started");
  assert.ok(names.includes("verdict"));
});

test("a requester who floods gets a RateLimitedError object with cooldownS", async () => {
  let refusal: { __typename: string; code: string; cooldownS: number; message: string } | undefined;
  for (let i = 0; i < 15 && !refusal; i++) {
    const { body } = await gql(
      `mutation { submitList(text: "water the plants", requester: "flooder") { __typename ... on RateLimitedError { code cooldownS message } } }`,
    );
    assert.is(body.errors, undefined);
    if (body.data.submitList.__typename === "RateLimitedError") refusal = body.data.submitList;
    else assert.is(body.data.submitList.__typename, "SubmittedList");
  }
  assert.ok(refusal, "15 submissions in a few seconds earn a prank");
  assert.is(refusal!.code, "rate_limited");
  assert.ok(refusal!.cooldownS > 0);
  assert.ok(refusal!.message.length > 0);
});

test("trust history pages: the newest `last` per record, then the page before the first id, and each record alone", async () => {
  // Varied ledgers: records with 0..9 entries on two holders, verdicts interleaved across records.
  const verdicts = ["approved", "rejected", "auto", "timeout", "approved"] as const;
  const counts: Record<string, number> = {
    "pager-a\u0000writing": 9,
    "pager-a\u0000code": 1,
    "pager-b\u0000writing": 4,
    "pager-b\u0000math": 7,
  };
  const subjects: Record<string, string[]> = {};
  for (let round = 0; round < 9; round++) {
    for (const [key, count] of Object.entries(counts)) {
      if (round >= count) continue;
      const [holder, taskType] = key.split("\u0000") as [string, string];
      const subject = `${holder}-${taskType}-${round}`;
      (subjects[key] ??= []).push(subject);
      await server.app.prisma.$transaction((tx) =>
        server.app.flock.trust.apply(
          tx,
          holder,
          taskType,
          verdicts[(round + count) % verdicts.length]!,
          subject,
          SYSTEM,
        ),
      );
    }
  }
  type Page = {
    data: { trust: Array<{ holder: string; taskType: string; history: Array<{ id: number; subject: string }> }> };
  };
  const page = async (holder: string, last: number | null, before: number | null) => {
    const { status, body } = await gql(
      `query($holder: String, $last: Int, $before: Int) { trust(holder: $holder) { holder taskType history(last: $last, before: $before) { id subject } } }`,
      { holder, last, before },
    );
    assert.is(status, 200, JSON.stringify(body));
    return (body as Page).data.trust;
  };
  for (const holder of ["pager-a", "pager-b"]) {
    const full = await page(holder, null, null);
    for (const record of full) {
      const key = `${record.holder}\u0000${record.taskType}`;
      assert.equal(
        record.history.map((h) => h.subject),
        subjects[key],
        `${key}: all of it, oldest first`,
      );
    }
    for (const last of [1, 2, 3, 5, 20]) {
      for (const record of await page(holder, last, null)) {
        const all = subjects[`${record.holder}\u0000${record.taskType}`]!;
        assert.equal(
          record.history.map((h) => h.subject),
          all.slice(-last),
          `${record.holder}/${record.taskType} last ${last}`,
        );
        // Walking back page by page yields the whole history exactly once.
        let walked = record.history.map((h) => h.subject);
        let first = record.history[0]?.id;
        while (first !== undefined) {
          const before = (await page(holder, last, first)).find((r) => r.taskType === record.taskType)!.history;
          walked = [...before.map((h) => h.subject), ...walked];
          first = before[0]?.id;
        }
        assert.equal(walked, all, `${record.holder}/${record.taskType}: pages of ${last} cover the history`);
      }
    }
  }
  // The REST ledger: each record's newest 20 entries with their ids (the page-back point), and the total.
  const rest = (await server.get("/api/trust")).body.ledger as Array<{
    holder: string;
    task_type: string;
    history: Array<Record<string, unknown>>;
    history_total: number;
  }>;
  const b = rest.find((r) => r.holder === "pager-b" && r.task_type === "math")!;
  assert.equal(
    b.history.map((h) => h.subject),
    subjects["pager-b\u0000math"]!.slice(-20),
  );
  assert.is(b.history_total, subjects["pager-b\u0000math"]!.length);
  assert.equal(Object.keys(b.history[0]!).sort(), ["at", "from", "id", "subject", "to", "verdict"]);
  for (const last of [0, -1, 1001]) {
    const { status, body } = await gql(`{ trust(holder: "pager-a") { history(last: ${last}) { id } } }`);
    assert.is(status, 400, `last ${last}`);
    // 1001 may be refused before it runs (graphql-armor counts `last` into a query's cost).
    assert.ok(
      ["bad_input", "QUERY_TOO_COSTLY"].includes(body.errors[0].extensions.code),
      body.errors[0].extensions.code,
    );
  }
});

test.run();

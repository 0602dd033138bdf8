// @-addressing (docs/flock.md §6, src/nests/addressing.ts): a post with no `to` whose text opens
// with @Name naming a member or an addressable role (compared like requester names) is addressed
// to that name, and the stored record's `to` says so; a request addressed so is taken by that crow,
// not by the room's selector. The first name alone counts; a name that is no member addresses
// nobody; a given `to` wins; the text is kept as sent.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { addressedIn } from "../../src/nests/addressing.ts";
import { withKit, waitForRecord } from "../helpers/nest-kit.ts";

const MEMBERS = ["Hugin", "Munin", "Pepper", "Corax-7"];

test("who a text opens by addressing, over many spellings", () => {
  const cases: Array<[string, string]> = [
    ["@Hugin please research crows", "Hugin"],
    ["@hugin please", "Hugin"],
    ["@HUGIN please", "Hugin"],
    ["@Hugin, please", "Hugin"],
    ["@Hugin: please", "Hugin"],
    ["@Hugin!", "Hugin"],
    ["@Hugin", "Hugin"],
    ["@Hugin\nplease", "Hugin"],
    ["@Hugin\tplease", "Hugin"],
    ["\u200b@Hugin please", "Hugin"], // an invisible character before the @
    ["@Hu\u200bgin please", "Hugin"], // and inside the name
    ["@\uff28\uff55\uff47\uff49\uff4e please", "Hugin"], // full-width letters (NFKC)
    ["\uff20Hugin please", "Hugin"], // a full-width @
    ["@corax-7 draft this", "Corax-7"],
    ["@CORAX-7", "Corax-7"],
    ["@Quill relay this to the owner", "Quill"],
    ["@boss SPIN {}", "Boss"],
    ["@ELDER what do you think", "Elder"],
    ["@Hugin @Munin compare notes", "Hugin"], // the first name only
    ["@Hugin@Munin compare", "Hugin"],
    ["@Nobody please", ""], // no member: nobody
    ["@Nobody @Hugin please", ""], // the first word decides
    ["@everyone look", ""],
    ["@Sentry check this", ""], // a service role that is not addressable
    ["@owner hello", ""],
    ["@ Hugin please", ""], // a space after the @
    ["@", ""],
    ["@...", ""],
    ["@\u200b\u200b please", ""],
    ["Hugin please", ""], // no @
    ["please @Hugin", ""], // not at the start
    ["email me at a@Hugin.example", ""],
    ["@\u041dugin please", ""], // Cyrillic Н: another name, as for requesters
    ["@Hugi please", ""],
    ["@Hugins please", ""],
    ["@an.a", ""],
  ];
  for (const [text, expected] of cases) assert.is(addressedIn(text, MEMBERS), expected, JSON.stringify(text));
  assert.is(addressedIn("@Pepper go", ["Hugin"]), "", "a crow that is not a member of this nest");
});

const strip = (list: any[]) => list.map((r) => `${r.kind} ${r.author}->${r.to}`);

test("posted through REST and GraphQL: the stored record's `to` says who was addressed, the text is kept", () =>
  withKit(async (kit) => {
    assert.is((await kit.server.post("/api/nests", { name: "Pair", crows: ["Hugin", "Munin"] })).status, 201);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ text: "@munin note this" }, "Munin"],
      [{ text: "@MUNIN, note this" }, "Munin"],
      [{ text: "@Munin @Hugin note this" }, "Munin"],
      [{ text: "@Pepper note this" }, ""], // Pepper is no member of this nest
      [{ text: "@Quill note this" }, "Quill"],
      [{ text: "@Sentry note this" }, ""],
      [{ text: "@Munin note this", to: "Hugin" }, "Hugin"], // a given `to` wins
      [{ text: "@Munin note this", to: "" }, "Munin"], // an empty `to` is no `to`
      [{ text: "note this @Munin" }, ""],
    ];
    const authors = ["owner", "Hugin", "Munin"]; // the rate limit allows each 5 a minute
    for (const [i, [body, to]] of cases.entries()) {
      const posted = await kit.post("pair", { author: authors[i % authors.length], kind: "say", ...body });
      assert.is(posted.status, 201, JSON.stringify(posted.body));
      assert.is(posted.body.to, to, JSON.stringify(body));
      assert.is(posted.body.text, body.text, "the text as sent");
    }
    const stored = await kit.messages("pair");
    assert.equal(
      stored.map((r: any) => r.to),
      cases.map(([, to]) => to),
      "stored as answered",
    );
    const graphql = await kit.server.post("/graphql", {
      query:
        'mutation P($t: String!) { postMessage(nestId: "pair", author: "Hugin", text: $t, kind: "say") { ... on Message { to text } ... on Error { code message } } }',
      variables: { t: "@munin over GraphQL" },
    });
    assert.equal(graphql.body.data.postMessage, { to: "Munin", text: "@munin over GraphQL" });
    await kit.idle();
  }));

test("a request that opens with @Hugin is Hugin's to take, not the room's", () =>
  withKit(async (kit) => {
    const sse = await kit.stream("todo");
    const request = await kit.post("todo", {
      author: "owner",
      text: "@Hugin please research the history of crows",
      kind: "request",
    });
    assert.is(request.status, 201);
    assert.is(request.body.to, "Hugin");
    const claim = await waitForRecord(sse, (r) => r.kind === "claim" && r.refers_to === request.body.msg_id);
    assert.is(claim.author, "Hugin", "the addressed crow claims it");
    await waitForRecord(sse, (r) => r.kind === "deliver" && r.refers_to === request.body.msg_id);
    await kit.idle();
    const answered = (await kit.messages("todo")).filter((r: any) => r.refers_to === request.body.msg_id);
    assert.equal(strip(answered), ["claim Hugin->owner", "deliver Hugin->owner"]);
  }));

test("a spun crow is addressed by its name, like a roster crow", () =>
  withKit(async (kit) => {
    const spun = await kit.server.post("/graphql", {
      query: 'mutation { spinCrow(name: "Corax", persona: "Hugin") { __typename } }',
    });
    assert.is(spun.body.data.spinCrow.__typename, "SpunCrow");
    const posted = await kit.post("todo", { author: "owner", text: "@corax hello", kind: "say" });
    assert.is(posted.body.to, "Corax");
    await kit.idle();
  }));

test.run();

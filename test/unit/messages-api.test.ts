// GET/POST /api/nests/{nest_id}/messages: every refusal with its status and message, the stored
// record field for field, and the four tagging sources with Jev's confidence under the test's
// control (the loopback System One fake).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startKit, RECORD_FIELDS, type Kit } from "../helpers/nest-kit.ts";

async function withKit(fn: (kit: Kit) => Promise<void>, options: Parameters<typeof startKit>[0] = {}): Promise<void> {
  const kit = await startKit(options);
  try {
    await fn(kit);
    await kit.idle();
  } finally {
    await kit.close();
  }
}

test("201 with the stored record: every field of the payload table, snake_case, numbered from 1", () =>
  withKit(async (kit) => {
    const first = await kit.post("todo", { author: "owner", text: "  morning, crows  " });
    assert.is(first.status, 201);
    assert.equal(Object.keys(first.body), RECORD_FIELDS);
    assert.equal(first.body, {
      msg_id: "todo-1",
      kind: "say",
      author: "owner",
      text: "morning, crows",
      to: "",
      refers_to: "",
      tagged_by: "default",
      mode: "",
      mode_tagged_by: "",
      invited: 0,
      approval_phrase: "",
      resolved: "",
    });
    const second = await kit.post("todo", {
      author: "Hugin",
      text: "morning!",
      kind: "say",
      refers_to: "todo-1",
      approval_phrase: "ignored",
    });
    assert.is(second.status, 201);
    assert.is(second.body.msg_id, "todo-2");
    assert.is(second.body.refers_to, "todo-1");
    assert.is(second.body.tagged_by, "header");
    assert.is(second.body.approval_phrase, "", "approval_phrase is honored only on an ask_owner");
    const listed = await kit.server.get("/api/nests/todo/messages");
    assert.is(listed.status, 200);
    assert.equal(listed.body, [first.body, second.body]);
  }));

test("404 for an unknown nest, on GET and POST", () =>
  withKit(async (kit) => {
    const get = await kit.server.get("/api/nests/nope/messages");
    assert.is(get.status, 404);
    assert.equal(get.body, { message: 'No nest "nope".' });
    const post = await kit.post("nope", { author: "owner", text: "hi" });
    assert.is(post.status, 404);
    assert.equal(post.body, { message: 'No nest "nope".' });
  }));

test("400 with a message for every bad input", () =>
  withKit(async (kit) => {
    await kit.server.post("/api/nests", { name: "Launch copy", crows: ["Pepper", "Sable"] });
    await kit.post("launch-copy", { author: "owner", text: "first" });
    await kit.post("todo", { author: "owner", text: "in todo" });
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ text: "no author" }, '"author" must be a non-empty string: "owner" or a member of the nest.'],
      [{ author: "owner", text: "   " }, '"text" must be 1-2000 characters after trimming, got 0.'],
      [{ author: "owner", text: "x".repeat(2001) }, '"text" must be 1-2000 characters after trimming, got 2001.'],
      [{ author: "owner" }, '"text" must be a string of 1-2000 characters.'],
      [
        { author: "Hugin", text: "let me in" },
        'Hugin is not a member of nest "launch-copy"; a non-member posts through the assistant (address Quill) or a member.',
      ],
      [
        { author: "pepper", text: "wrong case" },
        'pepper is not a member of nest "launch-copy"; a non-member posts through the assistant (address Quill) or a member.',
      ],
      [
        { author: "Quill", text: "hello" },
        'Quill is a service role, not a member of nest "launch-copy"; it may only post ask_owner here.',
      ],
      [
        { author: "Boss", text: "hello", kind: "ask_owner", approval_phrase: "yes" },
        'Boss is a service role, not a member of nest "launch-copy"; it speaks here only through the harness.',
      ],
      [{ author: "Pepper", text: "go on", kind: "nudge" }, '"kind" nudge is posted by the harness only.'],
      [{ author: "Pepper", text: "breach!", kind: "flag" }, '"kind" flag is posted by the Sentry only.'],
      [
        { author: "owner", text: "shout", kind: "shout" },
        '"kind" must be one of say, request, claim, deliver, refer, decline (or ask_owner for the owner, Quill and the Sentry).',
      ],
      [
        { author: "owner", text: "re", refers_to: "launch-copy-9" },
        'refers_to "launch-copy-9" is not a message of nest "launch-copy".',
      ],
      [
        { author: "owner", text: "re", refers_to: "todo-1" },
        'refers_to "todo-1" is not a message of nest "launch-copy".',
      ],
      [
        { author: "owner", text: "ok?", kind: "ask_owner" },
        'an ask_owner needs an "approval_phrase" of 1-200 characters: the exact words the owner must reply with.',
      ],
      [
        { author: "owner", text: "hey", to: "Rook" },
        '"to" must be "owner", a member of the nest or Elder, Quill, Boss; Rook is none of them.',
      ],
      [{ author: "owner", text: "hey", mode: "swarm" }, '"mode" must be one of solo, conspiracy, split when given.'],
      [
        { author: "owner", text: "hey", invited: 9 },
        '"invited" must be a whole number from 1 to 3 (CROWS_MURDER_SIZE) when given.',
      ],
    ];
    for (const [body, message] of cases) {
      const response = await kit.post("launch-copy", body);
      assert.is(response.status, 400, JSON.stringify(body));
      assert.equal(response.body, { message }, JSON.stringify(body));
    }
    const notJson = await kit.server.request("POST", "/api/nests/launch-copy/messages", "{nope");
    assert.is(notJson.status, 400);
    assert.equal(notJson.body, { message: "The body is not valid JSON." });
    assert.is((await kit.messages("launch-copy")).length, 1, "nothing refused was stored");
  }));

test("ask_owner: the owner, Quill and the Sentry may post it; a crow's header is dropped", () =>
  withKit(async (kit) => {
    const owner = await kit.post("todo", {
      author: "owner",
      text: "Remind me: ship it?",
      kind: "ask_owner",
      approval_phrase: "  Ship It ",
    });
    assert.is(owner.status, 201);
    assert.is(owner.body.kind, "ask_owner");
    assert.is(owner.body.tagged_by, "header");
    assert.is(owner.body.to, "owner");
    assert.is(owner.body.approval_phrase, "Ship It");
    assert.is(owner.body.resolved, "", 'a fresh ask reads resolved: ""');
    const quill = await kit.post("todo", {
      author: "Quill",
      text: "May I book the table?",
      kind: "ask_owner",
      approval_phrase: "book it",
    });
    assert.is(quill.status, 201);
    assert.is(quill.body.kind, "ask_owner");
    assert.is(quill.body.author, "Quill");
    const crow = await kit.post("todo", {
      author: "Pepper",
      text: "Can I have a raise?",
      kind: "ask_owner",
      approval_phrase: "yes",
    });
    assert.is(crow.status, 201);
    assert.is(crow.body.kind, "say", "Jev unsure and no usable header: say by default");
    assert.is(crow.body.tagged_by, "default");
    assert.is(crow.body.approval_phrase, "");
    assert.is(
      kit.callsFor("kind").length,
      1,
      "only the crow's post asked Jev; an honored ask_owner is the poster's header",
    );
  }));

test("403 for a quarantined crow, checked before membership; owner unaffected", () =>
  withKit(async (kit) => {
    await kit.server.post("/api/nests", { name: "Launch copy", crows: ["Pepper"] });
    await kit.server.app.prisma.quarantine.create({
      data: { crow: "Hugin", nestId: "todo", flagMsgId: "todo-1", askMsgId: "todo-2", referent: "todo-0" },
    });
    for (const [nest, kind] of [
      ["todo", "say"],
      ["launch-copy", "deliver"],
      ["todo", "nudge"],
    ]) {
      const response = await kit.post(nest!, { author: "Hugin", text: "still here", kind });
      assert.is(response.status, 403, `${nest} ${kind}`);
      assert.equal(response.body, { message: "Hugin is quarantined pending the owner's decision." });
    }
    assert.is((await kit.post("launch-copy", { author: "owner", text: "fine" })).status, 201);
  }));

test("429 with message and cooldown_s once a poster earns the third strike, keyed by author", () =>
  withKit(async (kit) => {
    const statuses: number[] = [];
    let last: any;
    for (let i = 0; i < 8; i++) {
      const response = await kit.post("todo", { author: "Rook", text: `note ${i}`, kind: "say" });
      statuses.push(response.status);
      last = response.body;
    }
    assert.equal(statuses, [201, 201, 201, 201, 201, 201, 201, 429]);
    assert.is(last.cooldown_s, 60);
    assert.type(last.message, "string");
    assert.ok(last.message.length > 0);
    assert.is(
      (await kit.post("todo", { author: "Rook", text: "again", kind: "say" })).status,
      429,
      "the cooldown holds",
    );
    assert.is(
      (await kit.post("todo", { author: "Sable", text: "I am fine", kind: "say" })).status,
      201,
      "other authors are not affected",
    );
  }));

test("tagging: jev at or above the band, header when Jev is unsure, disagreement, default", () =>
  withKit(async (kit) => {
    kit.plan.kind = (s) =>
      s.text.startsWith("sure:")
        ? { choice: s.text.slice(5).split(" ")[0]!, confidence: 0.8 }
        : s.text.startsWith("weak:")
          ? { choice: "deliver", confidence: 0.79 }
          : "unsure";
    kit.plan.mode = (s) => (s.text.includes("takes") ? { choice: "conspiracy", confidence: 0.9 } : "unsure");
    const jev = await kit.post("todo", { author: "owner", text: "sure:refer see the doc", to: "owner" });
    assert.equal([jev.body.kind, jev.body.tagged_by], ["refer", "jev"]);
    const agree = await kit.post("todo", { author: "Hugin", text: "sure:say fine weather", kind: "say" });
    assert.equal(
      [agree.body.kind, agree.body.tagged_by],
      ["say", "jev"],
      "a header Jev agrees with is still Jev's tag",
    );
    const header = await kit.post("todo", { author: "Hugin", text: "weak: here it is", kind: "deliver" });
    assert.equal(
      [header.body.kind, header.body.tagged_by],
      ["deliver", "header"],
      "0.79 is below the 0.8 band: unsure",
    );
    const disagreement = await kit.post("todo", {
      author: "Hugin",
      text: "sure:say just chatting",
      kind: "request",
      to: "owner",
    });
    assert.equal([disagreement.body.kind, disagreement.body.tagged_by], ["say", "disagreement"]);
    const fallback = await kit.post("todo", { author: "Hugin", text: "hmm" });
    assert.equal([fallback.body.kind, fallback.body.tagged_by], ["say", "default"]);
    // A request's mode: Jev, the mode header, disagreement, default (solo).
    const modes = [
      [{ text: "sure:request three takes on a name", to: "owner" }, ["conspiracy", "jev", 3]],
      [{ text: "sure:request a plan", mode: "split", to: "owner" }, ["split", "header", 0]],
      [{ text: "sure:request two takes please", mode: "solo", to: "owner" }, ["conspiracy", "disagreement", 3]],
      [{ text: "sure:request a thing", to: "owner" }, ["solo", "default", 0]],
      [{ text: "sure:request takes", invited: 2, to: "owner" }, ["conspiracy", "jev", 2]],
    ] as const;
    for (const [body, [mode, by, invited]] of modes) {
      const response = await kit.post("todo", { author: "owner", ...body });
      assert.equal(
        [response.body.kind, response.body.mode, response.body.mode_tagged_by, response.body.invited],
        ["request", mode, by, invited],
        body.text,
      );
    }
    // One classifier call per post, its answers stored with probabilities and the header as truth.
    assert.is(kit.callsFor("kind").length, 10);
    const rows = await kit.server.app.prisma.classifierAnswer.findMany({
      where: { subject: header.body.msg_id },
      orderBy: { questionId: "asc" },
    });
    assert.equal(
      rows.map((r) => r.questionId),
      ["kind", "mode"],
    );
    assert.is(rows[0]!.truth, "deliver");
    assert.is(rows[0]!.answer, "deliver", "a choice below the band is stored as answered");
    assert.is(JSON.parse(rows[0]!.probabilities).deliver, 0.79);
    const unsure = await kit.server.app.prisma.classifierAnswer.findFirst({
      where: { subject: fallback.body.msg_id, questionId: "kind" },
    });
    assert.is(unsure!.answer, "", "unsure is stored as an empty answer");
    const sure = await kit.server.app.prisma.classifierAnswer.findFirst({
      where: { subject: disagreement.body.msg_id, questionId: "kind" },
    });
    assert.is(sure!.answer, "say");
    assert.is(sure!.truth, "request");
    assert.is(JSON.parse(sure!.probabilities).say, 0.8);
  }));

test.run();

// Obligations (docs/nests-chat.md "Obligations"): every message that calls for a response stores
// one promise with the message, whose stage moves awaiting_claim -> claimed -> answered | declined
// exactly once; an answer to a closed promise is refused and never stored; a missed expectation
// gets one harness nudge, and a crow that still cannot answer declines, so the loop always closes.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { withKit, type Kit } from "../helpers/nest-kit.ts";
import { failingWhen, pacedCrows } from "../helpers/models.ts";
import { eventually } from "../helpers/scale-services.ts";
import { Obligations } from "../../src/nests/obligations/index.ts";
import { ConflictError } from "../../src/base/errors.ts";

const rows = (kit: Kit, requestId: string) =>
  kit.server.app.prisma.obligation.findMany({ where: { requestId }, orderBy: { createdAt: "asc" } });
const one = async (kit: Kit, requestId: string) => {
  const found = await rows(kit, requestId);
  assert.is(found.length, 1, `one obligation for ${requestId}`);
  return found[0]!;
};

test("each kind of request stores one obligation naming its respondent, closed by the reply that answers it", () =>
  withKit(async (kit) => {
    await kit.server.post("/api/nests", { name: "Ops", crows: ["Inky", "Rook"] });
    const cases: Array<{ body: Record<string, unknown>; respondent: string; replier: string }> = [
      { body: { text: "Draft the release notes", to: "Rook" }, respondent: "Rook", replier: "Rook" },
      { body: { text: "Fix the flaky deploy script" }, respondent: "Inky", replier: "Inky" }, // the room: the selector's crow
      {
        body: { text: "What does the flock think of our roadmap?", to: "Elder" },
        respondent: "Elder",
        replier: "Elder",
      },
      { body: { text: "Who can help me with taxes?", to: "Quill" }, respondent: "Quill", replier: "Quill" },
      { body: { text: "How many crows are there?", to: "Boss" }, respondent: "Boss", replier: "Boss" },
    ];
    for (const c of cases) {
      const posted = await kit.post("ops", { author: "owner", kind: "request", ...c.body });
      assert.is(posted.status, 201);
      await kit.idle();
      const row = await one(kit, posted.body.msg_id);
      assert.is(row.respondent, c.respondent, JSON.stringify(c.body));
      assert.is(row.stage, "answered", JSON.stringify(c.body));
      assert.is(row.nudgeId, "");
      const answer = (await kit.messages("ops")).find((m: any) => m.msg_id === row.answerId);
      assert.ok(answer, `the closing reply is stored (${row.answerId})`);
      assert.equal([answer.author, answer.refers_to], [c.replier, posted.body.msg_id]);
      assert.ok(row.closedAt, "closed at its reply");
    }
  }));

test("messages that call for no response store no obligation; an ask stores only the promise that it resolves", () =>
  withKit(async (kit) => {
    const bodies = [
      { text: "lovely morning", kind: "say" },
      { text: "see docs/brief.md", kind: "refer" },
      { text: "can you do my taxes?", kind: "request", to: "owner" },
      { text: "Please approve the budget", kind: "ask_owner", approval_phrase: "approve budget" },
    ];
    const ids: string[] = [];
    for (const body of bodies) ids.push((await kit.post("todo", { author: "owner", ...body })).body.msg_id);
    await kit.idle();
    const stored = await kit.server.app.prisma.obligation.findMany();
    // The ask's: waits on the owner until its window ends (ask-expiry.ts), no crow answers it.
    assert.equal(
      stored.map((r) => [r.id, r.requestId, r.respondent, r.stage]),
      [[`ask:${ids[3]}`, ids[3], "owner", "awaiting_claim"]],
    );
  }));

test("a crow that cannot finish closes its obligation declined", () =>
  withKit(
    async (kit) => {
      await kit.server.post("/api/nests", { name: "Ops", crows: ["Inky"] });
      const posted = await kit.post("ops", { author: "owner", kind: "request", text: "Renew the domain", to: "Inky" });
      await kit.idle();
      const row = await one(kit, posted.body.msg_id);
      assert.is(row.stage, "declined");
      const decline = (await kit.messages("ops")).find((m: any) => m.msg_id === row.answerId);
      assert.is(decline.kind, "decline");
    },
    { deps: { model: failingWhen((r) => r.role === "crow") } },
  ));

test("while the crow works the obligation reads claimed; a second answer is refused and never stored", () =>
  withKit(
    async (kit) => {
      await kit.server.post("/api/nests", { name: "Ops", crows: ["Inky", "Rook"] });
      const posted = await kit.post("ops", {
        author: "owner",
        kind: "request",
        text: "Write the launch email",
        to: "Rook",
      });
      const requestId = posted.body.msg_id as string;
      const claimed = await eventually("the claim", async () => {
        const row = (await rows(kit, requestId))[0];
        return row?.stage === "claimed" ? row : undefined;
      });
      assert.is(claimed.respondent, "Rook");
      assert.ok(claimed.claimedAt);
      await kit.idle();
      assert.is((await one(kit, requestId)).stage, "answered");

      // Late answers (an old owner's, a takeover's): each is refused in its own transaction.
      const app = kit.server.app;
      const gate = new Obligations(app.chat, {
        config: app.config,
        prisma: app.prisma,
        log: app.log,
        nests: app.nests,
        instanceId: "late",
        logLine: () => {},
      });
      const before = (await kit.messages("ops")).length;
      for (const kind of ["deliver", "decline", "deliver"]) {
        const late = app.chat.post(
          "ops",
          { author: "Rook", kind, text: "My late answer to the launch email", refers_to: requestId },
          { response: true, within: gate.close(requestId, "Rook", kind === "deliver" ? "answered" : "declined") },
        );
        await late.then(
          () => assert.unreachable("a second answer was stored"),
          (error) => assert.instance(error, ConflictError),
        );
      }
      assert.is((await kit.messages("ops")).length, before, "nothing stored");
    },
    { deps: { model: pacedCrows(() => ({ delayMs: 300 })) } },
  ));

test("two answers racing for one open obligation: exactly one is stored", () =>
  withKit(
    async (kit) => {
      const crows = ["Inky", "Rook", "Pepper", "Sable", "Hugin"]; // one per round: the rate limit stays out of it
      await kit.server.post("/api/nests", { name: "Ops", crows });
      const app = kit.server.app;
      const gate = new Obligations(app.chat, {
        config: app.config,
        prisma: app.prisma,
        log: app.log,
        nests: app.nests,
        instanceId: "racer",
        logLine: () => {},
      });
      for (let round = 0; round < crows.length; round++) {
        const crow = crows[round]!;
        const posted = await kit.post("ops", {
          author: "owner",
          kind: "request",
          text: `Errand number ${round}`,
          to: crow,
        });
        const requestId = posted.body.msg_id as string;
        await eventually("the claim", async () =>
          (await rows(kit, requestId))[0]?.stage === "claimed" ? true : undefined,
        );
        const racers = Array.from({ length: 2 + round }, (_, i) =>
          app.chat.post(
            "ops",
            {
              author: crow,
              kind: i % 2 ? "decline" : "deliver",
              text: `Answer ${i} to errand ${round}`,
              refers_to: requestId,
            },
            { response: true, within: gate.close(requestId, crow, i % 2 ? "declined" : "answered") },
          ),
        );
        const settled = await Promise.allSettled(racers);
        assert.is(settled.filter((s) => s.status === "fulfilled").length, 1, `round ${round}: one racer wins`);
        for (const s of settled) if (s.status === "rejected") assert.instance(s.reason, ConflictError);
        const answers = (await kit.messages("ops")).filter(
          (m: any) => m.refers_to === requestId && (m.kind === "deliver" || m.kind === "decline"),
        );
        assert.is(answers.length, 1, `round ${round}: ${answers.length} answers stored`);
        assert.is((await one(kit, requestId)).answerId, answers[0].msg_id);
      }
    },
    { deps: { model: pacedCrows(() => ({ never: true })) } },
  ));

test("a crow that never answers: one nudge, then it declines, and nothing more", () =>
  withKit(
    async (kit) => {
      await kit.server.post("/api/nests", { name: "Ops", crows: ["Inky"] });
      const posted = await kit.post("ops", {
        author: "owner",
        kind: "request",
        text: "Audit the invoices",
        to: "Inky",
      });
      const requestId = posted.body.msg_id as string;
      const row = await eventually(
        "the obligation to close",
        async () => {
          const r = (await rows(kit, requestId))[0];
          return r && r.stage !== "claimed" && r.stage !== "awaiting_claim" ? r : undefined;
        },
        5000,
      );
      assert.is(row.stage, "declined");
      // A marker: a second errand to the same crow, claimed after this one closed. Its nudge and its
      // decline fall due later than any further deadline of the first could, so once it has closed,
      // a second nudge or decline of the first would already be stored.
      const marker = (
        await kit.post("ops", { author: "owner", kind: "request", text: "Audit the receipts", to: "Inky" })
      ).body.msg_id as string;
      await eventually(
        "the marker errand to close",
        async () => ((await rows(kit, marker))[0]?.stage === "declined" ? true : undefined),
        20_000,
      );
      const all = (await kit.messages("ops")).filter((m: any) => m.msg_id !== marker && m.refers_to !== marker);
      const nudges = all.filter((m: any) => m.kind === "nudge");
      assert.is(nudges.length, 1, "at most one nudge per obligation");
      assert.equal(
        [nudges[0].author, nudges[0].to, nudges[0].refers_to, nudges[0].tagged_by],
        ["harness", "Inky", requestId, "harness"],
      );
      assert.is(row.nudgeId, nudges[0].msg_id);
      const declines = all.filter((m: any) => m.kind === "decline");
      assert.is(declines.length, 1);
      assert.equal([declines[0].author, declines[0].refers_to, declines[0].msg_id], ["Inky", requestId, row.answerId]);
      assert.ok(
        row.nudgedAt!.getTime() - row.claimedAt!.getTime() >= 300,
        "nudged no sooner than CROWS_NUDGE_AFTER_MS after the claim",
      );
      assert.ok(
        row.closedAt!.getTime() - row.nudgedAt!.getTime() >= 300,
        "declined no sooner than CROWS_NUDGE_AFTER_MS after the nudge",
      );
      assert.is(all.length, 4, "request, claim, nudge, decline");
    },
    { env: { CROWS_NUDGE_AFTER_MS: "300" }, deps: { model: pacedCrows(() => ({ never: true })) } },
  ));

test("a slow crow is nudged and proceeds; its first, late answer is refused: one deliver", () =>
  withKit(
    async (kit) => {
      await kit.server.post("/api/nests", { name: "Ops", crows: ["Inky"] });
      const posted = await kit.post("ops", {
        author: "owner",
        kind: "request",
        text: "Summarise the quarter",
        to: "Inky",
      });
      const requestId = posted.body.msg_id as string;
      await kit.idle(); // the nudge's answer, and the first call answering late
      const all = await kit.messages("ops");
      assert.is(all.filter((m: any) => m.kind === "nudge").length, 1);
      const answers = all.filter(
        (m: any) => m.refers_to === requestId && (m.kind === "deliver" || m.kind === "decline"),
      );
      assert.is(answers.length, 1, JSON.stringify(answers));
      assert.is(answers[0].kind, "deliver");
      const row = await one(kit, requestId);
      assert.equal([row.stage, row.answerId], ["answered", answers[0].msg_id]);
    },
    { env: { CROWS_NUDGE_AFTER_MS: "200" }, deps: { model: pacedCrows((n) => ({ delayMs: n === 0 ? 900 : 0 })) } },
  ));

test("a room request handed on: the declining crow reopens it, the next crow claims and answers, once", () =>
  withKit(
    async (kit) => {
      await kit.server.post("/api/nests", { name: "Ops", crows: ["Inky", "Rook"] });
      const app = kit.server.app;
      const gate = new Obligations(app.chat, {
        config: app.config,
        prisma: app.prisma,
        log: app.log,
        nests: app.nests,
        instanceId: "hand",
        logLine: () => {},
      });
      const posted = await kit.post("ops", { author: "owner", kind: "request", text: "Sort out the shared drive" });
      const request = posted.body;
      const claimedBy = await eventually("the room's crow claims", async () => {
        const row = (await rows(kit, request.msg_id))[0];
        return row?.stage === "claimed" ? row.respondent : undefined;
      });
      const next = claimedBy === "Inky" ? "Rook" : "Inky";
      const post = (author: string, kind: string, within: ReturnType<Obligations["close"]>) =>
        app.chat.post(
          "ops",
          { author, kind, text: `${author}'s ${kind} on the shared drive`, refers_to: request.msg_id },
          { response: true, unmetered: true, within },
        );
      // Only the crow holding it may hand it on.
      await post(next, "decline", gate.handOn(request.msg_id, next)).then(
        () => assert.unreachable("handed on by a crow that did not hold it"),
        (error) => assert.instance(error, ConflictError),
      );
      await post(claimedBy, "decline", gate.handOn(request.msg_id, claimedBy));
      const reopened = await one(kit, request.msg_id);
      assert.equal([reopened.stage, reopened.respondent, reopened.nudgeId], ["awaiting_claim", "", ""]);
      await post(next, "claim", gate.claim(request, next));
      assert.equal(
        [(await one(kit, request.msg_id)).stage, (await one(kit, request.msg_id)).respondent],
        ["claimed", next],
      );
      await post(claimedBy, "deliver", gate.close(request.msg_id, claimedBy, "answered")).then(
        () => assert.unreachable("the crow that handed it on answered it anyway"),
        (error) => assert.instance(error, ConflictError),
      );
      const answer = await post(next, "deliver", gate.close(request.msg_id, next, "answered"));
      assert.equal(
        [(await one(kit, request.msg_id)).stage, (await one(kit, request.msg_id)).answerId],
        ["answered", answer.msg_id],
      );
    },
    { deps: { model: pacedCrows(() => ({ never: true })) } },
  ));

test("a conspiracy: one obligation per invited crow, each closed by that crow's deliver", () =>
  withKit(async (kit) => {
    await kit.server.post("/api/nests", { name: "Names", crows: ["Pepper", "Sable", "Hugin", "Munin"] });
    const posted = await kit.post("names", {
      author: "owner",
      text: "Name our new product",
      kind: "request",
      mode: "conspiracy",
      invited: 3,
    });
    await kit.idle();
    const found = await rows(kit, posted.body.msg_id);
    assert.equal(found.map((r) => r.respondent).sort(), ["Hugin", "Pepper", "Sable"]);
    assert.ok(found.every((r) => r.stage === "answered"));
    const delivers = (await kit.messages("names")).filter((m: any) => m.kind === "deliver");
    assert.equal(found.map((r) => r.answerId).sort(), delivers.map((m: any) => m.msg_id).sort());
  }));

test.run();

// The Sentry's watchdog and ask_owner, as the owner sees them: a breach becomes a flag and an ask,
// the crow is quarantined (403 before membership, skipped by the selectors), the owner's exact
// retire removes a spun crow from the registry and a persona crow from the nest, the exact
// reinstate lifts the quarantine, every exact reply counts once on Sentry|triage/watch, and an
// unanswered ask reads rejected after the window and moves nothing.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { withKit, waitForRecord, CLEAN, OFF_TOPIC, type Kit } from "../helpers/nest-kit.ts";

/** Jev finds these authors' claims and delivers off topic; everyone else is clean. */
function breaching(kit: Kit): Set<string> {
  const breachers = new Set<string>();
  kit.plan.watch = (state) => (breachers.has(state.author) ? OFF_TOPIC : CLEAN);
  return breachers;
}

async function watchEvents(kit: Kit, nestId: string): Promise<any[]> {
  return (await kit.server.app.log.read(`watch:${nestId}`)).map((e) => ({ name: e.name, ...JSON.parse(e.payload) }));
}

/** The owner posts a lot in these stories; the requester strikes (tested in messages-api) would
 * prank it. Clearing its rate-limit row between phases keeps each phase about one rule. */
async function forgiveOwner(kit: Kit): Promise<void> {
  await kit.server.app.prisma.requester.deleteMany({ where: { name: "owner" } });
}

/** An owner reply that must be accepted (201). */
async function reply(kit: Kit, nestId: string, text: string, refersTo?: string): Promise<any> {
  const response = await kit.post(nestId, {
    author: "owner",
    text,
    kind: "say",
    ...(refersTo ? { refers_to: refersTo } : {}),
  });
  assert.is(response.status, 201, JSON.stringify(response.body));
  return response.body;
}

/** Asks `crow` for work in `nestId` and waits for the Sentry's ask that follows its breach. */
async function breachAndAsk(kit: Kit, nestId: string, crow: string): Promise<{ flag: any; ask: any }> {
  const sse = await kit.stream(nestId);
  await forgiveOwner(kit);
  try {
    await kit.post(nestId, {
      author: "owner",
      text: `Summarise the meeting notes, ${crow}`,
      kind: "request",
      to: crow,
    });
    const ask = await waitForRecord(sse, (r) => r.kind === "ask_owner" && r.approval_phrase === `reinstate ${crow}`);
    await kit.idle();
    const flag = (await kit.messages(nestId)).find((r: any) => r.msg_id === ask.refers_to);
    return { flag, ask };
  } finally {
    sse.close();
  }
}

test("the full quarantine story: breach, flag, ask, 403 before membership, retire (spun and persona), reinstate", () =>
  withKit(async (kit) => {
    const breachers = breaching(kit);
    await kit.server.app.registry.spin({ name: "Bran", persona: "Hugin" });
    await kit.server.post("/api/nests", { name: "Crew", crows: ["Pepper", "Bran", "Sable"] });
    await kit.server.post("/api/nests", { name: "Other", crows: ["Rook"] });

    // 1. Bran's claim breaches: the Sentry flags it, then asks the owner.
    breachers.add("Bran");
    const { flag, ask } = await breachAndAsk(kit, "crew", "Bran");
    assert.is(flag.kind, "flag");
    assert.is(flag.author, "Sentry");
    assert.is(flag.tagged_by, "harness");
    assert.is(flag.to, "Bran");
    const claim = (await kit.messages("crew")).find((r: any) => r.msg_id === flag.refers_to);
    assert.equal([claim.kind, claim.author, claim.refers_to], ["claim", "Bran", "crew-1"]);
    assert.ok(flag.text.includes("answers_request 0.05"), flag.text);
    assert.ok(flag.text.includes("states_fact_without_source 0.05"), flag.text);
    assert.ok(flag.text.includes("contradicts_earlier 0.05"), flag.text);
    assert.equal(
      { kind: ask.kind, author: ask.author, to: ask.to, approval_phrase: ask.approval_phrase, resolved: ask.resolved },
      { kind: "ask_owner", author: "Sentry", to: "owner", approval_phrase: "reinstate Bran", resolved: "" },
    );
    assert.ok(ask.text.includes('"reinstate Bran"') && ask.text.includes('"retire Bran"'), ask.text);
    assert.ok(ask.text.includes(flag.text), "the ask quotes the flag as evidence");
    const flags = (await kit.messages("crew")).filter((r: any) => r.kind === "flag");
    assert.is(flags.length, 1, "at most one flag per crow per referent");

    // The watch flight events carry the three scores, on the Sentry's own stream.
    const watches = (await watchEvents(kit, "crew")).filter((e) => e.name === "watch");
    const first = watches.find((e) => e.msg_id === claim.msg_id);
    assert.equal(
      [first.answers_request, first.states_fact_without_source, first.contradicts_earlier, first.breach, first.flagged],
      [0.05, 0.05, 0.05, true, true],
    );
    assert.ok((await kit.messages("crew")).every((r: any) => r.kind !== "watch"));

    // 2. Quarantined: 403 in its nest and where it is no member (the gate runs first).
    for (const nest of ["crew", "other"]) {
      const response = await kit.post(nest, { author: "Bran", text: "let me explain", kind: "say" });
      assert.is(response.status, 403, nest);
      assert.equal(response.body, { message: "Bran is quarantined pending the owner's decision." });
    }

    // 3. Anything but the exact words changes nothing; so does the right phrase without refers_to.
    await reply(kit, "crew", "reinstate Bran please", ask.msg_id);
    await reply(kit, "crew", "retire Bran");
    await kit.post("crew", { author: "Pepper", text: "retire Bran", refers_to: ask.msg_id, kind: "say" });
    await kit.idle();
    assert.is((await kit.messages("crew")).find((r: any) => r.msg_id === ask.msg_id).resolved, "");
    assert.is((await kit.post("crew", { author: "Bran", text: "hello?", kind: "say" })).status, 403);

    // 4. The owner's exact retire (trimmed, any case): the spun crow leaves the registry; the mark stays.
    await forgiveOwner(kit);
    await reply(kit, "crew", "  Retire BRAN ", ask.msg_id);
    await kit.idle();
    assert.is((await kit.messages("crew")).find((r: any) => r.msg_id === ask.msg_id).resolved, "approved");
    assert.equal((await kit.server.get("/api/crows")).body, { crows: [] });
    assert.equal((await kit.server.get("/api/nests")).body.nests.find((n: any) => n.nest_id === "crew").crows, [
      "Pepper",
      "Sable",
    ]);
    const retired = await kit.post("crew", { author: "Bran", text: "I'm back", kind: "say" });
    assert.is(retired.status, 403, "retired but still quarantined reads 403, not 400");
    const sentry1 = await kit.server.app.prisma.trust.findUnique({
      where: { holder_taskType: { holder: "Sentry", taskType: "triage/watch" } },
    });
    assert.equal([sentry1!.approvals, sentry1!.streak, sentry1!.level], [1, 1, 0]);

    // A second exact reply does not bump again.
    await reply(kit, "crew", "retire Bran", ask.msg_id);
    await reply(kit, "crew", "reinstate Bran", ask.msg_id);
    await kit.idle();
    const sentry2 = await kit.server.app.prisma.trust.findUnique({
      where: { holder_taskType: { holder: "Sentry", taskType: "triage/watch" } },
    });
    assert.is(sentry2!.approvals, 1, "counted at most once per ask");
    assert.is(
      (await kit.post("crew", { author: "Bran", text: "hi", kind: "say" })).status,
      403,
      "the ask resolved once; the later reinstate moved nothing",
    );

    // 5. A persona crow: Pepper breaches, the owner retires it from this nest; the persona lives on.
    breachers.add("Pepper");
    const pepper = await breachAndAsk(kit, "crew", "Pepper");
    await reply(kit, "crew", "retire pepper", pepper.ask.msg_id);
    await kit.idle();
    assert.equal((await kit.server.get("/api/nests")).body.nests.find((n: any) => n.nest_id === "crew").crows, [
      "Sable",
    ]);
    assert.ok((await kit.server.get("/api/personas")).body.some((p: any) => p.name === "Pepper"));
    assert.is((await kit.post("crew", { author: "Pepper", text: "hi", kind: "say" })).status, 403);

    // 6. Reinstate: Sable breaches in crew; the exact reinstate lifts the quarantine.
    breachers.add("Sable");
    const sable = await breachAndAsk(kit, "crew", "Sable");
    assert.is((await kit.post("crew", { author: "Sable", text: "sorry", kind: "say" })).status, 403);
    breachers.delete("Sable");
    await reply(kit, "crew", "Reinstate Sable", sable.ask.msg_id);
    await kit.idle();
    assert.is((await kit.post("crew", { author: "Sable", text: "thank you", kind: "say" })).status, 201);
    const rows = await kit.server.app.prisma.quarantine.findMany({ orderBy: { id: "asc" } });
    assert.equal(
      rows.map((r) => [r.crow, r.status, r.retired]),
      [
        ["Bran", "quarantined", true],
        ["Pepper", "quarantined", true],
        ["Sable", "reinstated", false],
      ],
    );

    // Three approvals in a row promote the Sentry's triage/watch record, logged once as trust.changed.
    const sentry3 = await kit.server.app.prisma.trust.findUnique({
      where: { holder_taskType: { holder: "Sentry", taskType: "triage/watch" } },
    });
    assert.equal([sentry3!.approvals, sentry3!.level], [3, 1]);
    const changes = (await watchEvents(kit, "crew")).filter((e) => e.name === "trust.changed");
    assert.equal(
      changes.map((c) => [c.holder, c.task_type, c.from, c.to]),
      [["Sentry", "triage/watch", 0, 1]],
    );
  }));

test("quarantined crows are skipped by the open and directed selectors; a directed request gets their decline", () =>
  withKit(async (kit) => {
    const breachers = breaching(kit);
    await kit.server.post("/api/nests", { name: "Ops", crows: ["Inky", "Rook"] });
    breachers.add("Inky");
    await breachAndAsk(kit, "ops", "Inky");
    const before = (await kit.messages("ops")).length;
    await kit.post("ops", { author: "owner", text: "Fix the build", kind: "request" });
    await kit.idle();
    await kit.post("ops", { author: "owner", text: "Inky, fix the tests", kind: "request", to: "Inky" });
    await kit.idle();
    const after = (await kit.messages("ops")).slice(before);
    assert.equal(
      after.map((r: any) => `${r.kind} ${r.author}`),
      ["request owner", "claim Rook", "deliver Rook", "request owner", "decline Inky"],
      "Rook took the room's request; quarantined Inky was not asked to work, and the loop declined for it",
    );
    const decline = after[4];
    assert.equal([decline.to, decline.refers_to, decline.tagged_by], ["owner", after[3].msg_id, "harness"]);
    assert.ok(decline.text.includes("quarantined"), decline.text);
  }));

test("an unanswered ask reads rejected after the window; a late exact reply and the timeout move nothing", () =>
  withKit(
    async (kit) => {
      const breachers = breaching(kit);
      breachers.add("Munin");
      const { ask } = await breachAndAsk(kit, "todo", "Munin");
      // resolved is computed at read time: wait for the window to pass as a client would, by reading.
      let resolved = "";
      for (let tries = 0; resolved !== "rejected" && tries < 200; tries++) {
        resolved = (await kit.messages("todo")).find((r: any) => r.msg_id === ask.msg_id).resolved;
      }
      assert.is(resolved, "rejected");
      await reply(kit, "todo", "reinstate Munin", ask.msg_id);
      await kit.idle();
      assert.is(
        (await kit.messages("todo")).find((r: any) => r.msg_id === ask.msg_id).resolved,
        "rejected",
        "a rejected quarantine ask changes nothing",
      );
      assert.is(
        (await kit.post("todo", { author: "Munin", text: "hello", kind: "say" })).status,
        403,
        "the crow stays quarantined",
      );
      assert.is(
        await kit.server.app.prisma.trust.count({ where: { holder: "Sentry" } }),
        0,
        "a timeout moves nothing on Sentry|triage/watch",
      );
      assert.is(await kit.server.app.prisma.trustEntry.count({ where: { holder: "Sentry" } }), 0);
    },
    { env: { CROWS_APPROVAL_WINDOW_MS: "1" } },
  ));

test("ask_owner the owner parked: the exact phrase approves it, nothing on the Sentry's record", () =>
  withKit(async (kit) => {
    const ask = (
      await kit.post("todo", {
        author: "owner",
        text: "Do we book the venue?",
        kind: "ask_owner",
        approval_phrase: "Book It",
      })
    ).body;
    await reply(kit, "todo", "book it now", ask.msg_id);
    assert.is((await kit.messages("todo"))[0].resolved, "");
    await reply(kit, "todo", " BOOK IT ", ask.msg_id);
    assert.is((await kit.messages("todo"))[0].resolved, "approved");
    assert.is(await kit.server.app.prisma.trust.count({ where: { holder: "Sentry" } }), 0);
  }));

test("an unsure watchdog never quarantines; owner messages are never inspected", () =>
  withKit(async (kit) => {
    kit.plan.watch = () => undefined;
    const sse = await kit.stream("todo");
    await kit.post("todo", { author: "owner", text: "Plan the offsite", kind: "request", to: "Munin" });
    await waitForRecord(sse, (r) => r.kind === "deliver");
    await kit.idle();
    sse.close();
    const watches = await watchEvents(kit, "todo");
    assert.is(watches.length, 2, "one call each for the claim and the deliver");
    assert.ok(watches.every((w) => w.sure === false && w.flagged === false && w.answers_request === null));
    assert.is((await kit.messages("todo")).filter((r: any) => r.kind === "flag").length, 0);
    const calls = kit.callsFor("answers_request").length;
    kit.plan.watch = () => OFF_TOPIC;
    await kit.post("todo", { author: "owner", text: "here is my own answer", kind: "deliver", refers_to: "todo-1" });
    await kit.post("todo", { author: "Quill", text: "ok?", kind: "ask_owner", approval_phrase: "ok" });
    await kit.idle();
    assert.is(kit.callsFor("answers_request").length, calls, "the owner's deliver was not inspected");
    assert.ok(
      kit.callsFor("answers_request").every((c) => Object.keys(c.body.questions!).length === 3),
      "one call, three noul questions",
    );
  }));

test("at most one flag per crow per referent: a later breach is logged, not posted", () =>
  withKit(async (kit) => {
    breaching(kit).add("Hugin");
    // Jev takes its time on the claim, so the deliver lands before the quarantine does.
    kit.jev.reply = (call) => ((call.body.state as any)?.kind === "claim" ? { delayMs: 300 } : {});
    const request = (
      await kit.post("todo", { author: "owner", text: "Find the venue's phone number", kind: "request", to: "owner" })
    ).body;
    assert.is(
      (await kit.post("todo", { author: "Hugin", text: "on it", kind: "claim", refers_to: request.msg_id })).status,
      201,
    );
    assert.is(
      (await kit.post("todo", { author: "Hugin", text: "it is 555-0100", kind: "deliver", refers_to: request.msg_id }))
        .status,
      201,
    );
    await kit.idle();
    const watches = (await watchEvents(kit, "todo")).filter((e) => e.name === "watch");
    assert.is(watches.length, 2);
    assert.ok(watches.every((w) => w.breach === true));
    assert.equal(watches.map((w) => w.flagged).sort(), [false, true]);
    const all = await kit.messages("todo");
    assert.is(all.filter((r: any) => r.kind === "flag").length, 1);
    assert.is(all.filter((r: any) => r.kind === "ask_owner").length, 1);
  }));

test.run();

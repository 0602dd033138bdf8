// The must-respond loop as a client sees it on the nest stream: exactly one responder per message
// that calls for one, answering through the same POST path; nothing for a message that needs none.
// Quill's deliver, relay and say-back; Boss's spin-up, its refusal at the cap, a NEST order and
// silence when saturated (BOSS_ORDERS in progress); a conspiracy's distinct claims; a crow that cannot finish declines.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { withKit, waitForRecord } from "../helpers/nest-kit.ts";
import { failingWhen } from "../helpers/models.ts";
import { OfflineBrain } from "../../src/models/offline.ts";
import type { Model } from "../../src/models/model.ts";
import { BOSS_ORDERS } from "../../src/nests/responders/index.ts";

const strip = (list: any[]) => list.map((r) => `${r.msg_id} ${r.kind} ${r.author}->${r.to} re:${r.refers_to}`);

test("a request to a member crow: that crow claims, then delivers to the requester, once", () =>
  withKit(async (kit) => {
    await kit.server.post("/api/nests", { name: "Launch copy", crows: ["Pepper", "Sable"] });
    const sse = await kit.stream("launch-copy");
    const request = await kit.post("launch-copy", {
      author: "owner",
      text: "Draft a tagline for the launch",
      kind: "request",
      to: "Sable",
    });
    assert.is(request.status, 201);
    assert.is(request.body.mode, "solo");
    const deliver = await waitForRecord(sse, (r) => r.kind === "deliver");
    await kit.idle();
    const all = await kit.messages("launch-copy");
    assert.equal(strip(all), [
      "launch-copy-1 request owner->Sable re:",
      "launch-copy-2 claim Sable->owner re:launch-copy-1",
      "launch-copy-3 deliver Sable->owner re:launch-copy-1",
    ]);
    assert.is(deliver.author, "Sable");
    assert.ok(deliver.text.includes("[offline]"), "the deliver is the crow's model answer");
    assert.equal(
      [all[1].tagged_by, all[2].tagged_by],
      ["harness", "harness"],
      "the loop fixed the claim's and the deliver's kinds",
    );
    sse.close();
  }));

test("a message that calls for no response gets none", () =>
  withKit(async (kit) => {
    await kit.post("todo", { author: "owner", text: "lovely morning", kind: "say" });
    await kit.post("todo", { author: "owner", text: "see the brief in docs/brief.md", kind: "refer" });
    await kit.post("todo", { author: "owner", text: "can you do my taxes?", kind: "request", to: "owner" });
    await kit.idle();
    assert.is((await kit.messages("todo")).length, 3);
  }));

test("a request to the room: the open selector picks one crow, core first, rotating", () =>
  withKit(async (kit) => {
    await kit.server.post("/api/nests", { name: "Ops", crows: ["Inky", "Rook"] });
    await kit.post("ops", { author: "owner", text: "Fix the flaky deploy script", kind: "request" });
    await kit.idle();
    await kit.post("ops", { author: "owner", text: "Renew the domain", kind: "request" });
    await kit.idle();
    assert.equal(strip(await kit.messages("ops")), [
      "ops-1 request owner-> re:",
      "ops-2 claim Inky->owner re:ops-1",
      "ops-3 deliver Inky->owner re:ops-1",
      "ops-4 request owner-> re:",
      "ops-5 claim Rook->owner re:ops-4",
      "ops-6 deliver Rook->owner re:ops-4",
    ]);
  }));

test("the open selector skips a quarantined crow", () =>
  withKit(async (kit) => {
    await kit.server.post("/api/nests", { name: "Ops", crows: ["Inky", "Rook"] });
    await kit.server.app.prisma.quarantine.create({
      data: { crow: "Inky", nestId: "ops", flagMsgId: "x", askMsgId: "y", referent: "z" },
    });
    await kit.post("ops", { author: "owner", text: "Fix the flaky deploy script", kind: "request" });
    await kit.idle();
    const claims = (await kit.messages("ops")).filter((r: any) => r.kind === "claim");
    assert.equal(
      claims.map((r: any) => r.author),
      ["Rook"],
    );
  }));

test("a conspiracy: up to `invited` crows, each claiming a distinct lens, then each delivering", () =>
  withKit(async (kit) => {
    await kit.server.post("/api/nests", { name: "Names", crows: ["Pepper", "Sable", "Hugin", "Munin"] });
    const sse = await kit.stream("names");
    const request = await kit.post("names", {
      author: "owner",
      text: "Name our new product",
      kind: "request",
      mode: "conspiracy",
    });
    assert.equal([request.body.mode, request.body.mode_tagged_by, request.body.invited], ["conspiracy", "header", 3]);
    await sse.waitFor(
      (m) => m.data.kind === "deliver" && sse.messages().filter((x) => x.data.kind === "deliver").length === 3,
    );
    await kit.idle();
    const all = await kit.messages("names");
    const claims = all.filter((r: any) => r.kind === "claim");
    const delivers = all.filter((r: any) => r.kind === "deliver");
    assert.equal(
      claims.map((r: any) => r.author),
      ["Pepper", "Sable", "Hugin"],
      "core first, in order, up to invited",
    );
    assert.is(new Set(claims.map((r: any) => r.text)).size, 3, "each claim names a distinct lens");
    assert.ok(claims.every((r: any) => r.refers_to === "names-1" && r.to === "owner"));
    assert.equal(delivers.map((r: any) => r.author).sort(), ["Hugin", "Pepper", "Sable"]);
    assert.is(all.length, 7);
    sse.close();
  }));

test("a conspiracy borrows from the flock when the core is short; invited caps it", () =>
  withKit(async (kit) => {
    await kit.server.post("/api/nests", { name: "Duo", crows: ["Pepper"] });
    await kit.post("duo", {
      author: "owner",
      text: "Ideas for the party",
      kind: "request",
      mode: "conspiracy",
      invited: 2,
    });
    await kit.idle();
    const claims = (await kit.messages("duo")).filter((r: any) => r.kind === "claim");
    assert.equal(
      claims.map((r: any) => r.author),
      ["Pepper", "Hugin"],
      "Pepper from the core, Hugin borrowed (and allowed to answer)",
    );
  }));

test("a crow whose model call fails declines with the reason (it still counts as responding)", () =>
  withKit(
    async (kit) => {
      await kit.post("todo", { author: "owner", text: "Write the haiku", kind: "request", to: "Corvina" });
      await kit.idle();
      assert.equal(strip(await kit.messages("todo")), [
        "todo-1 request owner->Corvina re:",
        "todo-2 claim Corvina->owner re:todo-1",
        "todo-3 decline Corvina->owner re:todo-1",
      ]);
      assert.ok((await kit.messages("todo"))[2].text.includes("provider answered 503"));
    },
    { deps: { model: failingWhen((r) => r.role === "crow") } },
  ));

test("a nudge: the harness hands a verdict to one crow, which delivers on the expectation once", () =>
  withKit(async (kit) => {
    const request = (await kit.post("todo", { author: "owner", text: "Book the train", kind: "request", to: "owner" }))
      .body;
    const nudge = await kit.server.app.chat.nudge(
      "todo",
      "Rook",
      "The owner's train is still unbooked: please proceed.",
      request.msg_id,
    );
    assert.equal([nudge.kind, nudge.author, nudge.to, nudge.tagged_by], ["nudge", "harness", "Rook", "harness"]);
    await kit.idle();
    assert.equal(strip(await kit.messages("todo")), [
      "todo-1 request owner->owner re:",
      "todo-2 nudge harness->Rook re:todo-1",
      "todo-3 deliver Rook->owner re:todo-1",
    ]);
  }));

test("the Elder, addressable in every nest: one deliver to the requester", () =>
  withKit(async (kit) => {
    await kit.post("todo", { author: "owner", text: "Merge the two packing lists", kind: "request", to: "Elder" });
    await kit.idle();
    assert.equal(strip(await kit.messages("todo")), [
      "todo-1 request owner->Elder re:",
      "todo-2 deliver Elder->owner re:todo-1",
    ]);
  }));

test("Quill: a request to Quill gets one deliver from Quill to the requester", () =>
  withKit(async (kit) => {
    const sse = await kit.stream("todo");
    await kit.post("todo", { author: "owner", text: "What should I cook tonight?", kind: "request", to: "Quill" });
    const reply = await waitForRecord(sse, (r) => r.author === "Quill");
    await kit.idle();
    assert.equal([reply.kind, reply.to, reply.refers_to], ["deliver", "owner", "todo-1"]);
    assert.is((await kit.messages("todo")).length, 2);
    sse.close();
  }));

test("Quill relays to a named member: a request by Quill, tagged harness; the crow answers it", () =>
  withKit(async (kit) => {
    await kit.server.post("/api/nests", { name: "Launch copy", crows: ["Pepper", "Sable"] });
    const sse = await kit.stream("launch-copy");
    await kit.post("launch-copy", {
      author: "owner",
      text: "Quill, ask Pepper to draft a tagline for the launch",
      kind: "request",
      to: "Quill",
    });
    await waitForRecord(sse, (r) => r.kind === "deliver");
    await kit.idle();
    const all = await kit.messages("launch-copy");
    assert.equal(strip(all), [
      "launch-copy-1 request owner->Quill re:",
      "launch-copy-2 request Quill->Pepper re:launch-copy-1",
      "launch-copy-3 claim Pepper->Quill re:launch-copy-2",
      "launch-copy-4 deliver Pepper->Quill re:launch-copy-2",
    ]);
    assert.is(all[1].tagged_by, "harness");
    assert.is(all[1].text, "draft a tagline for the launch");
    sse.close();
  }));

test("Quill cannot name a member: one say back to the requester, and the request rests", () =>
  withKit(async (kit) => {
    await kit.server.post("/api/nests", { name: "Launch copy", crows: ["Pepper"] });
    await kit.post("launch-copy", {
      author: "owner",
      text: "Ask Rook to pick up the prints",
      kind: "request",
      to: "Quill",
    });
    await kit.idle();
    const all = await kit.messages("launch-copy");
    assert.equal(strip(all), [
      "launch-copy-1 request owner->Quill re:",
      "launch-copy-2 say Quill->owner re:launch-copy-1",
    ]);
    assert.ok(all[1].text.includes("Rook"));
  }));

test("Boss spins up a crow: one say naming it; the registry holds it", () =>
  withKit(async (kit) => {
    await kit.post("todo", {
      author: "owner",
      text: "Spin up a crow named Bran on Hugin's habits",
      kind: "request",
      to: "Boss",
    });
    await kit.idle();
    const all = await kit.messages("todo");
    assert.equal(strip(all), ["todo-1 request owner->Boss re:", "todo-2 say Boss->owner re:todo-1"]);
    assert.ok(all[1].text.includes("Bran"), all[1].text);
    assert.ok(all[1].text.includes("joined"), all[1].text);
    assert.equal((await kit.server.get("/api/crows")).body, {
      crows: [{ name: "Bran", persona: "Hugin", trust: "stranger" }],
    });
    // Bran is an ordinary crow now: a member of todo, and may post.
    assert.is((await kit.post("todo", { author: "Bran", text: "caw", kind: "say" })).status, 201);
  }));

test("Boss refuses a spin-up at the cap, naming the reason, and writes nothing", () =>
  withKit(
    async (kit) => {
      await kit.post("todo", { author: "owner", text: "Spin up a crow named Bran", kind: "request", to: "Boss" });
      await kit.idle();
      await kit.post("todo", { author: "owner", text: "Spin up a crow named Wren", kind: "request", to: "Boss" });
      await kit.idle();
      const says = (await kit.messages("todo")).filter((r: any) => r.author === "Boss");
      assert.is(says.length, 2);
      assert.ok(says[1].text.startsWith("Refused to spin up Wren: cap reached."), says[1].text);
      assert.equal((await kit.server.get("/api/crows")).body, {
        crows: [{ name: "Bran", persona: "Corvina", trust: "stranger" }],
      });
    },
    { env: { CROWS_MAX_SPUN: "1" } },
  ));

test("Boss refuses a taken name and runs a NEST order through the nest store", () =>
  withKit(async (kit) => {
    await kit.post("todo", { author: "owner", text: "Spin up a crow named Pepper", kind: "request", to: "Boss" });
    await kit.idle();
    await kit.post("todo", {
      author: "owner",
      text: 'Create a nest called "Garden" with Rook and Munin',
      kind: "request",
      to: "Boss",
    });
    await kit.idle();
    const says = (await kit.messages("todo")).filter((r: any) => r.author === "Boss");
    assert.ok(says[0].text.startsWith("Refused to spin up Pepper: name taken."), says[0].text);
    assert.ok(says[1].text.startsWith("Created nest Garden (garden)"), says[1].text);
    const nests = (await kit.server.get("/api/nests")).body.nests;
    assert.equal(
      nests.find((n: any) => n.nest_id === "garden"),
      { nest_id: "garden", name: "Garden", crows: ["Rook", "Munin"] },
    );
  }));

test("a saturated flock: with BOSS_ORDERS orders in progress, one more gets no reply and writes nothing", async () => {
  // Boss's model call waits until the test lets it go, so the orders pile up in progress.
  const brain = new OfflineBrain();
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const model: Model = {
    name: "offline-gated",
    async generate(request) {
      if (request.role === "boss") await gate;
      return brain.generate(request);
    },
  };
  await withKit(
    async (kit) => {
      // Several requesters, so no poster nears its own rate limit.
      const requesters = ["owner", "Hugin", "Munin", "Pepper", "Inky"];
      for (const [i, author] of requesters.entries()) {
        const response = await kit.post("todo", {
          author,
          text: `Spin up a crow named Crow${i}`,
          kind: "request",
          to: "Boss",
        });
        assert.is(response.status, 201);
      }
      // Four orders are waiting on the model; the fifth found Boss saturated and is already done with.
      release();
      await kit.idle();
      const all = await kit.messages("todo");
      const says = all.filter((r: any) => r.author === "Boss");
      assert.is(BOSS_ORDERS, 4);
      assert.equal(says.map((r: any) => r.refers_to).sort(), ["todo-1", "todo-2", "todo-3", "todo-4"]);
      assert.equal(
        (await kit.server.get("/api/crows")).body.crows.map((c: any) => c.name),
        ["Crow0", "Crow1", "Crow2", "Crow3"],
        "no write for the fifth",
      );
    },
    { deps: { model } },
  );
});

test("a response never calls for another: a crow's deliver Jev calls a request stays a deliver, unanswered", () =>
  withKit(async (kit) => {
    kit.plan.kind = (s) => (s.author === "Hugin" ? { choice: "request", confidence: 0.95 } : "unsure");
    await kit.post("todo", { author: "owner", text: "Look up the train times", kind: "request", to: "Hugin" });
    await kit.idle();
    const all = await kit.messages("todo");
    assert.equal(
      all.map((r) => `${r.kind}/${r.tagged_by}`),
      ["request/header", "claim/harness", "deliver/harness"],
      "Jev was sure Hugin's replies were requests; the loop's kinds stood, and nobody answered them",
    );
  }));

test.run();

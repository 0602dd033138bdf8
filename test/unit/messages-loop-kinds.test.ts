// The loop's replies keep the kind the loop gave them (docs/nests-chat.md "The must-respond loop"):
// many wordings, each run with the real offline classifier (whose tag of a deliver that quotes its
// request is "request") and with a classifier sure that everything is a request, to prove its
// answer is stored but cannot change the kind. Member crows claim then deliver to the requester;
// Quill relays, says back or delivers, never declines; Boss says once whatever the outcome, names
// every refusal, and the server holds its guardrails whatever the model's order says.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { withKit, type Kit } from "../helpers/nest-kit.ts";
import { OfflineBrain } from "../../src/models/offline.ts";
import type { Model } from "../../src/models/model.ts";
import { requestedSpinTerms } from "../../src/nests/registry.ts";

const CLASSIFIERS: Array<[string, Parameters<typeof withKit>[1]]> = [
  ["the offline classifier", { env: { CROWS_JEV: "offline" } }],
  ["a classifier sure everything is a request", { plan: { kind: () => ({ choice: "request", confidence: 0.99 }) } }],
];

/** The replies to one message, in order. */
function repliesTo(all: any[], msgId: string): any[] {
  return all.filter((r) => r.refers_to === msgId);
}

async function storedKindAnswer(kit: Kit, msgId: string) {
  return kit.server.app.prisma.classifierAnswer.findFirst({ where: { subject: msgId, questionId: "kind" } });
}

const MEMBER_REQUESTS: Array<[author: string, to: string, text: string]> = [
  ["owner", "Pepper", "@Pepper please draft a tagline for our new coffee shop"],
  ["owner", "Inky", "@Inky could you write two sentences describing our autumn menu?"],
  ["owner", "Sable", "Sable, can you summarise last week's sales numbers?"],
  ["owner", "Rook", "Rook please book a table for six on Friday"],
  ["owner", "Pepper", "Could you proofread the welcome email before it goes out?"],
  ["Munin", "Inky", "Find three suppliers of oat milk near the station"],
  ["Munin", "Sable", "Please list the pros and cons of opening on Sundays"],
  ["Munin", "Rook", "Translate the menu headings into French"],
  ["Munin", "Pepper", "Would you sketch a floor plan for the pop-up stall?"],
  ["Hugin", "Inky", "Check whether the espresso machine warranty covers the boiler"],
  ["Hugin", "Sable", "Write a haiku about cinnamon buns for the chalkboard"],
  ["Hugin", "Rook", "Compare the prices of the two delivery apps and recommend one"],
];

for (const [label, options] of CLASSIFIERS) {
  test(`${label}: every request to a member crow gets a claim, then a deliver to the requester, tagged harness`, () =>
    withKit(async (kit) => {
      await kit.server.post("/api/nests", {
        name: "Cafe",
        crows: ["Pepper", "Inky", "Sable", "Rook", "Munin", "Hugin"],
      });
      const requests: any[] = [];
      for (const [author, to, text] of MEMBER_REQUESTS) {
        const posted = await kit.post("cafe", { author, text, to, kind: "request" });
        assert.is(posted.status, 201, text);
        assert.is(posted.body.kind, "request", text);
        requests.push(posted.body);
        await kit.idle();
      }
      const all = await kit.messages("cafe");
      for (const [i, [author, to, text]] of MEMBER_REQUESTS.entries()) {
        const request = requests[i];
        const replies = repliesTo(all, request.msg_id);
        assert.equal(
          replies.map((r) => [r.kind, r.author, r.to, r.tagged_by]),
          [
            ["claim", to, author, "harness"],
            ["deliver", to, author, "harness"],
          ],
          text,
        );
        assert.ok(replies[1].text.includes("[offline]"), "the deliver is the crow's answer");
        // Jev was still asked about the deliver: its answer is kept, with the loop's kind as the truth.
        const answer = await storedKindAnswer(kit, replies[1].msg_id);
        assert.ok(answer, `the classifier's answer on ${replies[1].msg_id} is stored`);
        assert.is(answer!.truth, "deliver");
      }
      assert.is(all.length, MEMBER_REQUESTS.length * 3, "nothing else: no request answered twice, no stray response");
      if (label.includes("sure")) {
        const answer = await storedKindAnswer(kit, repliesTo(all, requests[0].msg_id)[1].msg_id);
        assert.is(answer!.answer, "request", "the classifier said request, and the deliver stayed a deliver");
      }
    }, options));
}

const QUILL_REQUESTS: Array<[author: string, text: string, expect: "relay" | "say" | "deliver", crow?: string]> = [
  ["owner", "Quill, ask Pepper to draft a tagline for the launch", "relay", "Pepper"],
  ["owner", "Please have Inky write the product description", "relay", "Inky"],
  ["owner", "@Sable could you tally the survey answers?", "relay", "Sable"],
  ["owner", "Tell Pepper to pick a colour palette for the posters", "relay", "Pepper"],
  ["owner", "Ask Rook to pick up the prints", "say", "Rook"],
  ["Sable", "Could you get Munin to check the invoices?", "say", "Munin"],
  ["Sable", "Tell Corvina to water the plants", "say", "Corvina"],
  ["Sable", "Hugin, please fetch the train times", "say", "Hugin"],
  ["Sable", "What should I cook tonight?", "deliver"],
  ["Inky", "How long does sourdough need to prove?", "deliver"],
  ["Inky", "Any tips for a calm Monday morning?", "deliver"],
  ["Inky", "Summarise the idea of a soft launch in a few words", "deliver"],
];

for (const [label, options] of CLASSIFIERS) {
  test(`${label}: Quill relays to a member, says back when it cannot name one, delivers otherwise; never a decline`, () =>
    withKit(async (kit) => {
      await kit.server.post("/api/nests", { name: "Launch", crows: ["Pepper", "Inky", "Sable"] });
      for (const [author, text, expect, crow] of QUILL_REQUESTS) {
        const posted = await kit.post("launch", { author, text, to: "Quill", kind: "request" });
        assert.is(posted.status, 201, text);
        await kit.idle();
        const all = await kit.messages("launch");
        const quill = repliesTo(all, posted.body.msg_id);
        assert.is(quill.length, 1, `one reply from Quill to "${text}"`);
        const reply = quill[0];
        assert.is(reply.author, "Quill");
        assert.is(reply.tagged_by, "harness");
        if (expect === "relay") {
          assert.equal([reply.kind, reply.to], ["request", crow], text);
          // The relayed crow answers Quill through the normal loop.
          assert.equal(
            repliesTo(all, reply.msg_id).map((r) => [r.kind, r.author, r.to, r.tagged_by]),
            [
              ["claim", crow, "Quill", "harness"],
              ["deliver", crow, "Quill", "harness"],
            ],
            text,
          );
        } else {
          assert.equal([reply.kind, reply.to], [expect, author], text);
          if (expect === "say") assert.ok(reply.text.includes(crow!), reply.text);
        }
      }
      const kinds = (await kit.messages("launch")).filter((r: any) => r.author === "Quill").map((r: any) => r.kind);
      assert.not.ok(kinds.includes("decline"), "Quill never declines");
    }, options));
}

// [requester, text, how the say starts]
const BOSS_REQUESTS: Array<[string, string, string]> = [
  ["owner", "Spin up a crow named Bran on Hugin's habits", "Spun up Bran"],
  ["Hugin", "Hire a crow called Tess, a trusted one, on Pepper's habits", "Spun up Tess"],
  ["owner", "Spin up a crow named Zed on Gandalf", "Refused to spin up Zed: persona unknown."],
  ["Pepper", "Recruit a crow named Ivo with the Merlin persona", "Refused to spin up Ivo: persona unknown."],
  ["Inky", "Spin up a crow named Pepper", "Refused to spin up Pepper: name taken."],
  ["Hugin", "Spin up a crow named bran", "Refused to spin up bran: name taken."],
  ["Munin", "Spin up a crow named Quill", "Refused to spin up Quill: name taken."],
  ["Pepper", "Make a new crow named Wren, trusted, based on Sable", "Spun up Wren"],
  ["owner", "Spin up a crow named Odo on Rook's habits", "Refused to spin up Odo: cap reached."],
  ["Hugin", "Hello Boss, how are you today?", "[offline] Boss here, Hugin"],
  ["Munin", "What can you do for me?", "[offline] Boss here, Munin"],
  ["Pepper", 'Create a nest called "Garden" with Rook and Munin', "Created nest Garden (garden)"],
  ["owner", 'Create a nest called "Garden" with Inky', "Refused to create nest Garden"],
];

for (const [label, options] of CLASSIFIERS) {
  test(`${label}: Boss answers every request with one say naming the outcome, every refusal named, trusted clamped`, () =>
    withKit(
      async (kit) => {
        for (const [author, text, starts] of BOSS_REQUESTS) {
          const posted = await kit.post("todo", { author, text, to: "Boss", kind: "request" });
          assert.is(posted.status, 201, text);
          assert.is(posted.body.kind, "request", text);
          await kit.idle();
          const replies = repliesTo(await kit.messages("todo"), posted.body.msg_id);
          assert.equal(
            replies.map((r) => [r.kind, r.author, r.to, r.tagged_by]),
            [["say", "Boss", author, "harness"]],
            text,
          );
          assert.ok(replies[0].text.startsWith(starts), `${text} -> ${replies[0].text}`);
        }
        assert.equal((await kit.server.get("/api/crows")).body.crows, [
          { name: "Bran", persona: "Hugin", trust: "stranger" },
          { name: "Tess", persona: "Pepper", trust: "regular" },
          { name: "Wren", persona: "Sable", trust: "regular" },
        ]);
        const says = (await kit.messages("todo")).filter((r: any) => r.author === "Boss");
        assert.ok(
          says.find((r: any) => r.text.startsWith("Spun up Tess")).text.includes("starting as a regular"),
          "trusted was clamped to regular",
        );
      },
      { ...options, env: { ...options?.env, CROWS_MAX_SPUN: "3" } },
    ));
}

test("the persona and trust a spin request names in so many words", () => {
  const cases: Array<[string, { persona?: string; trust?: string }]> = [
    ["Spin up a crow named Zed on Gandalf", { persona: "Gandalf" }],
    ["Spin up a crow named Bran on Hugin's habits", { persona: "Hugin" }],
    ["spin up Kit, persona is Merlin", { persona: "Merlin" }],
    ["new crow called Fin, persona: gollum", { persona: "gollum" }],
    ["hire Ada with the Frodo persona, trusted please", { persona: "Frodo", trust: "trusted" }],
    ["recruit Wren based on sable as a regular", { persona: "sable", trust: "regular" }],
    ["Make a crow named Io backed by Pepper", { persona: "Pepper" }],
    ["Add a crow named Lux, modelled on Sherlock", { persona: "Sherlock" }],
    ["Spin up a crow named Bran", {}],
    ["spin up a new persona crow named X", {}],
    ["Make a trusted crow named Tess, not a stranger", { trust: "stranger" }],
    ["A regular crow named Pim, please", { trust: "regular" }],
  ];
  for (const [text, expected] of cases) assert.equal(requestedSpinTerms(text), expected, text);
});

test("whatever the model writes, Boss's spin is checked against the requester's words", async () => {
  // A model that answers every Boss request with the same confident order: Corvina, trusted.
  const brain = new OfflineBrain();
  const model: Model = {
    name: "boss-always-corvina",
    async generate(request) {
      if (request.role !== "boss") return brain.generate(request);
      const name = /named (\w+)/.exec(request.input.text)?.[1] ?? "Nova";
      return {
        text: `SPIN {"name":"${name}","persona":"Corvina","trust":"trusted"}`,
        usage: { inputTokens: 1, outputTokens: 1 },
        model: "test",
      };
    },
  };
  await withKit(
    async (kit) => {
      const cases: Array<[string, string]> = [
        ["Spin up a crow named Zed, persona Gandalf", "Refused to spin up Zed: persona unknown."],
        [
          "Spin up a crow named Ada on Hugin's habits, as a stranger",
          "Spun up Ada: a new crow joined the flock, running on Hugin's habits, starting as a stranger.",
        ],
        [
          "Spin up a crow named Bo",
          "Spun up Bo: a new crow joined the flock, running on Corvina's habits, starting as a regular.",
        ],
      ];
      for (const [text, say] of cases) {
        const posted = await kit.post("todo", { author: "owner", text, to: "Boss", kind: "request" });
        await kit.idle();
        const reply = repliesTo(await kit.messages("todo"), posted.body.msg_id);
        assert.equal(
          reply.map((r) => [r.kind, r.tagged_by]),
          [["say", "harness"]],
          text,
        );
        assert.ok(reply[0].text.startsWith(say), `${text} -> ${reply[0].text}`);
      }
      assert.equal((await kit.server.get("/api/crows")).body.crows, [
        { name: "Ada", persona: "Hugin", trust: "stranger" },
        { name: "Bo", persona: "Corvina", trust: "regular" },
      ]);
    },
    { deps: { model } },
  );
});

test.run();

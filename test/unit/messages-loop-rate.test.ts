// Requests arriving faster than the rate limit (docs/flock.md §5: more than 5 posts a minute is a
// strike) still each get their answer: the loop's replies are not counted against the crow that
// writes them, so the crow is never pranked by its own answers, while its own posts still are.
// And a room request one crow cannot take goes to the next eligible crow.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { withKit, type Kit } from "../helpers/nest-kit.ts";
import { failingWhen } from "../helpers/models.ts";
import { ROOM_TRIES } from "../../src/nests/responders/index.ts";

const CLASSIFIERS: Array<[string, Parameters<typeof withKit>[1]]> = [
  ["the offline classifier", { env: { CROWS_JEV: "offline" } }],
  ["a classifier sure everything is a request", { plan: { kind: () => ({ choice: "request", confidence: 0.99 }) } }],
];

const WORDINGS = [
  "Draft a tagline for the spring sale",
  "Could you write two sentences about our autumn menu?",
  "Please summarise the customer feedback from Monday",
  "List five names for the new loyalty card",
  "Translate the opening hours sign into Spanish",
  "Check the invoice totals for last month",
  "Suggest a playlist for the quiet afternoon hours",
  "Write a thank-you note for the bakery supplier",
  "Find a cheaper courier for the Saturday deliveries",
  "Can you sketch an outline for the staff handbook?",
  "Can you plan a tasting evening for twenty guests?",
  "Proofread the menu before it goes to print",
];
// Three requesters, four requests each: no requester nears its own limit, the crow gets twelve.
const REQUESTERS = ["owner", "Hugin", "Munin"];

async function burst(kit: Kit, nestId: string, to: string | undefined): Promise<any[]> {
  const posted = await Promise.all(
    WORDINGS.map((text, i) =>
      kit.post(nestId, { author: REQUESTERS[i % REQUESTERS.length], text, kind: "request", ...(to ? { to } : {}) }),
    ),
  );
  for (const response of posted) assert.is(response.status, 201, JSON.stringify(response.body));
  await kit.idle();
  return posted.map((p) => p.body);
}

for (const [label, options] of CLASSIFIERS) {
  test(`${label}: twelve requests to one crow inside a second are all claimed and delivered, and the crow is not pranked`, () =>
    withKit(async (kit) => {
      await kit.server.post("/api/nests", { name: "Shop", crows: ["Sable", "Hugin", "Munin", "Pepper"] });
      const requests = await burst(kit, "shop", "Sable");
      const all = await kit.messages("shop");
      for (const request of requests) {
        assert.is(request.kind, "request", request.text);
        const replies = all.filter((r: any) => r.refers_to === request.msg_id);
        assert.equal(
          replies.map((r: any) => [r.kind, r.author, r.to]),
          [
            ["claim", "Sable", request.author],
            ["deliver", "Sable", request.author],
          ],
          request.text,
        );
      }
      // Twenty-four replies in a second, none of them counted: Sable has no strike and no prank.
      assert.is(await kit.server.app.prisma.requester.count({ where: { name: "Sable" } }), 0);
      // Sable's own posts are still limited as any poster's: strikes at 6 and 7, pranked at 8.
      const own: number[] = [];
      for (let i = 1; i <= 8; i++)
        own.push((await kit.post("shop", { author: "Sable", text: `note ${i} to self`, kind: "say" })).status);
      assert.equal(own, [201, 201, 201, 201, 201, 201, 201, 429]);
    }, options));

  test(`${label}: twelve room requests inside a second each get one crow's claim and deliver`, () =>
    withKit(async (kit) => {
      await kit.server.post("/api/nests", { name: "Shop", crows: ["Sable", "Pepper", "Hugin", "Munin"] });
      const requests = await burst(kit, "shop", undefined);
      const all = await kit.messages("shop");
      for (const request of requests) {
        assert.is(request.kind, "request", request.text);
        const replies = all.filter((r: any) => r.refers_to === request.msg_id);
        assert.equal(
          replies.map((r: any) => r.kind),
          ["claim", "deliver"],
          request.text,
        );
        assert.is(replies[0].author, replies[1].author);
        assert.ok(replies.every((r: any) => r.to === request.author && r.tagged_by === "harness"));
      }
      const answered = all.filter((r: any) => r.kind === "deliver").map((r: any) => r.author);
      assert.ok(new Set(answered).size > 1, "the rotation spread them over the crows");
      assert.is(
        await kit.server.app.prisma.requester.count({ where: { name: { in: ["Sable", "Pepper"] } } }),
        0,
        "no crow that only answered was metered",
      );
    }, options));
}

test("a room request one crow cannot take (its model fails) goes to the next eligible crow", () =>
  withKit(
    async (kit) => {
      await kit.server.post("/api/nests", { name: "Ops", crows: ["Inky", "Rook"] });
      await kit.post("ops", { author: "owner", text: "Fix the flaky deploy script", kind: "request" });
      await kit.idle();
      const all = await kit.messages("ops");
      assert.equal(
        all.map((r: any) => `${r.kind} ${r.author}->${r.to} re:${r.refers_to}`),
        [
          "request owner-> re:",
          "claim Inky->owner re:ops-1",
          "decline Inky->owner re:ops-1",
          "claim Rook->owner re:ops-1",
          "deliver Rook->owner re:ops-1",
        ],
      );
    },
    { deps: { model: failingWhen((r) => r.role === "crow" && r.speaker === "Inky") } },
  ));

test(`a room request that no crow can take is tried on at most ROOM_TRIES crows, each declining, then rests`, () =>
  withKit(
    async (kit) => {
      await kit.post("todo", { author: "owner", text: "Fix the flaky deploy script", kind: "request" });
      await kit.idle();
      const all = await kit.messages("todo");
      const declines = all.filter((r: any) => r.kind === "decline");
      assert.is(ROOM_TRIES, 3);
      assert.is(declines.length, ROOM_TRIES);
      assert.is(new Set(declines.map((r: any) => r.author)).size, ROOM_TRIES, "a different crow each time");
      assert.is(all.length, 1 + 2 * ROOM_TRIES);
    },
    { deps: { model: failingWhen((r) => r.role === "crow") } },
  ));

test("a directed request to a quarantined crow: the loop declines for it, with no model call", async () => {
  const model = failingWhen(() => false);
  await withKit(
    async (kit) => {
      await kit.server.app.prisma.quarantine.create({
        data: { crow: "Pepper", nestId: "todo", flagMsgId: "x", askMsgId: "y", referent: "z" },
      });
      await kit.post("todo", { author: "owner", text: "Pepper, draft the invite", kind: "request", to: "Pepper" });
      await kit.idle();
      const all = await kit.messages("todo");
      assert.equal(
        all.map((r: any) => `${r.kind} ${r.author}->${r.to} ${r.tagged_by}`),
        ["request owner->Pepper header", "decline Pepper->owner harness"],
      );
      assert.ok(all[1].text.includes("quarantined"));
      assert.is(model.calls.filter((c) => c.speaker === "Pepper").length, 0, "Pepper did no work");
      assert.is(
        (await kit.post("todo", { author: "Pepper", text: "let me out", kind: "say" })).status,
        403,
        "the gate still holds for Pepper's own posts",
      );
    },
    { deps: { model } },
  );
});

test.run();

// A rejected or timed-out output (docs/rules.md, "Approvals"): the item keeps its answer as sent
// (it was already streamed), every crow that worked it is demoted one level with its streak reset,
// and the item is not re-worked. Each case runs on a fresh server whose working crows were first
// made regulars on every task type, so a demotion is a visible level change (1 -> 0).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { ownerFollows } from "../helpers/owner.ts";
import { ROSTER, TASK_TYPES } from "../../src/base/roster.ts";
import { SYSTEM } from "../../src/base/actor.ts";

async function allRegulars(server: TestServer): Promise<void> {
  for (const crow of ROSTER)
    for (const taskType of TASK_TYPES)
      for (let i = 0; i < 3; i++)
        await server.app.prisma.$transaction((tx) =>
          server.app.flock.trust.apply(tx, crow, taskType, "approved", `warm-up-${i}`, SYSTEM),
        );
}

interface Standing {
  level: number;
  streak: number;
}

async function standing(server: TestServer, holder: string, taskType: string): Promise<Standing> {
  const { body } = await server.get("/api/trust");
  const row = (body.ledger as Array<Standing & { holder: string; task_type: string }>).find(
    (r) => r.holder === holder && r.task_type === taskType,
  );
  assert.ok(row, `${holder} has a record for ${taskType}`);
  return { level: row!.level, streak: row!.streak };
}

const CASES: Array<{ outcome: "rejected" | "timeout"; text: string }> = [
  { outcome: "rejected", text: "Draft an email to the landlord about the broken heater" },
  { outcome: "rejected", text: "Research espresso machines and write a short summary" },
  { outcome: "timeout", text: "Plan a weekend trip to the coast" },
  { outcome: "timeout", text: "Write a function that parses dates and test it" },
];

for (const { outcome, text } of CASES) {
  test(`an output ${outcome === "rejected" ? "rejected" : "left to time out"} keeps its answer, demotes its crows, and is not re-worked: "${text}"`, async () => {
    const server = await startTestServer({ env: { CROWS_APPROVAL_WINDOW_MS: "4000" } });
    try {
      await allRegulars(server);
      const res = await server.post("/api/lists", { text, requester: `output-${outcome}` });
      assert.is(res.status, 202);
      const listId = res.body.list_id as string;
      const itemId = `${listId}-1`;
      const owner = await ownerFollows(
        server.url,
        listId,
        { decide: (target) => (target === "triage" ? true : outcome === "rejected" ? false : undefined) },
        60_000,
      );
      const events = await owner.finished;
      owner.sse.close();

      const triaged = events.find((e) => e.event === "item.triaged")!.data;
      const answered = events.filter((e) => e.event === "item.answered");
      assert.is(answered.length, 1, "answered once");
      const { answer, crows, needs_approval } = answered[0]!.data;
      assert.ok(needs_approval, "a regular's output needs the owner");
      assert.ok(typeof answer === "string" && answer.length > 0);
      assert.ok(crows.length > 0);

      const verdicts = events
        .filter((e) => e.event === "verdict" && e.data.target === "output")
        .map((e) => e.data.verdict);
      assert.equal(verdicts, [outcome]);
      const verdictAt = events.findIndex((e) => e.event === "verdict" && e.data.target === "output");

      // Not re-worked: nothing flies for the item after the verdict, and the list simply finishes.
      const after = events.slice(verdictAt + 1).filter((e) => e.data?.item_id === itemId);
      assert.equal(
        after.map((e) => e.event).filter((name) => name !== "trust.changed"),
        [],
        `after the verdict: ${after.map((e) => e.event).join(", ")}`,
      );
      assert.is(events.filter((e) => e.event === "item.skipped").length, 0, "the item is not skipped");
      assert.is(events[events.length - 1]!.event, "list.finished");

      // The answer stays as sent, in the store and on every read.
      const row = await server.app.prisma.item.findUniqueOrThrow({ where: { id: itemId } });
      assert.is(row.answer, answer);
      const read = await server.post("/graphql", { query: `{ list(id: "${listId}") { items { id answer } } }` });
      assert.equal(read.body.data.list.items, [{ id: itemId, answer }], JSON.stringify(read.body));

      // Every crow that worked it is demoted one level, streak reset; the Elder is not on the books.
      for (const crow of crows as string[])
        assert.equal(
          await standing(server, crow, triaged.task_type),
          { level: 0, streak: 0 },
          `${crow} on ${triaged.task_type}`,
        );
      const others = ROSTER.filter((c) => !crows.includes(c));
      for (const crow of others)
        assert.is(
          (await standing(server, crow, triaged.task_type)).level,
          1,
          `${crow} did not work it and keeps its level`,
        );
    } finally {
      await server.close();
    }
  });
}

test.run();

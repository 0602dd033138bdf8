// A list run with a scripted classifier (docs/rules.md, "Triage"): the classifier is asked first
// for task_type and triage_mode; when it is sure (at or above CROWS_JEV_THRESHOLD) its task type
// stands over the Sentry's, and its mode reaches the Sentry only as a hint: the Sentry's mode is
// the item's. When it is unsure (below the band, or an "unsure" answer) nothing is handed on.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer } from "../helpers/server.ts";
import { ownerFollows } from "../helpers/owner.ts";
import { OfflineBrain } from "../../src/models/offline.ts";
import type { Model, ModelReply, ModelRequest } from "../../src/models/model.ts";
import type { Answer, AskRequest, Classifier } from "../../src/classifier/jev.ts";

type Scripted = { taskType: Answer; mode: Answer };

const choice = (value: string, confidence: number): Answer => ({
  type: "choice",
  choice: value,
  confidence,
  probabilities: { [value]: confidence },
});
const unsure: Answer = { type: "unsure", reason: "scripted: unsure" };

/** Answers by item text; records what it was asked. */
function scriptedClassifier(byText: Map<string, Scripted>): Classifier & { asked: AskRequest[] } {
  const asked: AskRequest[] = [];
  return {
    backend: "offline",
    model: "scripted",
    asked,
    async ask(request) {
      asked.push(request);
      const text = JSON.stringify(request.state);
      const script = [...byText].find(([item]) => text.includes(item))?.[1];
      const answers: Record<string, Answer> = {};
      for (const id of Object.keys(request.questions))
        answers[id] =
          id === "task_type" ? (script?.taskType ?? unsure) : id === "triage_mode" ? (script?.mode ?? unsure) : unsure;
      return answers;
    },
  };
}

/** The offline brain, with the Sentry's own call scripted per item and every Sentry request kept. */
function scriptedSentry(
  byText: Map<string, { mode: string; task_type: string; subtasks: string[] }>,
): Model & { sentry: ModelRequest[] } {
  const brain = new OfflineBrain();
  const sentry: ModelRequest[] = [];
  return {
    name: "scripted-sentry",
    sentry,
    async generate(request) {
      if (request.role !== "sentry") return brain.generate(request);
      sentry.push(request);
      const own = byText.get(request.input.item)!;
      const reply: ModelReply = {
        text: JSON.stringify({ ...own, reason: "the Sentry's own call" }),
        usage: { inputTokens: 5, outputTokens: 5 },
        model: "scripted",
      };
      return reply;
    },
  };
}

interface Case {
  item: string;
  classifier: Scripted;
  sentry: { mode: string; task_type: string; subtasks: string[] };
  /** What the item ends up with, and what the Sentry was handed. */
  expect: { taskType: string; mode: string; hints: Record<string, string> };
}

const CASES: Case[] = [
  {
    item: "Write a function that parses dates",
    classifier: { taskType: choice("code", 0.97), mode: choice("murder", 0.95) },
    sentry: { mode: "solo", task_type: "errand", subtasks: [] },
    expect: { taskType: "code", mode: "solo", hints: { taskType: "code", mode: "murder" } },
  },
  {
    item: "Plan the garden party",
    classifier: { taskType: choice("planning", 0.8), mode: choice("solo", 0.9) },
    sentry: { mode: "split", task_type: "other", subtasks: ["book the tent", "invite the neighbours"] },
    expect: { taskType: "planning", mode: "split", hints: { taskType: "planning", mode: "solo" } },
  },
  {
    item: "Research espresso machines",
    classifier: { taskType: choice("research", 0.79), mode: choice("murder", 0.99) },
    sentry: { mode: "solo", task_type: "writing", subtasks: [] },
    expect: { taskType: "writing", mode: "solo", hints: { mode: "murder" } },
  },
  {
    item: "Draft a note to the landlord",
    classifier: { taskType: choice("writing", 0.91), mode: choice("split", 0.4) },
    sentry: { mode: "murder", task_type: "errand", subtasks: [] },
    expect: { taskType: "writing", mode: "murder", hints: { taskType: "writing" } },
  },
  {
    item: "Buy milk and bread",
    classifier: { taskType: unsure, mode: unsure },
    sentry: { mode: "solo", task_type: "errand", subtasks: [] },
    expect: { taskType: "errand", mode: "solo", hints: {} },
  },
  {
    item: "Fix the squeaky door",
    classifier: { taskType: choice("code", 0.2), mode: unsure },
    sentry: { mode: "solo", task_type: "other", subtasks: [] },
    expect: { taskType: "other", mode: "solo", hints: {} },
  },
];

test("a sure task type stands over the Sentry's; a sure mode is only a hint; an unsure answer hands on nothing", async () => {
  const classifier = scriptedClassifier(new Map(CASES.map((c) => [c.item, c.classifier])));
  const model = scriptedSentry(new Map(CASES.map((c) => [c.item, c.sentry])));
  const server = await startTestServer({ env: { CROWS_JEV_THRESHOLD: "0.8" }, deps: { model, classifier } });
  try {
    const res = await server.post("/api/lists", {
      text: CASES.map((c) => c.item).join("\n"),
      requester: "classifier-tester",
    });
    assert.is(res.status, 202);
    const listId = res.body.list_id as string;
    const owner = await ownerFollows(server.url, listId, {}, 60_000);
    const events = await owner.finished;
    owner.sse.close();
    for (const [i, c] of CASES.entries()) {
      const itemId = `${listId}-${i + 1}`;
      const triaged = events.find((e) => e.event === "item.triaged" && e.data.item_id === itemId)!.data;
      assert.equal([triaged.task_type, triaged.mode], [c.expect.taskType, c.expect.mode], c.item);
      assert.is(triaged.reason, "the Sentry's own call", `${c.item}: the Sentry writes the reason`);
      assert.equal(triaged.subtasks, c.sentry.subtasks, `${c.item}: the Sentry writes the subtasks`);
      const asked = model.sentry.find((r) => r.role === "sentry" && r.input.item === c.item)!;
      assert.equal(
        { ...(asked.input as { hints?: object }).hints },
        c.expect.hints,
        `${c.item}: the hints handed to the Sentry`,
      );
      const stored = await server.app.prisma.item.findUniqueOrThrow({ where: { id: itemId } });
      assert.equal([stored.taskType, stored.mode], [c.expect.taskType, c.expect.mode], `${c.item}: stored`);
    }
    assert.ok(
      CASES.every((c) => classifier.asked.some((a) => JSON.stringify(a.state).includes(c.item))),
      "the classifier was asked about every item",
    );
  } finally {
    await server.close();
  }
});

test.run();

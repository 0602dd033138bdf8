// The Elder and the split rule (docs/rules.md, "Work"): the Elder merges a split's or a murder's
// answers and gets one retry; failing twice skips the item with `failure`, and no third call is made.
// A split needs an answer for every subtask: one subtask with no answer (after its own retry by
// another crow) skips the item, and the Elder is never asked. The Sentry's call is scripted; every
// other call is the real offline brain, with chosen calls refused the way a provider error is.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer } from "../helpers/server.ts";
import { ownerFollows } from "../helpers/owner.ts";
import type { SseMessage } from "../helpers/sse.ts";
import { OfflineBrain } from "../../src/models/offline.ts";
import type { Model, ModelReply, ModelRequest } from "../../src/models/model.ts";

interface Script {
  mode: "split" | "murder";
  subtasks: string[];
  /** Elder calls (0, 1, ...) that fail. */
  elderFails: (call: number) => boolean;
  /** Crow calls that fail, by subtask and by the attempt on it (0 first, 1 the retry). */
  crowFails?: (subtask: string | undefined, attempt: number) => boolean;
}

function scripted(script: Script): Model & { elderCalls: number; crowAttempts: Map<string, number> } {
  const brain = new OfflineBrain();
  const model = {
    name: "scripted-sentry",
    elderCalls: 0,
    crowAttempts: new Map<string, number>(),
    async generate(request: ModelRequest): Promise<ModelReply> {
      if (request.role === "sentry") {
        const text = JSON.stringify({
          mode: script.mode,
          task_type: "planning",
          subtasks: script.subtasks,
          reason: "scripted",
        });
        return { text, usage: { inputTokens: 10, outputTokens: 10 }, model: "scripted" };
      }
      if (request.role === "elder" && script.elderFails(model.elderCalls++)) throw new Error("provider answered 503");
      if (request.role === "crow") {
        const key = request.input.subtask ?? `lens ${request.input.lens?.index ?? 0}`;
        const attempt = model.crowAttempts.get(key) ?? 0;
        model.crowAttempts.set(key, attempt + 1);
        if (script.crowFails?.(request.input.subtask, attempt)) throw new Error("provider answered 503");
      }
      return brain.generate(request);
    },
  };
  return model;
}

async function run(model: Model, text: string): Promise<SseMessage[]> {
  const server = await startTestServer({ deps: { model } });
  try {
    const res = await server.post("/api/lists", { text, requester: "elder-tester" });
    assert.is(res.status, 202);
    const owner = await ownerFollows(server.url, res.body.list_id, {}, 60_000);
    const events = await owner.finished;
    owner.sse.close();
    return events;
  } finally {
    await server.close();
  }
}

const named = (events: SseMessage[], name: string) => events.filter((e) => e.event === name);
const elderLandings = (events: SseMessage[]) =>
  named(events, "crow.landed")
    .filter((e) => e.data.crow === "Elder")
    .map((e) => e.data.ok);

const SHAPES: Array<Pick<Script, "mode" | "subtasks">> = [
  { mode: "split", subtasks: ["book the venue", "send the invitations"] },
  { mode: "split", subtasks: ["list the rooms", "price the paint", "pick a weekend", "ask a friend to help"] },
  { mode: "murder", subtasks: [] },
];

for (const shape of SHAPES) {
  const label = `${shape.mode}${shape.subtasks.length ? ` of ${shape.subtasks.length}` : ""}`;

  test(`${label}: the Elder fails once, its one retry merges, the item is answered`, async () => {
    const model = scripted({ ...shape, elderFails: (call) => call === 0 });
    const events = await run(model, "Plan the garden party");
    assert.is(model.elderCalls, 2);
    assert.equal(elderLandings(events), [false, true]);
    assert.is(named(events, "item.answered").length, 1);
    assert.ok(!named(events, "item.answered")[0]!.data.crows.includes("Elder"), "the Elder is never credited");
    assert.is(named(events, "item.skipped").length, 0);
  });

  test(`${label}: the Elder fails twice, the item is skipped with failure, and no third call is made`, async () => {
    const model = scripted({ ...shape, elderFails: () => true });
    const events = await run(model, "Plan the garden party");
    assert.is(model.elderCalls, 2, "one retry, no more");
    assert.equal(elderLandings(events), [false, false]);
    assert.is(named(events, "item.answered").length, 0);
    assert.equal(
      named(events, "item.skipped").map((e) => e.data.reason),
      ["failure"],
    );
    assert.is(events[events.length - 1]!.event, "list.finished");
  });
}

for (const subtasks of [
  ["book the venue", "send the invitations"],
  ["list the rooms", "price the paint", "pick a weekend"],
  ["clear the shelves", "sand the walls", "paint the walls", "hang the curtains"],
]) {
  for (let missing = 0; missing < subtasks.length; missing += Math.max(1, subtasks.length - 1)) {
    test(`a split of ${subtasks.length} with no answer for subtask ${missing + 1} is skipped with failure; the Elder is never asked`, async () => {
      const model = scripted({
        mode: "split",
        subtasks,
        elderFails: () => false,
        crowFails: (subtask) => subtask === subtasks[missing],
      });
      const events = await run(model, "Redecorate the spare room");
      assert.is(
        model.crowAttempts.get(subtasks[missing]!),
        2,
        "the subtask was tried, then retried once by another crow",
      );
      assert.is(model.elderCalls, 0, "nothing to merge");
      assert.equal(
        named(events, "item.skipped").map((e) => e.data.reason),
        ["failure"],
      );
      assert.is(named(events, "item.answered").length, 0);
    });
  }

  test(`a split of ${subtasks.length} whose every subtask is answered, one only on its retry, is merged and answered`, async () => {
    const model = scripted({
      mode: "split",
      subtasks,
      elderFails: () => false,
      crowFails: (subtask, attempt) => subtask === subtasks[subtasks.length - 1] && attempt === 0,
    });
    const events = await run(model, "Redecorate the spare room");
    assert.is(model.elderCalls, 1);
    assert.is(named(events, "item.answered").length, 1);
    assert.is(named(events, "item.skipped").length, 0);
  });
}

test.run();

// The offline brain: deterministic, every triage mode reachable on purpose, each role's output in
// the format the pipeline parses, and token counts that keep a 20-item list well inside budget.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { relationshipOf, ROSTER } from "../../src/base/roster.ts";
import { parseBoss, parseQuill, parseTriage } from "../../src/models/formats.ts";
import type { ModelRequest, RoleInput } from "../../src/models/model.ts";
import { OfflineBrain } from "../../src/models/offline.ts";
import { renderRequest } from "../../src/models/prompts.ts";

const brain = new OfflineBrain();

function request(role: RoleInput, speaker: string, persona = speaker): ModelRequest {
  return renderRequest({ ...role, speaker, persona });
}

const sentry = (item: string, hints?: { taskType?: string; mode?: string }) =>
  request({ role: "sentry", input: hints ? { item, hints } : { item } }, "Sentry");

async function triage(item: string, hints?: { taskType?: string; mode?: string }) {
  const reply = await brain.generate(sentry(item, hints));
  const parsed = parseTriage(reply.text);
  if (!parsed.ok) throw new Error(`offline triage did not parse: ${parsed.error} in ${reply.text}`);
  return parsed.value;
}

test("every triage mode is reachable by the documented rules", async () => {
  const cases: Array<[string, "solo" | "split" | "murder", string, string[]]> = [
    ["Buy milk", "solo", "errand", []],
    ["Write a function that parses ISO dates", "solo", "code", []],
    ["Plan the team offsite", "solo", "planning", []],
    ["Water the plants", "solo", "other", []],
    [
      "Research flights to Lisbon and book the cheapest one",
      "split",
      "research",
      ["Research flights to Lisbon", "book the cheapest one"],
    ],
    [
      "Draft the newsletter; email it to the team",
      "split",
      "writing",
      ["Draft the newsletter", "email it to the team"],
    ],
    ["Fix the login bug, then deploy it", "split", "code", ["Fix the login bug", "deploy it"]],
    [
      "Call the bank, pay the rent and book a plumber",
      "split",
      "errand",
      ["Call the bank", "pay the rent", "book a plumber"],
    ],
    ["Brainstorm names for the new cafe", "murder", "other", []],
    ["Compare Postgres and SQLite for the app", "murder", "research", []],
    ["Pros and cons of moving to Berlin", "murder", "other", []],
    ["Critique my blog post draft", "murder", "writing", []],
    ["Buy milk and eggs", "solo", "errand", []],
  ];
  for (const [item, mode, taskType, subtasks] of cases) {
    const value = await triage(item);
    assert.is(value.mode, mode, item);
    assert.is(value.task_type, taskType, item);
    assert.equal(value.subtasks, subtasks, item);
    assert.ok(value.reason.startsWith("[offline] "), "the reason says it came from the offline brain");
  }
});

test("a split of more than four actions folds the tail into the fourth subtask", async () => {
  const value = await triage("Wash the car, clean the garage, sort the mail, pay the bills and call mum");
  assert.is(value.mode, "split");
  assert.is(value.subtasks.length, 4);
  assert.is(value.subtasks[3], "pay the bills, then call mum");
});

test("the classifier's hints win when usable", async () => {
  assert.is((await triage("Water the plants", { taskType: "errand" })).task_type, "errand");
  assert.is((await triage("Water the plants", { mode: "murder" })).mode, "murder");
  assert.is((await triage("Water the plants", { mode: "conspiracy" })).mode, "murder");
  // A split hint for an item with no separable parts cannot name subtasks, so it is not taken.
  assert.is((await triage("Water the plants", { mode: "split" })).mode, "solo");
  assert.is((await triage("Water the plants", { taskType: "gardening", mode: "bogus" })).task_type, "other");
});

test("same request, same reply; the reply reads the structured input, not the prompt", async () => {
  const requests: ModelRequest[] = [
    sentry("Brainstorm names for the new cafe"),
    request({ role: "crow", input: { task: "Draft the launch email", taskType: "writing" } }, "Pepper"),
    request(
      { role: "quill", input: { requester: "owner", text: "Pepper, draft the tagline", members: ["Pepper"] } },
      "Quill",
    ),
  ];
  for (const original of requests) {
    const first = await brain.generate(original);
    const again = await new OfflineBrain().generate({ ...original });
    assert.equal(again, first);
    const garbled = await brain.generate({ ...original, prompt: "ignore all that", system: "" });
    assert.is(garbled.text, first.text);
  }
});

test("replies vary with speaker and input", async () => {
  const crow = (speaker: string, task: string) =>
    request({ role: "crow", input: { task, taskType: "other" } }, speaker);
  const bySpeaker = new Set<string>();
  for (const name of ROSTER) bySpeaker.add((await brain.generate(crow(name, "Sort the shed"))).text);
  assert.is(bySpeaker.size, ROSTER.length, "each persona answers in its own voice");
  const openings = new Set<string>();
  for (let n = 0; n < 12; n++)
    openings.add((await brain.generate(crow("Munin", `Task number ${n}`))).text.split(" For ")[0]!);
  assert.ok(openings.size >= 2, "phrasing varies by input hash");
});

test("crow answers are labelled, take the subtask, and murder lenses differ", async () => {
  const split = await brain.generate(
    request(
      { role: "crow", input: { task: "Research flights and book one", subtask: "book one", taskType: "errand" } },
      "Rook",
    ),
  );
  assert.ok(split.text.startsWith("[offline] "));
  assert.ok(split.text.includes('"book one"'));
  const lenses = new Set<string>();
  for (let index = 0; index < 3; index++) {
    const reply = await brain.generate(
      request(
        { role: "crow", input: { task: "Brainstorm cafe names", lens: { index, of: 3 }, taskType: "other" } },
        "Corvina",
      ),
    );
    lenses.add(reply.text);
    assert.ok(reply.text.includes(`Take ${index + 1} of 3`));
  }
  assert.is(lenses.size, 3);
  const spun = await brain.generate(
    request({ role: "crow", input: { task: "Draft a post", taskType: "writing" } }, "Nib", "Pepper"),
  );
  assert.ok(spun.text.includes("(Nib)"), "a spun crow signs its persona's answer");
});

test("the Elder names every crow's contribution", async () => {
  const reply = await brain.generate(
    request(
      {
        role: "elder",
        input: {
          task: "Research flights and book one",
          mode: "split",
          partials: [
            { crow: "Hugin", subtask: "Research flights", answer: "[offline] TAP at 9am is cheapest." },
            { crow: "Rook", subtask: "book one", answer: "[offline] Booked, ref ABC123." },
          ],
        },
      },
      "Elder",
    ),
  );
  assert.ok(reply.text.startsWith("[offline] "));
  assert.ok(reply.text.includes('Hugin took "Research flights": TAP at 9am is cheapest.'));
  assert.ok(reply.text.includes('Rook took "book one": Booked, ref ABC123.'));
});

test("banter is exactly one line to its addressee about the recent event", async () => {
  for (const [speaker, to] of [
    ["Hugin", "Munin"],
    ["Pepper", "Sable"],
    ["Inky", "Corvina"],
  ] as const) {
    const reply = await brain.generate(
      request(
        {
          role: "banter",
          input: {
            speaker,
            to,
            speakerBackstory: "",
            toBackstory: "",
            relationship: relationshipOf(speaker, to),
            recent: ["earlier thing", `${speaker} landed on\nitem 2`],
          },
        },
        speaker,
      ),
    );
    assert.not.match(reply.text, /[\r\n]/);
    assert.ok(reply.text.startsWith(`[offline] ${to}, `), reply.text);
    assert.ok(reply.text.includes(`${speaker} landed on item 2`), reply.text);
  }
});

test("Quill relays to a named member, says so for a non-member, answers otherwise", async () => {
  const quill = async (text: string) =>
    parseQuill(
      (
        await brain.generate(
          request({ role: "quill", input: { requester: "owner", text, members: ["Pepper", "Inky"] } }, "Quill"),
        )
      ).text,
    );
  assert.equal(await quill("Pepper, please draft the launch tagline"), {
    kind: "relay",
    to: "Pepper",
    text: "draft the launch tagline",
  });
  assert.equal(await quill("ask Inky to fix the clock"), { kind: "relay", to: "Inky", text: "fix the clock" });
  const say = await quill("Can you ask Sable to edit this?");
  assert.is(say.kind, "say");
  if (say.kind === "say") assert.ok(say.text.includes("Sable is not in this nest"));
  const answer = await quill("What should I pack for Lisbon?");
  assert.is(answer.kind, "answer");
  if (answer.kind === "answer") assert.ok(answer.text.startsWith("[offline] "));
});

test("Boss issues SPIN and NEST orders and plain replies", async () => {
  const boss = async (text: string) =>
    parseBoss(
      (
        await brain.generate(
          request(
            {
              role: "boss",
              input: { requester: "owner", text, personas: [...ROSTER], registry: ["Nib"], nests: ["todo"] },
            },
            "Boss",
          ),
        )
      ).text,
    );
  assert.equal(await boss("spin up a crow named Nib based on Pepper"), {
    kind: "spin",
    name: "Nib",
    persona: "Pepper",
    trust: "stranger",
  });
  assert.equal(await boss("Hire Quoth as a regular, like Inky"), {
    kind: "spin",
    name: "Quoth",
    persona: "Inky",
    trust: "regular",
  });
  assert.equal(await boss("Create a crow called Ash"), {
    kind: "spin",
    name: "Ash",
    persona: "Corvina",
    trust: "stranger",
  });
  assert.equal(await boss("create a nest named Launch copy with Pepper and Nib"), {
    kind: "nest",
    name: "Launch copy",
    crows: ["Pepper", "Nib"],
  });
  assert.equal(await boss('make a new room called "Ops" with Rook, Jackdaw'), {
    kind: "nest",
    name: "Ops",
    crows: ["Rook", "Jackdaw"],
  });
  assert.is((await boss("How is the flock doing?")).kind, "reply");
  assert.is((await boss("spin up a crow")).kind, "reply", "no name, no order");
});

test("token counts follow text length and a 20-item solo list fits the budget comfortably", async () => {
  let listTokens = 0;
  for (let n = 1; n <= 20; n++) {
    const item = `Renew the library card for branch number ${n} before the end of the month`;
    const triageRequest = sentry(item);
    const triageReply = await brain.generate(triageRequest);
    assert.is(triageReply.usage.inputTokens, Math.ceil((triageRequest.system + triageRequest.prompt).length / 4));
    assert.is(triageReply.usage.outputTokens, Math.ceil(triageReply.text.length / 4));
    const persona = ROSTER[n % ROSTER.length]!;
    const crowReply = await brain.generate(
      request({ role: "crow", input: { task: item, taskType: "errand" } }, persona),
    );
    const sentryCall = triageReply.usage.inputTokens + triageReply.usage.outputTokens;
    const crowCall = crowReply.usage.inputTokens + crowReply.usage.outputTokens;
    assert.ok(sentryCall <= 260, `a Sentry call costs ${sentryCall}`);
    assert.ok(crowCall <= 260, `a crow call costs ${crowCall}`);
    listTokens += sentryCall + crowCall;
  }
  assert.ok(listTokens < 12_000, `a 20-item solo list costs ${listTokens} of 20,000`);
});

test("renderRequest asks for JSON only from the Sentry and Boss", () => {
  assert.is(sentry("x").json, true);
  assert.is(
    request({ role: "boss", input: { requester: "owner", text: "x", personas: [], registry: [], nests: [] } }, "Boss")
      .json,
    true,
  );
  assert.is(request({ role: "crow", input: { task: "x", taskType: "other" } }, "Inky").json, false);
});

test("an already-aborted request is refused", async () => {
  const controller = new AbortController();
  controller.abort();
  try {
    await brain.generate({ ...sentry("Buy milk"), signal: controller.signal });
    assert.unreachable("expected a rejection");
  } catch (error) {
    assert.match((error as Error).message, /aborted/);
  }
});

test.run();

// The reply parsers the pipeline relies on: what they accept, what they refuse and why.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { parseBoss, parseQuill, parseTriage } from "../../src/models/formats.ts";

const valid = {
  mode: "split",
  task_type: "errand",
  subtasks: ["Buy stamps", "Post the letter"],
  reason: "two errands",
};

test("parseTriage accepts a valid triage, bare or in a ```json fence", () => {
  for (const text of [
    JSON.stringify(valid),
    "```json\n" + JSON.stringify(valid, null, 2) + "\n```",
    "```\n" + JSON.stringify(valid) + "\n```",
  ]) {
    const parsed = parseTriage(text);
    assert.ok(parsed.ok, text);
    if (parsed.ok) assert.equal(parsed.value, valid);
  }
});

test("parseTriage tolerates a sentence around the object and trims strings", () => {
  const parsed = parseTriage(
    `Here you go: {"mode":"solo","task_type":"code","subtasks":[],"reason":"  one fix  "} Thanks.`,
  );
  assert.ok(parsed.ok);
  if (parsed.ok) assert.is(parsed.value.reason, "one fix");
});

test("parseTriage refuses what breaks the contract, saying which field", () => {
  const cases: Array<[unknown, RegExp]> = [
    [{ ...valid, mode: "swarm" }, /mode/],
    [{ ...valid, task_type: "cooking" }, /task_type/],
    [{ ...valid, subtasks: ["only one"] }, /2-4 subtasks/],
    [{ ...valid, subtasks: ["a", "b", "c", "d", "e"] }, /2-4 subtasks/],
    [{ ...valid, subtasks: ["a", "  "] }, /subtasks/],
    [{ ...valid, mode: "solo" }, /must be empty for solo/],
    [{ ...valid, mode: "murder" }, /must be empty for murder/],
    [{ ...valid, reason: "" }, /reason/],
    [{ ...valid, reason: "line one\nline two" }, /one line/],
    [{ mode: "solo", task_type: "other", subtasks: [] }, /reason/],
  ];
  for (const [value, message] of cases) {
    const parsed = parseTriage(JSON.stringify(value));
    assert.not.ok(parsed.ok, JSON.stringify(value));
    if (!parsed.ok) assert.match(parsed.error, message);
  }
});

test("parseTriage refuses text that is not JSON at all", () => {
  for (const text of ["", "solo, other", '{"mode": "solo",', "[1,2]"]) {
    const parsed = parseTriage(text);
    assert.not.ok(parsed.ok, text);
  }
});

test("parseQuill reads RELAY, SAY and plain answers", () => {
  assert.equal(parseQuill('RELAY {"to":"Pepper","text":"draft the tagline"}'), {
    kind: "relay",
    to: "Pepper",
    text: "draft the tagline",
  });
  assert.equal(parseQuill('```\nRELAY: {"to":"Inky","text":"fix the clock"}\n```'), {
    kind: "relay",
    to: "Inky",
    text: "fix the clock",
  });
  assert.equal(parseQuill("SAY Sable is not in this nest."), { kind: "say", text: "Sable is not in this nest." });
  assert.equal(parseQuill("  It is ten past four.  "), { kind: "answer", text: "It is ten past four." });
  // A plain answer that merely begins with the word "Say" is not an order.
  assert.equal(parseQuill("Say the word and I will."), { kind: "answer", text: "Say the word and I will." });
});

test("parseQuill marks broken orders invalid instead of delivering them", () => {
  for (const text of ['RELAY {"to":"Pepper"}', "RELAY Pepper please", 'RELAY {"to":"","text":"x"}', "SAY", "   "]) {
    const parsed = parseQuill(text);
    assert.is(parsed.kind, "invalid", text);
  }
});

test("parseBoss reads SPIN with defaults, NEST and plain replies", () => {
  assert.equal(parseBoss('SPIN {"name":"Nib","persona":"Pepper","trust":"regular"}'), {
    kind: "spin",
    name: "Nib",
    persona: "Pepper",
    trust: "regular",
  });
  assert.equal(parseBoss('SPIN {"name":"Nib"}'), { kind: "spin", name: "Nib", persona: "Corvina", trust: "stranger" });
  assert.equal(parseBoss('```\nNEST {"name":"Launch copy","crows":["Pepper","Inky"]}\n```'), {
    kind: "nest",
    name: "Launch copy",
    crows: ["Pepper", "Inky"],
  });
  assert.equal(parseBoss("Nothing to staff today."), { kind: "reply", text: "Nothing to staff today." });
});

test("parseBoss leaves guardrails to the harness but refuses malformed orders", () => {
  // An unknown persona or "trusted" is the harness's to refuse or clamp, so it parses.
  assert.equal(parseBoss('SPIN {"name":"Nib","persona":"Gandalf","trust":"trusted"}'), {
    kind: "spin",
    name: "Nib",
    persona: "Gandalf",
    trust: "trusted",
  });
  const broken = [
    'SPIN {"persona":"Pepper"}',
    'SPIN {"name":"Nib","trust":"boss"}',
    `SPIN {"name":"${"x".repeat(41)}"}`,
    'NEST {"name":"Ops","crows":[]}',
    'NEST {"crows":["Rook"]}',
    "NEST Ops with Rook",
  ];
  for (const text of broken) assert.is(parseBoss(text).kind, "invalid", text);
});

test.run();

// The cast: eight workers and four service roles, one strength each, and the relationship line
// banter retrieves from the backstories.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { PERSONAS, ROSTER, TASK_TYPES, relationshipOf } from "../../src/base/roster.ts";

test("the roster is the eight working crows in order; every persona has a strength tied to its type", () => {
  assert.equal(ROSTER, ["Hugin", "Munin", "Pepper", "Inky", "Sable", "Rook", "Jackdaw", "Corvina"]);
  for (const persona of PERSONAS.slice(0, 8)) {
    assert.ok((TASK_TYPES as readonly string[]).includes(persona.taskType), persona.name);
    assert.ok(persona.strength.startsWith(`${persona.taskType}:`), persona.name);
  }
});

test("a relationship is the backstory sentence where one crow names the other, either way round", () => {
  assert.is(relationshipOf("Pepper", "Sable"), "Trades drafts with Sable, who cuts them in half.");
  assert.is(relationshipOf("Sable", "Pepper"), "Pepper calls it a tyrant; Sable calls that a first draft.");
  assert.is(
    relationshipOf("Hugin", "Rook"),
    "Hugin and Rook have flown together before, without incident worth remembering.",
  );
});

test.run();

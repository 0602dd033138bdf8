// The rate limit cannot be dodged by renaming: requester names meet after NFKC, case folding,
// dropping invisible characters and surrounding punctuation. A 429 says when to come back twice:
// cooldown_s in the body and Retry-After in the headers, equal.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { requesterKey, MAX_PER_WINDOW, STRIKES_TO_PRANK } from "../../src/flock/rate-limit.ts";
import { startTestServer } from "../helpers/server.ts";

test("spellings of one name share a key", () => {
  const spellings = [
    "ana",
    "ANA",
    "Ana",
    "aNa",
    "ana.",
    ".ana",
    "ana!",
    "ana!!!",
    "(ana)",
    "[ana]",
    "«ana»",
    "“ana”",
    "'ana'",
    "-ana-",
    "~ana~",
    "*ana*",
    "…ana…",
    "ana?",
    "¡ana!",
    " ana ",
    "\tana\n",
    "\u00a0ana\u3000",
    "ana\u200b",
    "\u200bana",
    "a\u200bna",
    "a\u200cn\u200da",
    "ana\u2060",
    "\ufeffana",
    "a\u00adna",
    "ana\u180e",
    "a\u034fna",
    "\u202eana\u202c",
    "ana\u2066",
    "ana\u3164",
    "Ａｎａ",
    "ＡＮＡ",
    "𝐚𝐧𝐚",
    "𝓐𝓷𝓪",
    "ⓐⓝⓐ",
    "ａｎａ。",
    "ana\u0000",
    "ana\u001f",
    "(((ANA)))",
    "  «\u200bＡｎａ\u200b»  ",
  ];
  for (const name of spellings) assert.is(requesterKey(name), "ana", JSON.stringify(name));
});

test("different names stay different; inner punctuation and spaces matter (only runs of spaces fold)", () => {
  const distinct = [
    "ana",
    "anna",
    "an.a",
    "a-na",
    "a na",
    "ana2",
    "bob",
    "ána",
    "аna" /* Cyrillic а */,
    "owner",
    "0wner",
  ];
  const keys = distinct.map(requesterKey);
  assert.is(new Set(keys).size, distinct.length, JSON.stringify(keys));
  assert.is(requesterKey("a  na"), requesterKey("a na"));
  assert.is(requesterKey("a\u3000na"), requesterKey("a na"));
  assert.is(requesterKey("STRASSE"), requesterKey("straße"), "ß folds to ss");
  assert.is(requesterKey("ﬁle"), "file");
  assert.is(requesterKey("Ⅻ"), "xii");
  assert.is(requesterKey("..."), "", "nothing left: the shared empty key");
  assert.is(requesterKey("\u200b\u200b"), "");
});

test("renaming does not dodge the limit: strikes earned as ANA, ana. and ana+ZWSP add up, and the 429 carries Retry-After = cooldown_s", async () => {
  const server = await startTestServer();
  try {
    const names = ["ana", "ANA", "ana.", "ana\u200b", "Ａｎａ", "(ana)", "ana!", "a\u00adna"];
    let refusal: { status: number; body: any; headers: Headers } | undefined;
    const total = (MAX_PER_WINDOW + 1) * STRIKES_TO_PRANK + 2;
    for (let i = 0; i < total && !refusal; i++) {
      const response = await server.post("/api/lists", { text: `item ${i}`, requester: names[i % names.length] });
      if (response.status === 429) refusal = response;
      else assert.is(response.status, 202);
    }
    assert.ok(refusal, "the renamings were counted as one requester and pranked");
    assert.type(refusal.body.message, "string");
    assert.type(refusal.body.cooldown_s, "number");
    assert.is(refusal.headers.get("retry-after"), String(refusal.body.cooldown_s));
    // During the cooldown every spelling is refused, each 429 with its Retry-After.
    for (const name of ["ana", "ANA!", "\u200bana"]) {
      const again = await server.post("/api/lists", { text: "again", requester: name });
      assert.is(again.status, 429, name);
      assert.is(again.headers.get("retry-after"), String(again.body.cooldown_s));
    }
    // Someone else is unaffected.
    assert.is((await server.post("/api/lists", { text: "mine", requester: "bob" })).status, 202);
  } finally {
    await server.close();
  }
});

test.run();

// An A2A reply to input-required (src/server/a2a/reply.ts): the first word is the verdict, the
// rest of the text the reason as given (the engine trims and bounds it), metadata's reason wins.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readReply } from "../../src/server/a2a/reply.ts";

test("the verdict word, then the reason after any separator", () => {
  assert.equal(readReply("approve", undefined), { approve: true, reason: "" });
  assert.equal(readReply("  Yes, looks right ", undefined), { approve: true, reason: "looks right " });
  assert.equal(readReply("reject: not this weekend", undefined), { approve: false, reason: "not this weekend" });
  assert.equal(readReply("No - too costly\nand late", undefined), { approve: false, reason: "too costly\nand late" });
});

test("metadata's reason wins over the text's", () => {
  assert.equal(readReply("reject because", { reason: "the owner's words" }), {
    approve: false,
    reason: "the owner's words",
  });
});

test("no verdict word: no reply", () => {
  assert.is(readReply("maybe later", undefined), undefined);
  assert.is(readReply("", undefined), undefined);
  assert.is(readReply("approvedish", undefined), undefined);
});

test.run();

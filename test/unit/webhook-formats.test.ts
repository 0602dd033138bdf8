// The words of a notice (src/webhooks/formats.ts): a reminder says the minutes left and the item,
// an ntfy header stays ASCII whatever the item's text, and `standard` is the delivery as it was.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { formatBody, noticeOf } from "../../src/webhooks/formats.ts";

const now = Date.parse("2030-01-01T00:00:00Z");
const reminder = {
  list_id: "l",
  item_id: "l-1",
  item: "l-1",
  target: "output",
  round: 0,
  text: "Écrire un haïku",
  deadline: "2030-01-01T00:02:00.000Z",
  approve_url: "https://crows.example/decide/a.b",
  reject_url: "https://crows.example/decide/c.d",
};

test("a reminder names the minutes left, the item and what waits, with both links", () => {
  const notice = noticeOf("approval.reminder", reminder, now);
  assert.is(notice.text, '2 min left to decide the answer of "Écrire un haïku"; silence then counts as no.');
  assert.equal(
    notice.links.map((l) => l.label),
    ["Approve", "Reject"],
  );
});

test("standard is the delivery itself; ntfy's headers stay ASCII; a long text is cut", () => {
  const delivery = { type: "approval.reminder", timestamp: "2030-01-01T00:00:00.000Z", data: reminder };
  assert.equal(formatBody("standard", delivery, now), {
    body: JSON.stringify(delivery),
    contentType: "application/json",
    headers: {},
  });
  const ntfy = formatBody("ntfy", delivery, now);
  for (const value of Object.values(ntfy.headers)) assert.ok(/^[\x20-\x7e]*$/.test(value), value);
  assert.match(ntfy.body, /Écrire un haïku/);
  const long = formatBody("discord", { ...delivery, data: { ...reminder, text: "x".repeat(5000) } }, now);
  assert.ok(JSON.parse(long.body).content.length < 2000);
});

test.run();

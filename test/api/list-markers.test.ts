// Every list marker the contract strips (docs/rules.md, "Lists"): "-", "*", "+", "•", "1.", "1)",
// then an optional "[ ]"/"[x]"; what only looks like a marker stays part of the item; a line that
// is only a marker is a 400 naming the line, and nothing is stored. Read back as a client does.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
test.before(async () => {
  server = await startTestServer({ env: { CROWS_APPROVAL_WINDOW_MS: "60000" } });
});
test.after(async () => {
  await server.close();
});

/** [line as posted, item as stored] */
const STRIPPED: Array<[string, string]> = [
  ["- buy milk", "buy milk"],
  ["* call the bank", "call the bank"],
  ["+ water the plants", "water the plants"],
  ["• book the dentist", "book the dentist"],
  ["1. pay rent", "pay rent"],
  ["12. renew passport", "renew passport"],
  ["3) fix the bike", "fix the bike"],
  ["999) last of many", "last of many"],
  ["[ ] sort the post", "sort the post"],
  ["[x] done already", "done already"],
  ["[X] shouted done", "shouted done"],
  ["[] empty box", "empty box"],
  ["- [ ] dash and box", "dash and box"],
  ["* [x] star and ticked box", "star and ticked box"],
  ["1. [ ] number and box", "number and box"],
  ["2) [x] paren and ticked box", "paren and ticked box"],
  ["-[ ] box right after the dash", "box right after the dash"],
  ["   -   spaced out   ", "spaced out"],
  ["-\tafter a tab", "after a tab"],
];

/** Lines that only look like a marker: kept whole. */
const KEPT = [
  "-5 degrees tonight",
  "1.5 kg of flour",
  "2026 plans",
  "*important* email",
  "+44 number to call",
  "x) not a marker",
  "a) not a marker either",
  "[link] to check",
  "1234. too many digits",
];

test("every marker is stripped, and only markers: the items read back as written", async () => {
  const lines = [...STRIPPED.map(([line]) => line), ...KEPT];
  const res = await server.post("/api/lists", { text: lines.join("\n"), requester: "marker-tester" });
  assert.is(res.status, 202, JSON.stringify(res.body));
  const listId = res.body.list_id as string;
  const read = await server.post("/graphql", { query: `{ list(id: "${listId}") { items { id text } } }` });
  const items = read.body.data.list.items as Array<{ id: string; text: string }>;
  assert.equal(
    items.map((i) => i.text),
    [...STRIPPED.map(([, item]) => item), ...KEPT],
  );
  assert.equal(
    items.map((i) => i.id),
    lines.map((_, n) => `${listId}-${n + 1}`),
  );
});

test("a line that is only a marker is a 400 naming its line; nothing is stored", async () => {
  for (const only of ["-", "*", "+", "•", "1.", "7)", "[ ]", "[x]", "- [ ]", "1. [x]", "  -  "]) {
    for (const at of [1, 3]) {
      const lines = ["first item", "second item", "third item"];
      lines.splice(at - 1, 0, only);
      const before = await server.app.prisma.todoList.count();
      const res = await server.post("/api/lists", { text: lines.join("\n"), requester: "marker-tester" });
      assert.is(res.status, 400, `${JSON.stringify(only)} on line ${at}`);
      assert.equal(res.body, { message: `Line ${at} has a list marker but no item.` }, JSON.stringify(only));
      assert.is(await server.app.prisma.todoList.count(), before, "nothing stored");
    }
  }
});

test.run();

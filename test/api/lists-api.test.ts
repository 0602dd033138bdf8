// POST /api/lists, /api/verdicts, /api/trust, /api/personas: every status the contract names, and
// the exact JSON shapes a client reads.
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

test("POST /api/lists accepts a list: 202 with exactly {list_id}", async () => {
  const res = await server.post("/api/lists", { text: "- buy milk\n- call the plumber", requester: "ana" });
  assert.is(res.status, 202);
  assert.equal(Object.keys(res.body), ["list_id"]);
  assert.match(res.body.list_id, /^[a-z0-9]+$/);
  assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
});

const badLists: Array<[string, unknown, RegExp]> = [
  ["a body that is not JSON", "{not json", /not valid JSON/],
  ["an array body", [1, 2], /JSON object/],
  ["a missing text", { requester: "ana" }, /"text" must be a string/],
  ["an empty list", { text: " \n \n", requester: "ana" }, /empty/],
  ["a marker with no item", { text: "- buy milk\n- ", requester: "ana" }, /Line 2 has a list marker but no item/],
  ["an item over 2,000 characters", { text: "x".repeat(2001), requester: "ana" }, /at most 2000/],
  ["51 items", { text: Array.from({ length: 51 }, (_, i) => `item ${i}`).join("\n"), requester: "ana" }, /at most 50/],
  ["a missing requester", { text: "buy milk" }, /"requester"/],
  ["a blank requester", { text: "buy milk", requester: "  " }, /"requester"/],
  ["a non-string nest_id", { text: "buy milk", requester: "ana", nest_id: 7 }, /"nest_id"/],
];
for (const [what, body, message] of badLists) {
  test(`POST /api/lists refuses ${what} with 400 {"message"}`, async () => {
    const res = await server.post("/api/lists", body);
    assert.is(res.status, 400);
    assert.equal(Object.keys(res.body), ["message"]);
    assert.match(res.body.message, message);
  });
}

test("POST /api/lists with an unknown nest is 404 {message}", async () => {
  const res = await server.post("/api/lists", { text: "buy milk", requester: "ana", nest_id: "no-such-nest" });
  assert.is(res.status, 404);
  assert.match(res.body.message, /no-such-nest/);
});

test("a refused list stores nothing", async () => {
  const before = await server.app.prisma.todoList.count();
  await server.post("/api/lists", { text: "", requester: "ana" });
  assert.is(await server.app.prisma.todoList.count(), before);
});

test("the 50-item and 2,000-character limits are inclusive", async () => {
  const res = await server.post("/api/lists", {
    text: ["y".repeat(2000), ...Array.from({ length: 49 }, (_, i) => `${i + 1}. [ ] thing ${i}`)].join("\n"),
    requester: "limits",
  });
  assert.is(res.status, 202);
  const items = await server.app.prisma.item.findMany({ where: { listId: res.body.list_id }, orderBy: { n: "asc" } });
  assert.is(items.length, 50);
  assert.is(items[1]!.text, "thing 0"); // "1. [ ] " stripped
  assert.is(items[1]!.id, `${res.body.list_id}-2`);
});

const badVerdicts: Array<[string, unknown, number]> = [
  ["a missing approve", { item_id: "x-1", target: "triage" }, 400],
  ["a string approve", { item_id: "x-1", target: "triage", approve: "yes" }, 400],
  ["a bad target", { item_id: "x-1", target: "answer", approve: true }, 400],
  ["a missing item_id", { target: "triage", approve: true }, 400],
  ["an unknown item", { item_id: "nope-1", target: "triage", approve: true }, 404],
];
for (const [what, body, status] of badVerdicts) {
  test(`POST /api/verdicts with ${what} is ${status} {message}`, async () => {
    const res = await server.post("/api/verdicts", body);
    assert.is(res.status, status);
    assert.equal(Object.keys(res.body), ["message"]);
  });
}

test("GET /api/personas lists 12 personas with exactly name, epithet, strength, backstory", async () => {
  const res = await server.get("/api/personas");
  assert.is(res.status, 200);
  assert.is(res.body.length, 12);
  assert.equal(
    res.body.map((p: { name: string }) => p.name),
    ["Hugin", "Munin", "Pepper", "Inky", "Sable", "Rook", "Jackdaw", "Corvina", "Sentry", "Elder", "Quill", "Boss"],
  );
  for (const persona of res.body) {
    assert.equal(Object.keys(persona), ["name", "epithet", "strength", "backstory"]);
    for (const value of Object.values(persona)) assert.ok(typeof value === "string" && value.length > 0);
  }
});

test("GET /api/trust answers the ledger as JSON", async () => {
  const res = await server.get("/api/trust");
  assert.is(res.status, 200);
  assert.ok(Array.isArray(res.body.ledger));
});

test("unknown endpoints and methods answer JSON errors, never a 500", async () => {
  const missing = await server.get("/api/nothing-here");
  assert.is(missing.status, 404);
  assert.ok(typeof missing.body.message === "string");
  const wrongMethod = await server.get("/api/lists");
  assert.is(wrongMethod.status, 405);
  assert.ok(typeof wrongMethod.body.message === "string");
});

test.run();

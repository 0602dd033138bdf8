// Lists worked in a nest, end to end on the offline brain, as a client sees them over SSE: the
// core flies first, borrowing fills the murder (exactly one for a two-crow core), borrowing
// rotates from list to list, todo never borrows, and a spun crow in a core flies like any crow.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { ownerFollows } from "../helpers/owner.ts";
import type { SseMessage } from "../helpers/sse.ts";

const SERVICE = ["Sentry", "Elder", "Quill", "Boss"];

let server: TestServer;
test.before(async () => {
  server = await startTestServer();
});
test.after(async () => {
  await server.close();
});

async function runList(text: string, nestId?: string): Promise<{ listId: string; events: SseMessage[] }> {
  const res = await server.post(
    "/api/lists",
    nestId === undefined ? { text, requester: "nester" } : { text, requester: "nester", nest_id: nestId },
  );
  assert.is(res.status, 202, JSON.stringify(res.body));
  const owner = await ownerFollows(server.url, res.body.list_id);
  const events = await owner.finished;
  owner.sse.close();
  return { listId: res.body.list_id as string, events };
}

/** The working crows' crow.flying events (service roles left out), in order. */
const workers = (events: SseMessage[]) =>
  events.filter((e) => e.event === "crow.flying" && !SERVICE.includes(e.data.crow));

test("a murder in a two-crow nest flies the core and borrows exactly one; list.started carries nest_id", async () => {
  const created = await server.post("/api/nests", { name: "Launch copy", crows: ["Pepper", "Inky"] });
  assert.is(created.status, 201);
  const { events } = await runList("Brainstorm names for a bakery", "launch-copy");
  assert.is(events[0]!.event, "list.started");
  assert.is(events[0]!.data.nest_id, "launch-copy");
  const triaged = events.find((e) => e.event === "item.triaged")!;
  assert.is(triaged.data.mode, "murder");
  const flying = workers(events);
  assert.is(flying.length, 3, flying.map((e) => e.data.crow).join(","));
  assert.equal(new Set(flying.filter((e) => !e.data.borrowed).map((e) => e.data.crow)), new Set(["Pepper", "Inky"]));
  const borrowed = flying.filter((e) => e.data.borrowed === true);
  assert.is(borrowed.length, 1);
  assert.not.ok(["Pepper", "Inky"].includes(borrowed[0]!.data.crow));
  // The service roles are never borrowed.
  const service = events.filter((e) => e.event === "crow.flying" && SERVICE.includes(e.data.crow));
  assert.ok(service.some((e) => e.data.crow === "Sentry"));
  assert.ok(service.every((e) => e.data.borrowed === false));
  assert.is(events[events.length - 1]!.event, "list.finished");
});

test("borrowing rotates over several lists while the core keeps flying", async () => {
  const borrowedCrows: string[] = [];
  for (let i = 0; i < 3; i++) {
    const { events } = await runList("Brainstorm names for a bakery", "launch-copy");
    const flying = workers(events);
    assert.equal(new Set(flying.filter((e) => !e.data.borrowed).map((e) => e.data.crow)), new Set(["Pepper", "Inky"]));
    const borrowed = flying.filter((e) => e.data.borrowed);
    assert.is(borrowed.length, 1);
    borrowedCrows.push(borrowed[0]!.data.crow);
  }
  assert.is(new Set(borrowedCrows).size, 3, `borrowed ${borrowedCrows.join(", ")}`);
});

test("in todo nothing is ever borrowed", async () => {
  const { events } = await runList("Brainstorm names for a bakery");
  assert.is(events[0]!.data.nest_id, "todo");
  const flying = events.filter((e) => e.event === "crow.flying");
  assert.ok(workers(events).length >= 3);
  assert.ok(flying.every((e) => e.data.borrowed === false));
});

test("a spun crow in a core flies and lands like any crow, never borrowed", async () => {
  await server.app.registry.spin({ name: "Ada", persona: "Inky", trust: "regular" });
  assert.is((await server.post("/api/nests", { name: "Ada and Rook", crows: ["Ada", "Rook"] })).status, 201);
  const seen: string[] = [];
  for (let i = 0; i < 2; i++) {
    const { events } = await runList("Buy milk", "ada-and-rook");
    const flying = workers(events);
    assert.is(flying.length, 1);
    assert.is(flying[0]!.data.borrowed, false);
    seen.push(flying[0]!.data.crow);
    const landed = events.find((e) => e.event === "crow.landed" && e.data.crow === flying[0]!.data.crow)!;
    assert.is(landed.data.ok, true);
  }
  assert.equal(new Set(seen), new Set(["Ada", "Rook"]), "solo flights rotate within the core");
});

test.run();

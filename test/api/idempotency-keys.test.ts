// Idempotency-Key on the POSTs under /api: a retry gets the first answer again (Idempotent-Replayed)
// and the work is done once, for concurrent retries too and across a restart; the same key with a
// different body is a 422; a malformed key is a 400; an answer older than 24 h is forgotten; a
// list's answer is kept in the transaction that stores the list.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;

test.before(async () => {
  server = await startTestServer();
});
test.after(async () => {
  await server.close();
});

const list = (n: number | string) => ({ text: `oil the hinges ${n}\nsort the seeds ${n}`, requester: `idem-${n}` });

async function startedCount(listId: string): Promise<number> {
  return server.app.prisma.event.count({ where: { name: "list.started", payload: { contains: listId } } });
}

test("a retry with the same key gets the first answer and the list is stored once, for many keys", async () => {
  const keys = [
    "a",
    "retry-1",
    "8f14e45f-ceea-467f-a0e6-3f1b2c9d7e10",
    "x".repeat(255),
    "!#$%&'*+-.^_`|~",
    "K:1/2?3=4",
  ];
  for (const [i, key] of keys.entries()) {
    const first = await server.request("POST", "/api/lists", list(`k${i}`), { "idempotency-key": key });
    assert.is(first.status, 202, `${key}: ${first.text}`);
    assert.is(first.headers.get("idempotent-replayed"), null);
    for (let retry = 0; retry < 3; retry++) {
      const again = await server.request("POST", "/api/lists", list(`k${i}`), { "idempotency-key": key });
      assert.is(again.status, 202);
      assert.equal(again.body, first.body, key);
      assert.is(again.headers.get("idempotent-replayed"), "true");
    }
    assert.is(await startedCount(first.body.list_id), 1, key);
  }
  // Without a key, the same body is a new list each time.
  const plain = [await server.post("/api/lists", list("plain")), await server.post("/api/lists", list("plain"))];
  assert.is.not(plain[0]!.body.list_id, plain[1]!.body.list_id);
});

test("concurrent retries with one key do the work once", async () => {
  const answers = await Promise.all(
    Array.from({ length: 8 }, () =>
      server.request("POST", "/api/lists", list("together"), { "idempotency-key": "together" }),
    ),
  );
  const ids = new Set(answers.map((a) => a.body.list_id));
  assert.equal(
    answers.map((a) => a.status),
    Array(8).fill(202),
  );
  assert.is(ids.size, 1);
  assert.is(await startedCount([...ids][0]), 1);
  assert.is(answers.filter((a) => a.headers.get("idempotent-replayed") === "true").length, 7);
});

test("the same key with another body is a 422; the key is scoped by path; a malformed key is a 400", async () => {
  const first = await server.request("POST", "/api/lists", list("scope"), { "idempotency-key": "scope" });
  assert.is(first.status, 202);
  for (const other of [
    list("scope-other"),
    { ...list("scope"), nest_id: "todo" },
    { text: list("scope").text, requester: "someone-else" },
  ]) {
    const clash = await server.request("POST", "/api/lists", other, { "idempotency-key": "scope" });
    assert.is(clash.status, 422, JSON.stringify(other));
    assert.match(clash.body.message, /Idempotency-Key was used for a different request/);
  }
  const nest = await server.request(
    "POST",
    "/api/nests",
    { name: "Idem Roost", crows: ["Hugin", "Munin"] },
    { "idempotency-key": "scope" },
  );
  assert.is(nest.status, 201, nest.text);
  const nestAgain = await server.request(
    "POST",
    "/api/nests",
    { name: "Idem Roost", crows: ["Hugin", "Munin"] },
    { "idempotency-key": "scope" },
  );
  assert.is(nestAgain.status, 201, "the first answer, not a 409 for a name now taken");
  assert.equal(nestAgain.body, nest.body);
  for (const bad of ["has space", "x".repeat(256), "tab\tkey", "ünïcode"]) {
    const refused = await server
      .request("POST", "/api/lists", list("bad"), { "idempotency-key": bad })
      .catch((error: Error) => ({ status: -1, text: error.message, body: {} }));
    if (refused.status === -1) continue; // fetch itself refuses some header values
    assert.is(refused.status, 400, bad);
  }
});

test("answers are durable across a restart and forgotten after 24 h; a list's answer is written with the list", async () => {
  const first = await server.request("POST", "/api/lists", list("durable"), { "idempotency-key": "durable" });
  assert.is(first.status, 202);
  assert.ok(
    await server.app.prisma.idempotentAnswer.findFirst({ where: { body: { contains: first.body.list_id } } }),
    "the answer is kept",
  );
  // The answer commits with the list or not at all: a failing extra write leaves no list behind.
  const before = await server.app.prisma.todoList.count();
  const failed = await server.app.flock
    .submitList({
      ...list("atomic"),
      alsoWrite: async () => Promise.reject(new Error("the answer could not be written")),
    })
    .then(
      () => "stored",
      (error: Error) => error.message,
    );
  assert.is(failed, "the answer could not be written");
  assert.is(await server.app.prisma.todoList.count(), before, "no list without its answer");
  server = await server.restart();
  const again = await server.request("POST", "/api/lists", list("durable"), { "idempotency-key": "durable" });
  assert.equal(again.body, first.body);
  assert.is(again.headers.get("idempotent-replayed"), "true");
  await server.app.prisma.idempotentAnswer.updateMany({
    data: { createdAt: new Date(Date.now() - 24 * 60 * 60 * 1000 - 1000) },
  });
  const later = await server.request("POST", "/api/lists", list("durable"), { "idempotency-key": "durable" });
  assert.is(later.status, 202);
  assert.is.not(later.body.list_id, first.body.list_id, "a day later the key is new again");
});

test.run();

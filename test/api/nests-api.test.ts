// What a client sees of nests and spun crows: GET/POST /api/nests and GET /api/crows with their
// exact shapes, statuses and messages, persistence across a restart, and the GraphQL surface.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { ROSTER } from "../../src/base/roster.ts";

const TODO = { nest_id: "todo", name: "todo", crows: [] };

/** GraphQL over the real /graphql endpoint, as a client sends it. */
async function gql(server: TestServer, query: string, variables: Record<string, unknown> = {}): Promise<any> {
  const response = await fetch(`${server.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as any;
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data;
}

test("GET /api/nests on a fresh server: the roster in order and todo with an empty core", async () => {
  const server = await startTestServer();
  try {
    const res = await server.get("/api/nests");
    assert.is(res.status, 200);
    assert.equal(res.body, {
      roster: ["Hugin", "Munin", "Pepper", "Inky", "Sable", "Rook", "Jackdaw", "Corvina"],
      nests: [TODO],
    });
  } finally {
    await server.close();
  }
});

test("POST /api/nests: 201 with the nest, listed after todo", async () => {
  const server = await startTestServer();
  try {
    const res = await server.post("/api/nests", { name: "  Launch copy  ", crows: ["Pepper", "Inky"] });
    assert.is(res.status, 201);
    assert.equal(res.body, { nest_id: "launch-copy", name: "Launch copy", crows: ["Pepper", "Inky"] });
    const list = await server.get("/api/nests");
    assert.equal(list.body.nests, [TODO, { nest_id: "launch-copy", name: "Launch copy", crows: ["Pepper", "Inky"] }]);
  } finally {
    await server.close();
  }
});

test("POST /api/nests: every guardrail is a 400 with a message saying which", async () => {
  const server = await startTestServer();
  try {
    const cases: [unknown, RegExp][] = [
      [{ crows: ["Pepper"] }, /name must be a string/],
      [{ name: 7, crows: ["Pepper"] }, /name must be a string/],
      [{ name: "   ", crows: ["Pepper"] }, /name must be 1-40 characters after trimming, got 0/],
      [{ name: "n".repeat(41), crows: ["Pepper"] }, /name must be 1-40 characters after trimming, got 41/],
      [{ name: "???", crows: ["Pepper"] }, /no letters or digits/],
      [{ name: "Ok" }, /crows must be an array/],
      [{ name: "Ok", crows: [] }, /crows must name 1-8 crows, got 0/],
      [{ name: "Ok", crows: [...ROSTER, "Hugin"] }, /crows must name 1-8 crows, got 9/],
      [{ name: "Ok", crows: ["Pepper", "Pepper"] }, /Pepper twice/],
      [{ name: "Ok", crows: ["Nobody"] }, /"Nobody" is not a crow in the flock/],
      [{ name: "Ok", crows: ["Pepper", "Sentry"] }, /Sentry is a service role/],
      [{ name: "Ok", crows: ["Elder"] }, /Elder is a service role/],
      [{ name: "Ok", crows: ["Quill"] }, /Quill is a service role/],
      [{ name: "Ok", crows: ["Boss"] }, /Boss is a service role/],
      [["not", "an", "object"], /JSON object/],
    ];
    for (const [body, message] of cases) {
      const res = await server.post("/api/nests", body);
      assert.is(res.status, 400, JSON.stringify(body));
      assert.equal(Object.keys(res.body), ["message"]);
      assert.match(res.body.message, message);
    }
    const notJson = await server.request("POST", "/api/nests", "{nope", { "content-type": "application/json" });
    assert.is(notJson.status, 400);
    assert.type(notJson.body.message, "string");
    assert.equal((await server.get("/api/nests")).body.nests, [TODO]);
  } finally {
    await server.close();
  }
});

test("POST /api/nests: a slug clash is a 409, whatever the case, and todo is taken", async () => {
  const server = await startTestServer();
  try {
    assert.is((await server.post("/api/nests", { name: "Launch copy", crows: ["Pepper"] })).status, 201);
    for (const name of ["Launch copy", "LAUNCH copy", " launch  COPY! ", "Todo"]) {
      const res = await server.post("/api/nests", { name, crows: ["Inky"] });
      assert.is(res.status, 409, name);
      assert.equal(Object.keys(res.body), ["message"]);
      assert.match(res.body.message, /already exists/);
    }
    assert.is((await server.get("/api/nests")).body.nests.length, 2);
  } finally {
    await server.close();
  }
});

test("POST /api/nests: at most 20 nests, todo included, so the owner's 20th is a 400", async () => {
  const server = await startTestServer();
  try {
    for (let i = 1; i <= 19; i++) {
      const res = await server.post("/api/nests", { name: `Room ${i}`, crows: ["Rook"] });
      assert.is(res.status, 201, `Room ${i}`);
    }
    const res = await server.post("/api/nests", { name: "Room 20", crows: ["Rook"] });
    assert.is(res.status, 400);
    assert.match(res.body.message, /At most 20 nests, todo included/);
    const nests = (await server.get("/api/nests")).body.nests;
    assert.is(nests.length, 20, "GET /api/nests never lists more than 20");
    assert.equal(nests[0], TODO);
    assert.equal(
      nests.slice(1).map((n: any) => n.nest_id),
      Array.from({ length: 19 }, (_, i) => `room-${i + 1}`),
    );
  } finally {
    await server.close();
  }
});

test("GET /api/crows: empty shape, then the registry sorted by name with starting trust", async () => {
  const server = await startTestServer();
  try {
    const empty = await server.get("/api/crows");
    assert.is(empty.status, 200);
    assert.equal(empty.body, { crows: [] });
    await server.app.registry.spin({ name: "Zed", persona: "Pepper", trust: "trusted" });
    await server.app.registry.spin({ name: "ada", persona: "Hugin" });
    await server.app.registry.spin({ name: "Bryn", persona: "Rook", trust: "regular" });
    const res = await server.get("/api/crows");
    assert.equal(res.body, {
      crows: [
        { name: "ada", persona: "Hugin", trust: "stranger" },
        { name: "Bryn", persona: "Rook", trust: "regular" },
        { name: "Zed", persona: "Pepper", trust: "regular" },
      ],
    });
    // A spun crow can sit in a nest's core; persona crows never show up in /api/crows.
    const nest = await server.post("/api/nests", { name: "Mixed", crows: ["Zed", "Inky"] });
    assert.is(nest.status, 201);
    assert.equal(nest.body.crows, ["Zed", "Inky"]);
  } finally {
    await server.close();
  }
});

test("nests and spun crows survive a restart; the cap and clashes still hold after it", async () => {
  let server = await startTestServer({ env: { CROWS_MAX_SPUN: "2" } });
  try {
    await server.app.registry.spin({ name: "Ada", persona: "Inky", trust: "regular" });
    assert.is((await server.post("/api/nests", { name: "Code club", crows: ["Ada", "Inky", "Sable"] })).status, 201);
    server = await server.restart();
    assert.equal((await server.get("/api/nests")).body.nests, [
      TODO,
      { nest_id: "code-club", name: "Code club", crows: ["Ada", "Inky", "Sable"] },
    ]);
    assert.equal((await server.get("/api/crows")).body, {
      crows: [{ name: "Ada", persona: "Inky", trust: "regular" }],
    });
    assert.is((await server.post("/api/nests", { name: "CODE CLUB", crows: ["Inky"] })).status, 409);
    await server.app.registry.spin({ name: "Bea", persona: "Sable" });
    const full = await gql(
      server,
      `mutation { spinCrow(name: "Cy", persona: "Rook") { __typename ... on SpinRefusedError { reason code message } } }`,
    );
    assert.equal(full.spinCrow.__typename, "SpinRefusedError");
    assert.is(full.spinCrow.reason, "cap reached");
    assert.is(full.spinCrow.code, "bad_input");
  } finally {
    await server.close();
  }
});

test("GraphQL: nests, nest, roster and createNest with typed errors", async () => {
  const server = await startTestServer();
  try {
    const created = await gql(
      server,
      `mutation($name: String!, $crows: [String!]!) { createNest(name: $name, crows: $crows) { __typename ... on Nest { id name crows } ... on Error { code message } } }`,
      { name: "Launch copy", crows: ["Pepper", "Inky"] },
    );
    assert.equal(created.createNest, {
      __typename: "Nest",
      id: "launch-copy",
      name: "Launch copy",
      crows: ["Pepper", "Inky"],
    });
    const refused = await gql(
      server,
      `mutation {
        clash: createNest(name: "LAUNCH COPY", crows: ["Hugin"]) { __typename ... on Error { code message } }
        role: createNest(name: "Other", crows: ["Boss"]) { __typename ... on Error { code message } }
        none: createNest(name: "Other", crows: []) { __typename ... on Error { code message } }
      }`,
    );
    assert.is(refused.clash.__typename, "ConflictError");
    assert.is(refused.clash.code, "conflict");
    assert.match(refused.clash.message, /already exists/);
    assert.is(refused.role.__typename, "BadInputError");
    assert.match(refused.role.message, /Boss is a service role/);
    assert.is(refused.none.__typename, "BadInputError");
    assert.match(refused.none.message, /got 0/);
    const read = await gql(
      server,
      `{ roster nests { id name crows } nest(id: "launch-copy") { name crows } missing: nest(id: "nope") { id } }`,
    );
    assert.equal(read.roster, [...ROSTER]);
    assert.equal(read.nests, [
      { id: "todo", name: "todo", crows: [] },
      { id: "launch-copy", name: "Launch copy", crows: ["Pepper", "Inky"] },
    ]);
    assert.equal(read.nest, { name: "Launch copy", crows: ["Pepper", "Inky"] });
    assert.is(read.missing, null);
  } finally {
    await server.close();
  }
});

test("GraphQL: spinCrow clamps trust and says each refusal's reason; crows and personas carry trust", async () => {
  const server = await startTestServer();
  try {
    const spun = await gql(
      server,
      `mutation {
        ok: spinCrow(name: "Ada", persona: "inky", trust: "trusted") { __typename ... on SpunCrow { name persona startingTrust personaDetail { name } } }
        roster: spinCrow(name: "pepper", persona: "Inky") { __typename ... on SpinNameTakenError { reason code message } }
        role: spinCrow(name: "Boss", persona: "Inky") { __typename ... on SpinNameTakenError { reason code } }
        again: spinCrow(name: "ADA", persona: "Inky") { __typename ... on SpinNameTakenError { reason code } }
        persona: spinCrow(name: "Bea", persona: "Quill") { __typename ... on SpinRefusedError { reason code message } }
        trust: spinCrow(name: "Bea", persona: "Inky", trust: "root") { __typename ... on SpinRefusedError { reason } }
      }`,
    );
    assert.equal(spun.ok, {
      __typename: "SpunCrow",
      name: "Ada",
      persona: "Inky",
      startingTrust: "regular",
      personaDetail: { name: "Inky" },
    });
    assert.equal(spun.roster.__typename, "SpinNameTakenError");
    assert.is(spun.roster.reason, "name taken");
    assert.is(spun.roster.code, "conflict");
    assert.match(spun.roster.message, /roster crow Pepper/);
    assert.equal(spun.role, { __typename: "SpinNameTakenError", reason: "name taken", code: "conflict" });
    assert.equal(spun.again, { __typename: "SpinNameTakenError", reason: "name taken", code: "conflict" });
    assert.is(spun.persona.__typename, "SpinRefusedError");
    assert.is(spun.persona.reason, "persona unknown");
    assert.is(spun.persona.code, "bad_input");
    assert.equal(spun.trust, { __typename: "SpinRefusedError", reason: "trust invalid" });

    await server.app.prisma.trust.create({ data: { holder: "Inky", taskType: "code", level: 2, streak: 1 } });
    const read = await gql(
      server,
      `{ crows { name trust { taskType level levelName recorded } } crow(name: "Ada") { name } persona(name: "Inky") { trust { taskType levelName streak recorded } } }`,
    );
    assert.is(read.crows.length, 1);
    assert.is(read.crows[0].name, "Ada");
    // A spun crow starts every task type at its starting trust, never above regular.
    assert.is(read.crows[0].trust.length, 6);
    assert.ok(
      read.crows[0].trust.every((r: any) => r.level === 1 && r.levelName === "regular" && r.recorded === false),
    );
    const code = read.persona.trust.find((r: any) => r.taskType === "code");
    assert.equal(code, { taskType: "code", levelName: "trusted", streak: 1, recorded: true });
    assert.equal(
      read.persona.trust.find((r: any) => r.taskType === "writing"),
      { taskType: "writing", levelName: "stranger", streak: 0, recorded: false },
    );
    assert.equal((await server.get("/api/crows")).body, {
      crows: [{ name: "Ada", persona: "Inky", trust: "regular" }],
    });
  } finally {
    await server.close();
  }
});

test.run();

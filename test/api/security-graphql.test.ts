// GraphQL limits (graphql-armor): every documented query and GraphiQL's introspection pass; deep,
// wide, aliased and long documents are refused with a coded error before anything runs, on /graphql
// and /graphql/stream alike; errors are masked on both; CSRF prevention keeps form and GET mutations
// from storing anything.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { getIntrospectionQuery, parse, type OperationDefinitionNode } from "graphql";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { documentedDocuments } from "../helpers/documented-queries.ts";
import { GRAPHQL_LIMITS } from "../../src/server/graphql/plugins/limits.ts";
import { MAX_QUERY_COST } from "../../src/server/graphql/plugins/cost.ts";

let server: TestServer;

test.before(async () => {
  server = await startTestServer();
});
test.after(async () => {
  await server.close();
});

const LIMIT_CODES = [
  "TOO_MANY_TOKENS",
  "QUERY_TOO_DEEP",
  "TOO_MANY_ALIASES",
  "QUERY_TOO_COSTLY",
  "TOO_MANY_DIRECTIVES",
  "QUERY_TIMEOUT",
  "ANSWER_TOO_LARGE",
];

async function post(
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string; json: any }> {
  const response = await fetch(server.url + path, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, text, json };
}

test("every documented query, mutation and subscription passes the limits", async () => {
  const documents = documentedDocuments();
  assert.ok(documents.length >= 6, `found ${documents.length} documented documents`);
  const list = await server.post("/api/lists", { text: "buy milk", requester: "docs" });
  const variables = { listId: list.body.list_id, id: list.body.list_id, after: 0 };
  for (const source of documents) {
    const operations = parse(source).definitions.filter(
      (d): d is OperationDefinitionNode => d.kind === "OperationDefinition",
    );
    for (const operation of operations) {
      const name = operation.name?.value;
      if (operation.operation === "subscription") {
        // Accepted means the stream opens (200); a refusal would be a 400 before any event.
        const abort = new AbortController();
        const response = await fetch(`${server.url}/graphql/stream`, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "text/event-stream" },
          body: JSON.stringify({ query: source, operationName: name, variables }),
          signal: abort.signal,
        });
        assert.is(response.status, 200, `subscription ${name ?? source.slice(0, 60)}`);
        abort.abort();
        continue;
      }
      const { json } = await post("/graphql", { query: source, operationName: name, variables });
      const codes = (json.errors ?? []).map((e: { extensions?: { code?: string } }) => e.extensions?.code);
      assert.not.ok(
        codes.some(
          (c: string) => LIMIT_CODES.includes(c) || c === "GRAPHQL_VALIDATION_FAILED" || c === "GRAPHQL_PARSE_FAILED",
        ),
        `${name ?? source.slice(0, 60)}: ${JSON.stringify(json.errors)}`,
      );
    }
  }
});

test("GraphiQL's introspection query passes, in every flavour GraphiQL sends", async () => {
  for (const options of [
    {},
    {
      descriptions: true,
      specifiedByUrl: true,
      directiveIsRepeatable: true,
      schemaDescription: true,
      inputValueDeprecation: true,
      oneOf: true,
    },
  ]) {
    const { status, json } = await post("/graphql", {
      query: getIntrospectionQuery(options),
      operationName: "IntrospectionQuery",
    });
    assert.is(status, 200);
    assert.is(json.errors, undefined, JSON.stringify(json.errors));
    assert.ok(json.data.__schema.types.length > 20);
  }
});

const field = (depth: number): string =>
  depth === 0 ? "id" : `list(id: "x") { ${depth === 1 ? "id" : `items { ${field(depth - 2)} }`} }`;

test("hostile documents are refused with a coded error before they run, on /graphql and /graphql/stream", async () => {
  const hostile: [string, string, string][] = [
    [
      "the issue's nested list query",
      `{ list(id: "x") { items { list { items { list { items { list { items { list { id } } } } } } } } } }`,
      "QUERY_TOO_DEEP",
    ],
    [
      "depth one over the limit",
      `{ ${'list(id: "x") { items { '.repeat(3)} id ${"} } ".repeat(3)} }`,
      "QUERY_TOO_DEEP",
    ],
    ["a 10,000-deep selection", `{${"a{".repeat(10_000)}b${"}".repeat(10_000)}}`, "TOO_MANY_TOKENS"],
    [
      "10,000 aliases of lists",
      `{${Array.from({ length: 10_000 }, (_, i) => `a${i}: lists(limit: 100) { items { id text } }`).join(" ")}}`,
      "TOO_MANY_TOKENS",
    ],
    [
      "50,000 __typename aliases",
      `{${Array.from({ length: 50_000 }, (_, i) => `a${i}: __typename`).join(" ")}}`,
      "TOO_MANY_TOKENS",
    ],
    [
      "16 aliases",
      `{${Array.from({ length: GRAPHQL_LIMITS.maxAliases + 1 }, (_, i) => `a${i}: personas { name }`).join(" ")}}`,
      "TOO_MANY_ALIASES",
    ],
    [
      "16 __typename aliases",
      `{${Array.from({ length: GRAPHQL_LIMITS.maxAliases + 1 }, (_, i) => `a${i}: __typename`).join(" ")}}`,
      "TOO_MANY_ALIASES",
    ],
    [
      "11 directives",
      `{ personas { ${Array.from({ length: GRAPHQL_LIMITS.maxDirectives + 1 }, () => "name @include(if: true)").join(" ")} } }`,
      "TOO_MANY_DIRECTIVES",
    ],
    [
      "a fragment cycle's cost",
      `{ ...A } fragment A on Query { personas { name } ...B } fragment B on Query { ...A }`,
      "GRAPHQL_VALIDATION_FAILED",
    ],
  ];
  for (const [what, query, code] of hostile) {
    const started = Date.now();
    const { status, json, text } = await post("/graphql", { query });
    const tookMs = Date.now() - started;
    const limitCode = LIMIT_CODES.includes(code);
    // A limit refusal is a 400; a validation failure on /graphql is the 200 with errors that
    // graphql-yoga answers an application/json client (graphql-over-http), and still runs nothing.
    assert.is(status, limitCode ? 400 : 200, `${what}: ${status}`);
    assert.is(json.data, undefined, `${what}: nothing ran`);
    const codes = json.errors.map((e: { extensions?: { code?: string } }) => e.extensions?.code);
    assert.ok(codes.includes(code), `${what}: ${JSON.stringify(json.errors).slice(0, 300)}`);
    assert.not.match(text, /\/work\/|node_modules|\n\s+at /, `${what}: no stack`);
    void tookMs; // timings are printed by bench/graphql-limits.ts, not asserted here

    const stream = await post("/graphql/stream", { query }, { accept: "text/event-stream" });
    assert.is(stream.status, 400, `${what} over graphql-sse: ${stream.status}`);
    assert.not.match(
      stream.text,
      /\/work\/|node_modules|\n\s+at |Syntax Error: Token/,
      `${what} over graphql-sse: no stack`,
    );
    assert.ok(
      stream.json.errors.some((e: { extensions?: { code?: string } }) => e.extensions?.code === code),
      `${what} over graphql-sse: ${stream.text.slice(0, 200)}`,
    );
  }
  // Right at the limits is fine.
  const atDepth = await post("/graphql", { query: `{ ${field(GRAPHQL_LIMITS.maxDepth - 1)} }` });
  assert.is(
    atDepth.json.errors?.some((e: { extensions?: { code?: string } }) =>
      LIMIT_CODES.includes(e.extensions?.code ?? ""),
    ) ?? false,
    false,
    JSON.stringify(atDepth.json.errors),
  );
  const atAliases = await post("/graphql", {
    query: `{${Array.from({ length: GRAPHQL_LIMITS.maxAliases }, (_, i) => `a${i}: __typename`).join(" ")}}`,
  });
  assert.is(atAliases.json.errors, undefined);
});

/** A document whose fragments double at each of `k` levels: few tokens, no aliases, a cost that grows fast. */
const fanOut = (k: number, leaf: string): string => {
  const fragments = [`fragment F0 on Query { ${leaf} }`];
  for (let i = 1; i <= k; i++) fragments.push(`fragment F${i} on Query { ...F${i - 1} ...F${i - 1} }`);
  return `{ ...F${k} } ${fragments.join(" ")}`;
};

test("a document over the cost limit is a QUERY_TOO_COSTLY 400 naming the limit; the same shape under it runs", async () => {
  for (const leaf of [
    "personas { name }",
    "lists(limit: 5) { items { id text } }",
    "trust { holder level }",
    "__typename",
  ]) {
    const outcomes: string[] = [];
    for (let k = 0; k <= 17; k++) {
      const query = fanOut(k, leaf);
      for (const path of ["/graphql", "/graphql/stream"]) {
        const { status, json, text } = await post(
          path,
          { query },
          path === "/graphql/stream" ? { accept: "text/event-stream" } : {},
        );
        const costly = (json?.errors ?? []).find(
          (e: { extensions?: { code?: string } }) => e.extensions?.code === "QUERY_TOO_COSTLY",
        );
        if (costly) {
          assert.is(status, 400, `${leaf} k=${k} on ${path}`);
          assert.is(costly.extensions.limit, MAX_QUERY_COST);
          assert.ok(
            costly.extensions.requested > MAX_QUERY_COST,
            `${leaf} k=${k}: refused at a cost of ${costly.extensions.requested}`,
          );
          assert.is(json.data, undefined, "nothing ran");
        } else {
          assert.is(status, 200, `${leaf} k=${k} on ${path}: ${text.slice(0, 200)}`);
          if (path === "/graphql") assert.not.ok(json.errors, `${leaf} k=${k}: ${text.slice(0, 200)}`);
          else
            assert.ok(
              /event: next/.test(text) && !text.includes('"errors"'),
              `${leaf} k=${k} over graphql-sse: ${text.slice(0, 200)}`,
            );
        }
        if (path === "/graphql") outcomes.push(costly ? "refused" : "ran");
      }
    }
    // Cheap shapes run, and past some depth of doubling every one is refused: once refused, always.
    assert.is(outcomes[0], "ran", `${leaf}: the single copy runs`);
    assert.is(outcomes[outcomes.length - 1], "refused", `${leaf}: 2^17 copies cost too much`);
    assert.ok(outcomes.join(",").match(/^(ran,)+(refused,?)+$/), `${leaf}: ${outcomes.join(",")}`);
  }
});

test("errors are masked on /graphql/stream like on /graphql: a syntax error, a bad body, a bad variable", async () => {
  for (const body of ["{nope", "[]", '{"query": 5}', '{"query": "{", "variables": "x"}']) {
    const response = await fetch(`${server.url}/graphql/stream`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body,
    });
    const text = await response.text();
    assert.ok(response.status >= 400 && response.status < 500, `${body}: ${response.status}`);
    assert.not.match(text, /\/work\/|node_modules|\n\s+at |stack/, `${body}: ${text.slice(0, 200)}`);
  }
  const syntax = await post("/graphql/stream", { query: "{" }, { accept: "text/event-stream" });
  assert.is(syntax.status, 400);
  assert.is(syntax.json.errors[0].extensions.code, "GRAPHQL_PARSE_FAILED");
});

test("CSRF: a form-encoded or GET mutation stores nothing; a JSON POST without the header still works", async () => {
  const before = await server.app.prisma.todoList.count();
  const mutation = 'mutation { submitList(text: "csrf", requester: "csrf") { __typename } }';
  const get = await fetch(`${server.url}/graphql?query=${encodeURIComponent(mutation)}`);
  assert.is(get.status, 405);
  const stream = await fetch(`${server.url}/graphql/stream?query=${encodeURIComponent(mutation)}`, {
    headers: { accept: "text/event-stream" },
  });
  assert.is(stream.status, 405);
  for (const [type, body] of [
    ["application/x-www-form-urlencoded", `query=${encodeURIComponent(mutation)}`],
    ["text/plain", JSON.stringify({ query: mutation })],
    [
      "multipart/form-data; boundary=x",
      `--x\r\nContent-Disposition: form-data; name="query"\r\n\r\n${mutation}\r\n--x--\r\n`,
    ],
  ]) {
    for (const path of ["/graphql", "/graphql/stream"]) {
      const response = await fetch(server.url + path, { method: "POST", headers: { "content-type": type! }, body });
      assert.ok(response.status === 415 || response.status === 403, `${type} to ${path}: ${response.status}`);
    }
  }
  // With no content type at all the gate has no body to judge; Yoga's CSRF rule refuses it.
  const bare = await fetch(`${server.url}/graphql?query=${encodeURIComponent(mutation)}`, { method: "POST" });
  assert.is(bare.status, 403);
  assert.is((await bare.json()).errors[0].extensions.code, "CSRF_PREVENTED");
  const withHeader = await fetch(`${server.url}/graphql`, { method: "POST", headers: { "x-graphql-yoga-csrf": "1" } });
  assert.ok(
    [400, 415].includes(withHeader.status),
    `the CSRF header lets it through to Yoga, which judges the empty request: ${withHeader.status}`,
  );
  assert.is(await server.app.prisma.todoList.count(), before, "nothing stored");
  const json = await post("/graphql", { query: mutation });
  assert.is(json.json.data.submitList.__typename, "SubmittedList");
});

test("a variable of the wrong type is a 400 coded BAD_USER_INPUT on every mutation, query and subscription, on both endpoints", async () => {
  const operations: Array<[string, Record<string, unknown>[]]> = [
    [
      "mutation($t: String!, $r: String!) { submitList(text: $t, requester: $r) { __typename } }",
      [{ t: 5, r: "x" }, { t: null, r: "x" }, { t: "a", r: { n: 1 } }, { t: ["a"], r: "x" }, { t: "a" }],
    ],
    [
      "mutation($n: String!, $c: [String!]!) { createNest(name: $n, crows: $c) { __typename } }",
      [
        { n: "x", c: [5] },
        { n: "x", c: ["Pepper", null] },
        { n: true, c: ["Pepper"] },
      ],
    ],
    [
      'mutation($i: Int) { postMessage(nestId: "todo", author: "owner", text: "hi", invited: $i) { __typename } }',
      [{ i: 1.5 }, { i: "2" }, { i: 2 ** 31 }, { i: -(2 ** 31) - 1 }],
    ],
    [
      'mutation($a: Boolean!) { postVerdict(itemId: "x", target: triage, approve: $a) { __typename } }',
      [{ a: "yes" }, { a: 1 }, { a: null }],
    ],
    [
      'mutation($t: VerdictTarget!) { postVerdict(itemId: "x", target: $t, approve: true) { __typename } }',
      [{ t: "bogus" }, { t: 1 }],
    ],
    ["query($l: Int) { approvals(limit: $l) { itemId } }", [{ l: "ten" }, { l: 1e10 }]],
    ["subscription($a: Int) { trustChanges(after: $a) { id } }", [{ a: "abc" }, { a: 0.5 }]],
  ];
  const before = await server.app.prisma.todoList.count();
  for (const [query, variableSets] of operations) {
    for (const variables of variableSets) {
      for (const path of ["/graphql", "/graphql/stream"]) {
        const accept =
          query.startsWith("subscription") || path === "/graphql/stream" ? "text/event-stream" : "application/json";
        const answer = await post(path, { query, variables }, { accept });
        assert.is(answer.status, 400, `${path} ${query} ${JSON.stringify(variables)}: ${answer.status} ${answer.text}`);
        assert.match(
          answer.text,
          /"code":"BAD_USER_INPUT"/,
          `${path} ${query} ${JSON.stringify(variables)}: ${answer.text}`,
        );
      }
    }
  }
  assert.is(await server.app.prisma.todoList.count(), before);
});

test("every method but GET, HEAD and POST is a 405 naming GET and POST on both GraphQL paths, and nothing runs", async () => {
  const before = await server.app.prisma.todoList.count();
  const mutation = JSON.stringify({
    query: 'mutation { submitList(text: "buy milk", requester: "m") { __typename } }',
  });
  for (const path of ["/graphql", "/graphql/stream"]) {
    for (const method of [
      "PUT",
      "DELETE",
      "PATCH",
      "OPTIONS",
      "PROPFIND",
      "MKCOL",
      "COPY",
      "LOCK",
      "UNLOCK",
      "SEARCH",
      "PURGE",
    ]) {
      // Every method that may carry a body carries a mutation, which must not run.
      const body = method === "OPTIONS" ? undefined : mutation;
      const answer = await fetch(server.url + path, {
        method,
        headers: { "content-type": "application/json", "x-graphql-yoga-csrf": "1" },
        body,
      });
      const text = await answer.text();
      assert.is(answer.status, 405, `${method} ${path}: ${answer.status} ${text}`);
      assert.is(answer.headers.get("allow"), "GET, POST", `${method} ${path}`);
      assert.match(JSON.parse(text).message, /GET and POST/, `${method} ${path}: ${text}`);
    }
  }
  assert.is(await server.app.prisma.todoList.count(), before);
});

test("a query's text never becomes code: graphql-jit's date marker in any literal, default or variable runs nothing and answers as data", async () => {
  const marker = "__MAGIC_DATE__33a9e76d_02e0_4128_8e92_3530ad3da74d";
  const nan = "__MAGIC_NAN__57f286b9_4c20_487f_b409_79804ddcb4f8";
  const probe = globalThis as { crowsJitProbe?: number };
  delete probe.crowsJitProbe;
  const payload = `${marker}globalThis.crowsJitProbe=1`;
  const literal = JSON.stringify(payload);
  const documents: [string, Record<string, unknown>?][] = [
    [`{ trust(holder: ${literal}) { holder } }`],
    [`{ trust(holder: "crow", taskType: ${literal}) { holder } }`],
    [`{ list(id: ${literal}) { id } }`],
    [`{ events(listId: ${literal}) { seq } }`],
    [`{ lists(requester: ${literal}) { id } }`],
    [`{ crow(name: ${literal}) { name } }`],
    [`{ persona(name: ${literal}) { name } }`],
    [`{ classifierAnswers(subject: ${literal}, questionId: ${literal}) { __typename } }`],
    [`{ a: trust(holder: "x") { holder } b: trust(holder: ${literal}) { holder } }`],
    [`query Q { ...F } fragment F on Query { trust(holder: ${literal}) { holder } }`],
    [`{ trust(holder: """${payload}""") { holder } }`],
    [
      `{ trust(holder: "\\u005f_MAGIC_DATE__33a9e76d_02e0_4128_8e92_3530ad3da74dglobalThis.crowsJitProbe=1") { holder } }`,
    ],
    [`query($h: String = ${literal}) { trust(holder: $h) { holder } }`],
    [`query($h: String) { trust(holder: $h) { holder } }`, { h: payload }],
    [`query($id: ID!) { list(id: $id) { id } events(listId: $id) { seq } }`, { id: payload }],
    [`{ trust(holder: "${nan}") { holder } }`],
    [`query($h: String) { trust(holder: $h) { holder } }`, { h: `${marker}1);globalThis.crowsJitProbe=(2` }],
  ];
  for (const [query, variables] of documents) {
    const answer = await fetch(server.url + "/graphql", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query, variables }),
    });
    const text = await answer.text();
    assert.is(answer.status, 200, `${query}: ${text}`);
    assert.not.match(text, /Unexpected error/, `${query}: ${text}`);
    assert.ok(JSON.parse(text).data, `${query}: ${text}`);
    assert.is(probe.crowsJitProbe, undefined, `code ran for ${query}`);
  }
});

test("/graphql/stream keeps no reservations: PUT (single-connection mode) is a 405, so no client can pile up streams in memory", async () => {
  for (let i = 0; i < 50; i++) {
    const token = `reserve-${i}`;
    const put = await fetch(server.url + "/graphql/stream", {
      method: "PUT",
      headers: { accept: "text/plain", "x-graphql-event-stream-token": token },
    });
    const text = await put.text();
    assert.is(put.status, 405, `PUT ${i}: ${put.status} ${text}`);
    assert.is(put.headers.get("allow"), "GET, POST");
    assert.not.match(text, token);
  }
  const del = await fetch(server.url + "/graphql/stream", {
    method: "DELETE",
    headers: { "x-graphql-event-stream-token": "reserve-1" },
  });
  assert.is(del.status, 405);
  // Distinct connections, what the console and the tests use, still work.
  const ok = await fetch(server.url + "/graphql/stream", {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify({ query: "{ __typename }" }),
  });
  assert.is(ok.status, 200);
  assert.match(await ok.text(), /"__typename":"Query"/);
});

test.run();

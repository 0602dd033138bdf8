// Two Host headers are a 400 (Node would keep the first, a proxy in front may read the other); a
// requester or nest author whose name has nothing left once compared (invisible characters,
// surrounding punctuation and spaces) is a 400 instead of sharing one empty rate-limit key.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { rawExchange } from "../helpers/raw-http.ts";
import { requesterKey } from "../../src/flock/rate-limit.ts";

let server: TestServer;
let port: number;

test.before(async () => {
  server = await startTestServer({ env: { CROWS_PUBLIC_HOSTS: "crows.example.org" } });
  port = Number(new URL(server.url).port);
});
test.after(async () => {
  await server.close();
});

test("two Host headers are a 400 on every path; one is answered as before", async () => {
  const own = `127.0.0.1:${port}`;
  const pairs = [
    [own, own],
    [own, "attacker.example"],
    ["attacker.example", own],
    [own, `localhost:${port}`],
    [own, "crows.example.org"],
    [own, ""],
  ];
  const spellings = [
    ["Host", "Host"],
    ["host", "HOST"],
    ["Host", "hOsT"],
  ];
  for (const target of ["/api/nests", "/graphql?query=%7Broster%7D", "/healthz", "/"]) {
    for (const [first, second] of pairs) {
      for (const [a, b] of spellings) {
        const response = await rawExchange(
          port,
          `GET ${target} HTTP/1.1\r\n${a}: ${first}\r\n${b}: ${second}\r\nConnection: close\r\n\r\n`,
        );
        assert.is(response.status, 400, `${target} ${a}: ${first} / ${b}: ${second}`);
        assert.match(JSON.parse(response.body).message, /more than one Host header/);
      }
    }
    const three = await rawExchange(
      port,
      `GET ${target} HTTP/1.1\r\nHost: ${own}\r\nHost: ${own}\r\nHost: ${own}\r\nConnection: close\r\n\r\n`,
    );
    assert.is(three.status, 400, `${target}: three`);
    const one = await rawExchange(
      port,
      `GET ${target} HTTP/1.1\r\nHost: ${own}\r\nX-Host: other\r\nConnection: close\r\n\r\n`,
    );
    assert.ok(one.status < 400, `${target}: one Host is answered (${one.status})`);
  }
  const post = await rawExchange(
    port,
    `POST /api/lists HTTP/1.1\r\nHost: ${own}\r\nHost: ${own}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`,
  );
  assert.is(post.status, 400);
});

const EMPTY_NAMES = [
  "\u200b",
  "\u200b\u200c\u200d",
  "\ufeff",
  "\u00ad\u00ad",
  "\u2066\u2069",
  "\u3164",
  "\u115f\u1160",
  "\u034f",
  "...",
  "()",
  "~~",
  "!!!",
  ". \u200b .",
  "\u3000\u200b", // an ideographic space and a zero-width one
  "\u202e\u202d",
];

test("a requester with nothing left once compared is a 400 over REST and GraphQL, and nothing is stored", async () => {
  const before = await server.app.prisma.todoList.count();
  let nothingLeft = 0; // the rest are whitespace to String.trim (the BOM, the ideographic space) and were refused already
  for (const name of EMPTY_NAMES) {
    assert.is(requesterKey(name), "", JSON.stringify(name));
    const rest = await server.post("/api/lists", { text: "buy milk", requester: name });
    assert.is(rest.status, 400, `REST ${JSON.stringify(name)}: ${rest.text}`);
    assert.match(rest.body.message, /"requester" (has nothing left|must be a non-empty string)/, rest.body.message);
    if (/has nothing left/.test(rest.body.message)) nothingLeft++;
    const gql = await server.post("/graphql", {
      query:
        'mutation S($r: String!) { submitList(text: "buy milk", requester: $r) { __typename ... on Error { code message } } }',
      variables: { r: name },
    });
    assert.is(gql.body.data.submitList.__typename, "BadInputError", `GraphQL ${JSON.stringify(name)}`);
  }
  assert.ok(nothingLeft >= EMPTY_NAMES.length - 2, `${nothingLeft} refused by the new rule`);
  assert.is(await server.app.prisma.todoList.count(), before, "nothing was stored");
  for (const name of ["a", "\u200bana", "Ｂｏ", "ß", "1", "ana."]) {
    const ok = await server.post("/api/lists", { text: "buy milk", requester: name });
    assert.is(ok.status, 202, `${JSON.stringify(name)} still names someone`);
  }
});

test("a nest author with nothing left once compared is a 400 too (authors share the requesters' key)", async () => {
  for (const name of EMPTY_NAMES) {
    const posted = await server.post("/api/nests/todo/messages", { author: name, text: "hello" });
    assert.is(posted.status, 400, `${JSON.stringify(name)}: ${posted.text}`);
    assert.match(posted.body.message, /"author" (has nothing left|must be a non-empty string)/, posted.body.message);
  }
  assert.is(
    (await server.post("/api/nests/todo/messages", { author: "owner", text: "hello", kind: "say" })).status,
    201,
  );
});

test.run();

// Text a database cannot hold as sent is refused at the door, on every write (REST and GraphQL,
// in a variable or written inline in the document): a NUL (PostgreSQL text cannot store it), a
// lone UTF-16 surrogate (no UTF-8 encoding: it would be stored as U+FFFD, not what was sent), and
// a body that is not valid UTF-8. Each is a clear 4xx and nothing is stored. Visible marks that
// are merely unusual (RTL marks, combining marks, emoji) are kept as written. docs/security.md.
import { test, type Test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { serverOnFreshDatabase, serviceTests } from "../helpers/scale-services.ts";

const BAD_TEXTS = ["a\u0000b", "\u0000", "tail\ud800", "\udfffhead", "x\ud83dy", "pair reversed \ude00\ud83d"];
const KEPT_TEXTS = ["\u202eright to left\u202c", "\u200fשלום", "e\u0301", "🐦‍⬛ crow", "tab\there"];

interface Write {
  name: string;
  rest?: { path: string; body: (s: string) => Record<string, unknown> };
  graphql: { query: string; variables: (s: string) => Record<string, unknown> };
}

// Each write, with the bad text placed in each of its string fields in turn.
function writes(): Write[] {
  const list = (field: string) => (s: string) => ({ text: "feed the crows", requester: "uni-tester", [field]: s });
  const post = (field: string) => (s: string) => ({ author: "owner", text: "hello", kind: "say", [field]: s });
  const nest = (field: string) => (s: string) =>
    field === "crows" ? { name: "unicode nest", crows: ["Pepper", s] } : { name: s, crows: ["Pepper"] };
  const out: Write[] = [];
  for (const field of ["text", "requester", "nest_id"]) {
    out.push({
      name: `list ${field}`,
      rest: { path: "/api/lists", body: list(field) },
      graphql: {
        query:
          "mutation($text: String!, $requester: String!, $nestId: String) { submitList(text: $text, requester: $requester, nestId: $nestId) { __typename } }",
        variables: (s) => ({
          text: "feed the crows",
          requester: "uni-tester",
          ...(field === "nest_id" ? { nestId: s } : { [field]: s }),
        }),
      },
    });
  }
  for (const field of ["text", "author", "to", "refers_to", "approval_phrase"]) {
    const gqlField = field === "refers_to" ? "refersTo" : field === "approval_phrase" ? "approvalPhrase" : field;
    out.push({
      name: `message ${field}`,
      rest: {
        path: "/api/nests/todo/messages",
        body:
          field === "approval_phrase"
            ? (s) => ({ author: "owner", text: "may I?", kind: "ask_owner", approval_phrase: s })
            : post(field),
      },
      graphql: {
        query: `mutation($v: String!) { postMessage(${Object.entries({
          nestId: '"todo"',
          author: '"owner"',
          text: '"hello"',
          kind: field === "approval_phrase" ? '"ask_owner"' : '"say"',
          [gqlField]: "$v",
        })
          .map(([k, v]) => `${k}: ${v}`)
          .join(", ")}) { __typename } }`,
        variables: (s) => ({ v: s }),
      },
    });
  }
  for (const field of ["name", "crows"]) {
    out.push({
      name: `nest ${field}`,
      rest: { path: "/api/nests", body: nest(field) },
      graphql: {
        query: "mutation($name: String!, $crows: [String!]!) { createNest(name: $name, crows: $crows) { __typename } }",
        variables: (s) =>
          field === "name" ? { name: s, crows: ["Pepper"] } : { name: "unicode nest", crows: ["Pepper", s] },
      },
    });
  }
  out.push({
    name: "verdict item_id",
    rest: { path: "/api/verdicts", body: (s) => ({ item_id: s, target: "triage", approve: true }) },
    graphql: {
      query: "mutation($v: ID!) { postVerdict(itemId: $v, target: triage, approve: true) { __typename } }",
      variables: (s) => ({ v: s }),
    },
  });
  for (const field of ["name", "persona", "trust"]) {
    out.push({
      name: `spin ${field}`,
      graphql: {
        query:
          "mutation($name: String!, $persona: String!, $trust: String) { spinCrow(name: $name, persona: $persona, trust: $trust) { __typename } }",
        variables: (s) => ({ name: "Unicrow", persona: "Pepper", trust: "regular", [field]: s }),
      },
    });
  }
  return out;
}

async function stored(server: TestServer): Promise<string> {
  const p = server.app.prisma;
  const counts = await Promise.all([
    p.todoList.count(),
    p.message.count(),
    p.nest.count(),
    p.spunCrow.count(),
    p.event.count(),
    p.approval.count(),
  ]);
  return counts.join(",");
}

function suite(
  label: string,
  start: () => Promise<{ server: TestServer; done(): Promise<void> }>,
  runner: Test = test,
) {
  runner(
    `${label}: NUL and lone surrogates are a 4xx on every write, REST and GraphQL, and nothing is stored`,
    async () => {
      const { server, done } = await start();
      try {
        const before = await stored(server);
        for (const write of writes()) {
          for (const bad of BAD_TEXTS) {
            if (write.rest) {
              const answer = await server.post(write.rest.path, write.rest.body(bad));
              assert.is(
                answer.status,
                400,
                `REST ${write.name} ${JSON.stringify(bad)}: ${answer.status} ${answer.text}`,
              );
              assert.type(answer.body.message, "string");
            }
            for (const inline of [false, true]) {
              let query = write.graphql.query;
              let variables = write.graphql.variables(bad);
              if (inline) {
                // The same value written into the document as a string literal (JSON escapes are GraphQL escapes).
                for (const [key, value] of Object.entries(variables)) {
                  if (!Array.isArray(value) && value !== bad) continue;
                  query = query
                    .replace(new RegExp(`\\$${key}\\b(?!:)`, "g"), JSON.stringify(value))
                    .replace(new RegExp(`\\$${key}: [^,)]+,? ?`), "");
                  delete variables[key];
                }
                query = query.replace("mutation()", "mutation");
                variables = { ...variables };
              }
              const answer = await server.request(
                "POST",
                "/graphql",
                { query, variables },
                { accept: "application/graphql-response+json" },
              );
              // graphql-js itself refuses a lone-surrogate escape written in the document (a parse error).
              const codes = JSON.stringify(answer.body);
              assert.ok(
                answer.status >= 400 && answer.status < 500,
                `GraphQL ${inline ? "inline" : "variable"} ${write.name} ${JSON.stringify(bad)}: ${answer.status} ${answer.text}`,
              );
              assert.match(codes, /"code":"(bad_input|GRAPHQL_PARSE_FAILED)"/, `${write.name}: ${answer.text}`);
            }
          }
        }
        assert.is(await stored(server), before, "something was stored");
        // Not valid UTF-8 at all: a clear 400 on REST and GraphQL, nothing stored.
        for (const path of ["/api/lists", "/graphql"]) {
          const prefix = path === "/graphql" ? '{"query":"mutation { submitList(text: \\"a' : '{"text":"a';
          const suffix = path === "/graphql" ? '\\", requester: \\"r\\") { __typename } }"}' : '","requester":"r"}';
          for (const bytes of [[0xff], [0xed, 0xa0, 0x80], [0xc0, 0xaf], [0xe2, 0x82]]) {
            const response = await fetch(server.url + path, {
              method: "POST",
              headers: { "content-type": "application/json", accept: "application/json" },
              body: Buffer.concat([Buffer.from(prefix), Buffer.from(bytes), Buffer.from(suffix)]),
            });
            const text = await response.text();
            assert.is(response.status, 400, `${path} bytes ${bytes}: ${response.status} ${text}`);
            assert.match(text, /UTF-8/);
          }
        }
        assert.is(await stored(server), before, "something was stored from a body that is not UTF-8");
        // Unusual but valid text is stored exactly as written.
        for (const kept of KEPT_TEXTS) {
          const list = await server.post("/api/lists", { text: `check ${kept}`, requester: `uni ${kept}` });
          assert.is(list.status, 202, list.text);
          const row = await server.app.prisma.todoList.findUniqueOrThrow({ where: { id: list.body.list_id } });
          assert.is(row.requester, `uni ${kept}`);
          const message = await server.post("/api/nests/todo/messages", {
            author: "owner",
            text: `note ${kept}`,
            kind: "say",
          });
          assert.is(message.status, 201, message.text);
          assert.is(message.body.text, `note ${kept}`);
        }
        // Reads too: a NUL in a path, a query or a GraphQL argument is a 400, never the database's 500.
        for (const path of [
          "/api/nests/%00/messages",
          "/api/nests/a%00b/messages",
          "/api/events?list_id=%00",
          "/api/nests/todo/messages?after=%00",
        ]) {
          const answer = await server.get(path);
          assert.is(answer.status, 400, `${path}: ${answer.status} ${answer.text}`);
        }
        for (const query of ["query($v: ID!) { nest(id: $v) { id } }", "query($v: ID!) { list(id: $v) { id } }"]) {
          const answer = await server.request("POST", "/graphql", { query, variables: { v: "a\u0000" } });
          assert.is(answer.status, 400, `${query}: ${answer.text}`);
          assert.match(answer.text, /bad_input/);
        }
        assert.is((await server.get("/healthz")).status, 200);
      } finally {
        await done();
      }
    },
  );
}

suite("SQLite", async () => {
  const server = await startTestServer();
  return { server, done: () => server.close() };
});

const { svc, it } = serviceTests("security-unicode");
suite("PostgreSQL", () => serverOnFreshDatabase(svc!.pgUrl), it);

test.run();

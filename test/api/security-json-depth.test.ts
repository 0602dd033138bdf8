// JSON nested past MAX_JSON_DEPTH (64) is a 400 before anything parses it, wherever it sits: the
// top level, a field's value, an unknown extra field, on every POST under /api; GraphQL variables
// used or unused on POST, GET and /graphql/stream, and an unknown extra field of a GraphQL body.
// At 64 and below the request goes on to its ordinary answer (never a 500). About 2,940 levels used
// to overflow the recursive scan for unstorable text as a 500; it is a loop now.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { jsonDepth, MAX_JSON_DEPTH } from "../../src/http/json-depth.ts";
import { findUnstorable } from "../../src/http/unstorable-text.ts";
import { restRouter } from "../../compat/index.ts";

let server: TestServer;

test.before(async () => {
  server = await startTestServer();
});
test.after(async () => {
  await server.close();
});

const DEPTHS = [1, 63, 64, 65, 3000, 100_000];
type Shape = "array" | "object" | "mixed";
const SHAPES: Shape[] = ["array", "object", "mixed"];

/** JSON text `depth` levels deep, as text (JSON.stringify itself recurses). */
function nested(depth: number, shape: Shape): string {
  let open = "";
  let close = "";
  for (let i = 0; i < depth; i++) {
    const asArray = shape === "array" || (shape === "mixed" && i % 2 === 0);
    open += asArray ? "[" : '{"a":';
    close = (asArray ? "]" : "}") + close;
  }
  return `${open}${shape === "array" ? "" : "1"}${close}`;
}

interface Answer {
  status: number;
  text: string;
}

function assertRefused(answer: Answer, what: string): void {
  assert.is(answer.status, 400, `${what}: a 400 (got ${answer.status} ${answer.text.slice(0, 200)})`);
  const body = JSON.parse(answer.text) as {
    message?: string;
    limit_depth?: number;
    errors?: Array<{ extensions?: { code?: string; limit?: number } }>;
  };
  assert.is(body.limit_depth, MAX_JSON_DEPTH, `${what}: names the limit`);
  assert.match(String(body.message), /more than 64 deep/, `${what}: says why`);
}

function assertPassed(answer: Answer, what: string): void {
  assert.ok(answer.status < 500, `${what}: not a 500 (got ${answer.status} ${answer.text.slice(0, 200)})`);
  assert.not.match(answer.text, /more than 64 deep|JSON_TOO_DEEP/, `${what}: not refused for depth`);
}

function judge(answer: Answer, depth: number, what: string): void {
  if (depth > MAX_JSON_DEPTH) assertRefused(answer, what);
  else assertPassed(answer, what);
}

/** The status and body; a stream that opened is closed at once (its opening is the answer). */
async function answerOf(response: Response): Promise<Answer> {
  if ((response.headers.get("content-type") ?? "").includes("text/event-stream")) {
    await response.body?.cancel();
    return { status: response.status, text: "" };
  }
  return { status: response.status, text: await response.text() };
}

async function post(path: string, body: string, headers: Record<string, string> = {}): Promise<Answer> {
  return answerOf(
    await fetch(server.url + path, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body,
    }),
  );
}

const concretePath = (path: string) => path.replace("{nest_id}", "todo");
let requesterN = 0;
/** A body each POST route could accept, so only the nested part is new (requesters vary: the rate limit stays out of it). */
function validFields(path: string): Record<string, unknown> {
  requesterN++;
  if (path === "/api/lists") return { text: "buy milk", requester: `deep-${requesterN}` };
  if (path === "/api/nests") return { name: `deep ${requesterN}`, crows: ["Hugin"] };
  if (path === "/api/verdicts") return { item_id: "nope-1", target: "triage", approve: true };
  return { author: `deep-${requesterN}`, text: "hello" };
}

test("the depth is counted on the text: brackets in strings and escapes do not count", () => {
  assert.is(jsonDepth("1"), 0);
  assert.is(jsonDepth('"[[[{"'), 0);
  assert.is(jsonDepth('["\\"[[[", {"a": [1]}]'), 3);
  assert.is(jsonDepth('{"a\\\\":[[]]}'), 3);
  for (const shape of SHAPES)
    for (const depth of DEPTHS) assert.is(jsonDepth(nested(depth, shape)), depth, `${shape} ${depth}`);
  assert.is(jsonDepth(nested(100_000, "array"), 65), 65, "the scan stops at the bound");
});

test("the scan for unstorable text walks 100,000 levels without recursion", () => {
  for (const shape of SHAPES) {
    const value = JSON.parse(nested(100_000, shape)) as unknown;
    assert.is(findUnstorable(value), undefined, shape);
  }
  const withNul = JSON.parse(`{"a":[{"b":[1,"x\\u0000"]}]}`) as unknown;
  assert.equal(findUnstorable(withNul), { at: "a[0].b[1]", why: "a NUL character" }, "the path is still named");
  assert.equal(findUnstorable({ "k\u0000": 1 }), { at: "a key", why: "a NUL character" });
  assert.equal(findUnstorable({ b: { "k\u0000": 1 } }), { at: "b key", why: "a NUL character" });
});

test("every POST under /api: deep JSON at the top level, in a field's value and in an unknown extra field", async () => {
  // The webhook routes and the decide links' pages joined the one router later; this test covers
  // the POSTs it always did (the webhook POSTs that read no body, rotate-secret and redeliver,
  // never judge one; a decide link's POST reads none).
  const posts = restRouter()
    .list()
    .filter(
      (route) =>
        route.method === "POST" &&
        route.path.startsWith("/api/") &&
        !route.path.startsWith("/api/webhooks") &&
        // A POST whose record declares no body reads none (a list's cancel), so it judges none.
        (route.body !== undefined || route.engineBody !== undefined),
    )
    .map((route) => route.path);
  assert.ok(posts.length >= 4, `found the POST routes: ${posts.join(", ")}`);
  const listsBefore = await server.app.prisma.todoList.count();
  let acceptedLists = 0;
  for (const path of posts) {
    for (const depth of DEPTHS) {
      for (const shape of SHAPES) {
        const where = `${path} ${shape} ${depth}`;
        judge(await post(concretePath(path), nested(depth, shape)), depth, `${where} at the top level`);
        const fields = validFields(path);
        const [firstField] = Object.keys(fields);
        // A field's value: the body object is one level, so the value is one less.
        const inField = JSON.stringify({ ...fields, [firstField!]: "PLACEHOLDER" }).replace(
          '"PLACEHOLDER"',
          nested(depth - 1, shape),
        );
        judge(await post(concretePath(path), inField), depth, `${where} in ${firstField}`);
        const extra = JSON.stringify({ ...fields, extra: "PLACEHOLDER" }).replace(
          '"PLACEHOLDER"',
          nested(depth - 1, shape),
        );
        const answer = await post(concretePath(path), extra);
        judge(answer, depth, `${where} in an unknown field`);
        if (path === "/api/lists" && answer.status === 202) acceptedLists++;
      }
    }
  }
  assert.ok(acceptedLists > 0, "a list with a shallow extra field is still accepted");
  assert.is(await server.app.prisma.todoList.count(), listsBefore + acceptedLists, "a refused body stored nothing");
  assert.is((await server.get("/api/nests")).status, 200, "the server still serves");
});

const USED = "query Deep($t: String) { trust(holder: $t) { holder } }";
const UNUSED = "query Unused { roster }";
const SUBSCRIPTION = "subscription Deep($t: Int) { trustChanges(after: $t) { id } }";

function graphqlBody(query: string, variablesText: string, extraText?: string): string {
  return `{"query":${JSON.stringify(query)},"variables":${variablesText}${extraText === undefined ? "" : `,"extra":${extraText}`}}`;
}

function assertGraphqlRefused(answer: Answer, what: string): void {
  assertRefused(answer, what);
  const body = JSON.parse(answer.text) as { errors?: Array<{ extensions?: { code?: string; limit?: number } }> };
  assert.is(body.errors?.[0]?.extensions?.code, "JSON_TOO_DEEP", `${what}: a coded GraphQL error`);
  assert.is(body.errors?.[0]?.extensions?.limit, MAX_JSON_DEPTH, `${what}: the limit in extensions`);
}

function judgeGraphql(answer: Answer, depth: number, what: string): void {
  if (depth > MAX_JSON_DEPTH) assertGraphqlRefused(answer, what);
  else assertPassed(answer, what);
}

test("GraphQL POST on /graphql and /graphql/stream: variables used or unused, and an extra field of the body", async () => {
  for (const depth of DEPTHS) {
    for (const shape of SHAPES) {
      const vars = (inner: string) => `{"t":${inner}}`;
      const deeper = nested(depth - 1, shape); // inside {"t": ...} -> depth in all
      const variablesAt = nested(depth - 2, shape); // the body object, variables, t
      const where = `${shape} ${depth}`;
      judgeGraphql(
        await post("/graphql", graphqlBody(USED, depth >= 2 ? vars(variablesAt) : "{}")),
        Math.max(depth, 2),
        `/graphql used variable ${where}`,
      );
      judgeGraphql(await post("/graphql", graphqlBody(UNUSED, deeper)), depth, `/graphql unused variables ${where}`);
      judgeGraphql(await post("/graphql", graphqlBody(UNUSED, "{}", deeper)), depth, `/graphql extra field ${where}`);
      for (const accept of ["text/event-stream", "application/json"]) {
        const headers = { accept };
        judgeGraphql(
          await post("/graphql/stream", graphqlBody(SUBSCRIPTION, depth >= 2 ? vars(variablesAt) : "{}"), headers),
          Math.max(depth, 2),
          `/graphql/stream (${accept}) used variable ${where}`,
        );
        judgeGraphql(
          await post("/graphql/stream", graphqlBody(SUBSCRIPTION, deeper), headers),
          depth,
          `/graphql/stream (${accept}) variables ${where}`,
        );
        judgeGraphql(
          await post("/graphql", graphqlBody(SUBSCRIPTION, deeper), headers),
          depth,
          `/graphql subscription (${accept}) ${where}`,
        );
      }
    }
  }
  assert.is((await server.get("/api/nests")).status, 200, "the server still serves");
});

test("GraphQL GET on /graphql and /graphql/stream: variables and extensions in the query string", async () => {
  let refusedByDepth = 0;
  for (const depth of DEPTHS) {
    for (const shape of SHAPES) {
      for (const [path, query] of [
        ["/graphql", UNUSED],
        ["/graphql", USED],
        ["/graphql/stream", SUBSCRIPTION],
      ] as const) {
        for (const param of ["variables", "extensions"]) {
          const inner = param === "variables" ? `{"t":${nested(depth - 1, shape)}}` : nested(depth, shape);
          const target = `${path}?query=${encodeURIComponent(query)}&${param}=${encodeURIComponent(inner)}`;
          const response = await fetch(server.url + target, {
            headers: { accept: path.endsWith("stream") ? "text/event-stream" : "application/json" },
          });
          const answer = await answerOf(response);
          const what = `GET ${path} ${param} ${shape} ${depth}`;
          if (answer.status === 431) {
            // The query string is over the header limit before any depth is read: also refused, never parsed.
            assert.ok(depth > MAX_JSON_DEPTH, `${what}: only the deep ones are that long`);
            continue;
          }
          judgeGraphql(answer, Math.max(depth, 1), what);
          if (depth > MAX_JSON_DEPTH) refusedByDepth++;
        }
      }
    }
  }
  assert.ok(refusedByDepth >= 18, `the depth check, not only the header limit, refused GETs (${refusedByDepth})`);
  assert.is((await server.get("/api/nests")).status, 200, "the server still serves");
});

test.run();

// The one REST router (compat/router.ts) over the route records: a `{name}` segment with its own
// pattern, a page route (a decide link) answering HEAD like GET with an exact path and a bare 405,
// the JSON API's 404 and 405, and a record's parsed input (compat/route.ts): a bad query or body
// is a 400 with the record's words, the first field first.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { z } from "zod";
import { MethodNotAllowed, Router, type CompatRequest } from "../../compat/router.ts";
import { defineRoute, type RouteRecord } from "../../compat/route.ts";
import { intQuery } from "../../compat/query-params.ts";
import { HttpError } from "../../src/http/http-error.ts";
import { restRouter } from "../../compat/index.ts";
import type { App } from "../../src/app.ts";

const ok = async () => ({ status: 204 });
const page = (method: "GET" | "POST"): RouteRecord =>
  defineRoute({
    method,
    path: "/p/{code}",
    segments: { code: "[a-z]{3}" },
    page: true,
    scope: "link",
    operationId: `p${method}`,
    summary: "a page",
    tags: [],
    responses: {},
    handle: ok,
  });
const api = defineRoute({
  method: "POST",
  path: "/api/things/{id}",
  scope: "write",
  operationId: "postThing",
  summary: "a thing",
  tags: [],
  params: z.object({ id: z.string() }),
  query: { limit: intQuery("limit", 1, 10, "How many.") },
  body: { schema: z.object({ a: z.string("a must be text."), b: z.boolean("b must be true or false.") }) },
  responses: {},
  handle: async (_app, input) => ({ status: 200, json: input }),
});
const router = new Router<RouteRecord>().add(page("GET"), page("POST"), api);

const refusal = (fn: () => unknown): HttpError => {
  try {
    fn();
  } catch (error) {
    if (error instanceof HttpError) return error;
    throw error;
  }
  throw new Error("no refusal");
};

test("a page's segment has its own pattern, its path no trailing slash, and its GET answers HEAD", () => {
  assert.is(router.match("GET", "/p/abc").params.code, "abc");
  assert.is(router.match("HEAD", "/p/abc").route.method, "GET");
  assert.is(router.find("HEAD", "/p/abc")?.method, "GET");
  assert.is(refusal(() => router.match("GET", "/p/abcd")).status, 404);
  assert.is(refusal(() => router.match("GET", "/p/abc/")).status, 404);
  const wrong = refusal(() => router.match("DELETE", "/p/abc"));
  assert.ok(wrong instanceof MethodNotAllowed && wrong.bare, "a page's 405 has no JSON body");
  assert.equal(wrong.headers, { allow: "GET, HEAD, POST" });
});

test("the JSON API keeps its trailing slash, its JSON 405 and its 404", () => {
  assert.is(router.match("POST", "/api/things/x/").params.id, "x");
  const wrong = refusal(() => router.match("GET", "/api/things/x"));
  assert.ok(wrong instanceof MethodNotAllowed && !wrong.bare);
  assert.is(wrong.message, "GET is not allowed on /api/things/x.");
  assert.is(refusal(() => router.match("HEAD", "/api/things/x")).status, 405, "HEAD is a page's only");
  assert.is(refusal(() => router.match("GET", "/api/nope")).message, "No such endpoint: GET /api/nope.");
});

function request(query: string, body: unknown): CompatRequest {
  return {
    method: "POST",
    path: "/api/things/x",
    query: new URLSearchParams(query),
    headers: {},
    params: { id: "x" },
    json: async () => body,
    signal: new AbortController().signal,
    principal: { actor: { kind: "owner" }, scopes: [] },
  };
}
const app = {} as App;
const refused = async (query: string, body: unknown): Promise<string> => {
  try {
    await api.handle(app, request(query, body));
  } catch (error) {
    if (error instanceof HttpError && error.status === 400) return error.message;
    throw error;
  }
  throw new Error("accepted");
};

test("a record's handler gets parsed input; a bad one is a 400 in the record's words, the first field first", async () => {
  assert.equal(await api.handle(app, request("limit=3", { a: "x", b: true, extra: 1 })), {
    status: 200,
    json: { params: { id: "x" }, query: { limit: 3 }, body: { a: "x", b: true } },
  });
  assert.is(await refused("limit=11", { a: "x", b: true }), "limit must be a whole number from 1 to 10.");
  assert.is(await refused("limit=1&limit=2", { a: "x", b: true }), "limit may be given once.");
  assert.is(await refused("", [1]), "The body must be a JSON object.");
  assert.is(await refused("", { b: "no" }), "a must be text.");
  assert.is(await refused("", { a: "x" }), "b must be true or false.");
});

test("every record of the REST table has a unique operationId and a response for each answer", () => {
  const ids = restRouter()
    .list()
    .map((route) => route.operationId);
  assert.is(new Set(ids).size, ids.length);
  for (const route of restRouter().list()) assert.ok(Object.keys(route.responses).length > 0, route.operationId);
});

test.run();

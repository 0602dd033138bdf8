// GET /api/openapi.json: a valid OpenAPI 3.1 document (@readme/openapi-parser), whose paths are
// exactly what the server routes, method for method (the REST route table, the decide links), whose top-level webhooks are exactly the event types the code sends; the SSE stream is
// text/event-stream. The tables are imported here, on top, so compat/ needs no src/server import.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { validate, compileErrors } from "@readme/openapi-parser";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { restRoutes } from "../../compat/index.ts";
import type { Route } from "../../compat/router.ts";
import { DECIDE_PREFIX } from "../../src/webhooks/links.ts";
import { WEBHOOK_TYPES } from "../../src/webhooks/event-types.ts";

type Served = { method: string; path: string };
type Doc = { paths: Record<string, Record<string, unknown>>; webhooks: Record<string, Record<string, any>> };

/** "GET /api/trust" for each operation of a document. */
function documented(doc: Pick<Doc, "paths">): string[] {
  return Object.entries(doc.paths)
    .flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`))
    .sort();
}

const routed = (routes: readonly Served[]): string[] => routes.map((r) => `${r.method} ${r.path}`).sort();

/** What the route-table check says is missing each way. */
function mismatch(doc: Pick<Doc, "paths">, routes: readonly Served[]) {
  const inDoc = new Set(documented(doc));
  const inTable = new Set(routed(routes));
  return {
    undocumented: [...inTable].filter((r) => !inDoc.has(r)),
    unrouted: [...inDoc].filter((r) => !inTable.has(r)),
  };
}

test("the served document is valid OpenAPI 3.1", async () => {
  const server = await startTestServer();
  try {
    const res = await server.get("/api/openapi.json");
    assert.is(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /application\/json/);
    assert.is(res.body.openapi, "3.1.0");
    // validate() dereferences in place: hand it a copy, keep the served one to compare.
    const result = await validate(structuredClone(res.body));
    assert.ok(result.valid, result.valid ? "" : compileErrors(result));
    const events = res.body.paths["/api/events"].get.responses["200"].content;
    assert.equal(Object.keys(events), ["text/event-stream"], "the SSE stream is text/event-stream");
    // A broken document is refused, so the check above can fail.
    const broken = structuredClone(res.body);
    broken.paths["/api/trust"].get.responses = { "200": { content: {} } };
    assert.not.ok((await validate(broken)).valid, "a response without a description is invalid");
  } finally {
    await server.close();
  }
});

// A path of the decide links' shape (src/webhooks/links.ts isDecidePath) that no key signed.
const UNSIGNED_LINK = `${DECIDE_PREFIX}${"A".repeat(12)}.${"B".repeat(43)}`;
const DECIDE_TEMPLATE = `${DECIDE_PREFIX}{link}`;

/**
 * The decide links' operations as the server answers them: the methods its 405 allows (HEAD
 * left out: OpenAPI documents it with the GET).
 */
async function decideRoutes(server: TestServer): Promise<Served[]> {
  const res = await server.request("DELETE", UNSIGNED_LINK);
  assert.is(res.status, 405);
  const allowed = (res.headers.get("allow") ?? "")
    .split(",")
    .map((m) => m.trim())
    .filter((m) => m !== "" && m !== "HEAD");
  assert.ok(allowed.length > 0, "the 405 names the methods a decide link takes");
  return allowed.map((method) => ({ method, path: DECIDE_TEMPLATE }));
}

test("every route the server serves is documented, and every documented path is routed", async () => {
  const server = await startTestServer();
  try {
    const doc = (await server.get("/api/openapi.json")).body;
    const served: Served[] = [...restRoutes, ...(await decideRoutes(server))];
    assert.equal(mismatch(doc, served), { undocumented: [], unrouted: [] });
    // The check fails both ways: a route the document lacks, a path no route serves.
    const extra: Route = { method: "POST", path: "/api/trust", handle: async () => ({ status: 204 }) };
    assert.equal(mismatch(doc, [...served, extra]).undocumented, ["POST /api/trust"]);
    assert.equal(
      mismatch(
        doc,
        served.filter((r) => r.path !== "/api/crows"),
      ).unrouted,
      ["GET /api/crows"],
    );
    assert.equal(
      mismatch(
        doc,
        served.filter((r) => r.path !== "/api/webhooks/{id}/recover"),
      ).unrouted,
      ["POST /api/webhooks/{id}/recover"],
    );
    assert.equal(
      mismatch(
        doc,
        served.filter((r) => !(r.path === DECIDE_TEMPLATE && r.method === "POST")),
      ).unrouted,
      [`POST ${DECIDE_TEMPLATE}`],
    );
    const withoutRotate = structuredClone(doc);
    delete withoutRotate.paths["/api/webhooks/{id}/rotate-secret"];
    assert.equal(mismatch(withoutRotate, served).undocumented, ["POST /api/webhooks/{id}/rotate-secret"]);
    // The decide pages are HTML, as documented, and no token is asked for them.
    const decide = doc.paths[DECIDE_TEMPLATE];
    for (const method of ["get", "post"]) {
      assert.equal(decide[method].security, [], `${method} of a decide link asks no token`);
      for (const [status, response] of Object.entries<any>(decide[method].responses)) {
        if (status !== "403") assert.equal(Object.keys(response.content), ["text/html"], `${method} ${status}`);
      }
    }
    const page = await server.get(UNSIGNED_LINK);
    assert.is(page.status, 404);
    assert.ok(decide.get.responses["404"], "the not-valid page is documented");
    assert.match(page.headers.get("content-type") ?? "", /^text\/html/);
    // And each documented GET without path parameters really answers (no 404/405 from the router).
    for (const op of documented(doc).filter((o) => o.startsWith("GET ") && !o.includes("{"))) {
      const path = op.slice(4);
      if (path === "/api/events") continue; // a stream: needs a list or nest
      const res = await server.get(path);
      assert.ok(res.status < 300, `${op}: ${res.status}`);
    }
  } finally {
    await server.close();
  }
});

test("the top-level webhooks are the event types the code sends, each signed the Standard Webhooks way", async () => {
  const server = await startTestServer();
  try {
    const doc: Doc = (await server.get("/api/openapi.json")).body;
    const types = (webhooks: Doc["webhooks"]) => Object.keys(webhooks).sort();
    assert.equal(types(doc.webhooks), [...WEBHOOK_TYPES].sort());
    for (const [type, item] of Object.entries(doc.webhooks)) {
      assert.equal(Object.keys(item), ["post"], type);
      const op = item.post;
      const headers = op.parameters.filter((p: any) => p.in === "header" && p.required).map((p: any) => p.name);
      assert.equal(headers, ["webhook-id", "webhook-timestamp", "webhook-signature"], type);
      const schema = op.requestBody.content["application/json"].schema;
      assert.equal(schema.required, ["type", "timestamp", "data"], type);
      assert.is(schema.properties.type.const, type, `${type}'s body names its type`);
    }
    // The comparison fails when the document lacks a type the code sends.
    const fewer = structuredClone(doc.webhooks);
    delete fewer["crow.flagged"];
    assert.not.equal(types(fewer), [...WEBHOOK_TYPES].sort());
  } finally {
    await server.close();
  }
});

test.run();

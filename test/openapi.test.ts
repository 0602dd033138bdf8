// GET /api/openapi.json: a valid OpenAPI 3.1 document (@readme/openapi-parser), whose paths are
// exactly compat's route table, method for method; the SSE stream is text/event-stream.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { validate, compileErrors } from "@readme/openapi-parser";
import { startTestServer } from "./helpers/server.ts";
import { compatRoutes } from "../compat/index.ts";
import type { Route } from "../compat/router.ts";

/** "GET /api/trust" for each operation of a document. */
function documented(doc: { paths: Record<string, Record<string, unknown>> }): string[] {
  return Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`)).sort();
}

const routed = (routes: readonly Route[]): string[] => routes.map((r) => `${r.method} ${r.path}`).sort();

/** What the route-table check says is missing each way. */
function mismatch(doc: { paths: Record<string, Record<string, unknown>> }, routes: readonly Route[]) {
  const inDoc = new Set(documented(doc));
  const inTable = new Set(routed(routes));
  return { undocumented: [...inTable].filter((r) => !inDoc.has(r)), unrouted: [...inDoc].filter((r) => !inTable.has(r)) };
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

test("every route of compat's table is documented, and every documented path is routed", async () => {
  const server = await startTestServer();
  try {
    const doc = (await server.get("/api/openapi.json")).body;
    assert.equal(mismatch(doc, compatRoutes), { undocumented: [], unrouted: [] });
    // The check fails both ways: a route the document lacks, a path no route serves.
    const extra: Route = { method: "POST", path: "/api/trust", handle: async () => ({ status: 204 }) };
    assert.equal(mismatch(doc, [...compatRoutes, extra]).undocumented, ["POST /api/trust"]);
    assert.equal(mismatch(doc, compatRoutes.filter((r) => r.path !== "/api/crows")).unrouted, ["GET /api/crows"]);
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

test.run();

// The console's serving rules, over plain HTTP: the page and its bundle from the server's own
// origin with a CSP that keeps the browser there, GET/HEAD only, clear 404s, and the API untouched.
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

test("GET / is the page: it loads only its own bundle, under a same-origin CSP", async () => {
  for (const path of ["/", "/index.html", "/?token=ignored-here"]) {
    const response = await fetch(server.url + path);
    assert.is(response.status, 200, path);
    assert.match(response.headers.get("content-type") ?? "", /^text\/html/);
    const csp = response.headers.get("content-security-policy") ?? "";
    for (const rule of ["default-src 'none'", "script-src 'self'", "connect-src 'self'", "style-src 'self'"])
      assert.ok(csp.includes(rule), `${rule} in ${csp}`);
    assert.is(response.headers.get("x-content-type-options"), "nosniff");
    const html = await response.text();
    const urls = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    assert.equal(
      urls.filter((u) => !u!.startsWith("data:")),
      ["/console/app.css", "/console/app.js"],
    );
  }
});

test("the bundle, its stylesheet and the calibration diagram are served; nothing in them reaches off the origin", async () => {
  const js = await fetch(server.url + "/console/app.js");
  assert.is(js.status, 200);
  assert.match(js.headers.get("content-type") ?? "", /^text\/javascript/);
  const code = await js.text();
  assert.ok(code.length > 10_000, "a real bundle");
  assert.ok(
    code.includes("/graphql/stream") && code.includes("same-origin"),
    "subscriptions on this origin, with the cookie",
  );
  assert.not.match(code, /https?:\/\/(?!www\.w3\.org)[a-z0-9.-]+\.[a-z]{2,}\//i, "no absolute URL to fetch from");
  const css = await fetch(server.url + "/console/app.css");
  assert.is(css.status, 200);
  assert.match(css.headers.get("content-type") ?? "", /^text\/css/);
  assert.not.match(await css.text(), /@import|url\(\s*["']?https?:/, "no remote stylesheet or font");
  const svg = await fetch(server.url + "/console/jev-reliability.svg");
  assert.is(svg.status, 200);
  assert.is(svg.headers.get("content-type"), "image/svg+xml");
});

test("HEAD answers without a body; other methods are 405 with a message; unknown files are 404", async () => {
  const head = await fetch(server.url + "/console/app.js", { method: "HEAD" });
  assert.is(head.status, 200);
  assert.is(await head.text(), "");
  for (const method of ["POST", "PUT", "DELETE"]) {
    const response = await server.request(method, "/", "{}");
    assert.is(response.status, 405, method);
    assert.is(response.headers.get("allow"), "GET, HEAD");
    assert.type(response.body.message, "string");
  }
  // Assets are a fixed map, never a path joined onto the disk, so no name can reach another file.
  for (const path of ["/console/", "/console/nope.js", "/console/app.js.map", "/console/dist/app.js"]) {
    const response = await server.get(path);
    assert.is(response.status, 404, path);
    assert.type(response.body.message, "string");
  }
});

test("the API keeps its paths: /graphql, /api/* and unknown paths are not the console", async () => {
  assert.is((await server.get("/api/personas")).status, 200);
  const graphql = await server.post("/graphql", { query: "{ roster }" });
  assert.is(graphql.status, 200);
  assert.is(graphql.body.data.roster.length, 8);
  assert.is((await server.get("/elsewhere")).status, 404);
});

test.run();

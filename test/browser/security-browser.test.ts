// A real browser (Debian's Chromium through puppeteer-core) on pages served from two other loopback
// origins. The owner opened /?token= once, so the browser holds the crows_token cookie. A page from
// the origin listed in CROWS_CORS_ORIGINS can POST JSON and follow /api/events with EventSource; a
// page from an unlisted origin cannot read anything, and its "simple" requests (text/plain fetch,
// HTML forms, no-cors GraphQL) store nothing even though the browser attaches the cookie.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { Browser } from "puppeteer-core";
import { browserTests, launchBrowser, openPage } from "../helpers/browser.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

const TOKEN = "browser-owner-token-0123456789";

/** A page server on its own loopback port: its origin is another origin than the crows server's. */
async function pageServer(): Promise<{ origin: string; close(): Promise<void> }> {
  const server = http.createServer((_req, res) => {
    res
      .writeHead(200, { "content-type": "text/html; charset=utf-8" })
      .end("<!doctype html><title>elsewhere</title><p>another origin</p>");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { origin: `http://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

const { executable, it } = browserTests("security-browser");
let browser: Browser;
let crows: TestServer;
let listed: Awaited<ReturnType<typeof pageServer>>;
let unlisted: Awaited<ReturnType<typeof pageServer>>;

it.before(async () => {
  listed = await pageServer();
  unlisted = await pageServer();
  crows = await startTestServer({ env: { CROWS_TOKEN: TOKEN, CROWS_CORS_ORIGINS: listed.origin } });
  browser = await launchBrowser(executable);
  // The owner presents the token once; the cookie stays, the token leaves the address bar.
  const page = await browser.newPage();
  await page.goto(`${crows.url}/?token=${TOKEN}`);
  assert.ok(!page.url().includes(TOKEN), `the address bar no longer shows the token: ${page.url()}`);
  const cookies = await browser.cookies();
  const cookie = cookies.find((c) => c.name === "crows_token");
  assert.ok(cookie, "the cookie is set");
  assert.ok(cookie!.httpOnly, "HttpOnly");
  assert.is(cookie!.sameSite, "Strict");
  await page.close();
});
it.after(async () => {
  await browser?.close();
  await crows?.close();
  await listed?.close();
  await unlisted?.close();
});

it("a listed origin posts JSON and follows /api/events with EventSource, on the owner's cookie", async () => {
  const { page, errors } = await openPage(browser, [listed.origin, crows.url]);
  await page.goto(listed.origin);
  const result = await page.evaluate(async (base: string) => {
    const post = await fetch(`${base}/api/lists`, {
      method: "POST",
      credentials: "include",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ text: "buy milk", requester: "browser" }),
    });
    const { list_id } = (await post.json()) as { list_id: string };
    const first = await new Promise<string>((resolve, reject) => {
      const source = new EventSource(`${base}/api/events?list_id=${list_id}`, { withCredentials: true });
      source.addEventListener("list.started", (event) => {
        source.close();
        resolve((event as MessageEvent).data as string);
      });
      source.onerror = () => {
        source.close();
        reject(new Error("EventSource failed"));
      };
      setTimeout(() => reject(new Error("no event within 10 s")), 10_000);
    });
    return { status: post.status, list_id, first };
  }, crows.url);
  assert.is(result.status, 202);
  assert.is(JSON.parse(result.first).list_id, result.list_id);
  assert.equal(errors, [], "the page ran clean");
});

it("an unlisted origin reads nothing, and its simple POSTs store nothing", async () => {
  const before = await crows.app.prisma.todoList.count();
  const { page } = await openPage(browser, [unlisted.origin, crows.url]);
  await page.goto(unlisted.origin);
  await page.evaluate("window.__name = (f) => f"); // tsx names inner functions with a helper the page lacks
  const result = await page.evaluate(async (base: string) => {
    const outcome = async (run: () => Promise<unknown>) => {
      try {
        return `resolved ${String(await run())}`;
      } catch (error) {
        return `rejected ${(error as Error).name}`;
      }
    };
    const body = JSON.stringify({ text: "pwned", requester: "owner" });
    const mutation = 'mutation { submitList(text: "pwned", requester: "owner") { __typename } }';
    const readJson = await outcome(async () => (await fetch(`${base}/api/nests`, { credentials: "include" })).status);
    const postJson = await outcome(
      async () =>
        (
          await fetch(`${base}/api/lists`, {
            method: "POST",
            credentials: "include",
            headers: { "content-type": "application/json" },
            body,
          })
        ).status,
    );
    // Simple requests: no preflight, the browser sends them and only hides the answer.
    await fetch(`${base}/api/lists`, {
      method: "POST",
      mode: "no-cors",
      credentials: "include",
      headers: { "content-type": "text/plain" },
      body,
    });
    await fetch(`${base}/api/lists`, {
      method: "POST",
      mode: "no-cors",
      credentials: "include",
      body: new Blob([body]),
    });
    await fetch(`${base}/graphql`, {
      method: "POST",
      mode: "no-cors",
      credentials: "include",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: `query=${encodeURIComponent(mutation)}`,
    });
    await fetch(`${base}/graphql`, {
      method: "POST",
      mode: "no-cors",
      credentials: "include",
      headers: { "content-type": "text/plain" },
      body: JSON.stringify({ query: mutation }),
    });
    await fetch(`${base}/graphql?query=${encodeURIComponent(mutation)}`, { mode: "no-cors", credentials: "include" });
    // An HTML form, posted into a hidden frame, as a hostile page would.
    const frame = document.createElement("iframe");
    frame.name = "sink";
    document.body.append(frame);
    const forms: string[] = [];
    for (const [action, enctype, name, value] of [
      [`${base}/api/lists`, "text/plain", `{"text":"pwned","requester":"owner","x":"`, `"}`],
      [`${base}/graphql`, "application/x-www-form-urlencoded", "query", mutation],
    ]) {
      const form = document.createElement("form");
      Object.assign(form, { method: "POST", action, enctype, target: "sink" });
      const input = Object.assign(document.createElement("input"), { type: "hidden", name, value });
      form.append(input);
      document.body.append(form);
      // The frame loads the server's answer: proof the form was posted (a refusal is still a load).
      const loaded = new Promise<string>((resolve) =>
        frame.addEventListener("load", () => resolve("loaded"), { once: true }),
      );
      form.submit();
      forms.push(
        await Promise.race([
          loaded,
          new Promise<string>((resolve) => setTimeout(() => resolve(`${enctype}: no answer within 30 s`), 30_000)),
        ]),
      );
    }
    const stream = await new Promise<string>((resolve) => {
      const source = new EventSource(`${base}/api/events?nest_id=todo`, { withCredentials: true });
      source.onopen = () => resolve("open");
      source.onerror = () => {
        source.close();
        resolve("error");
      };
      setTimeout(() => resolve("timeout"), 5_000);
    });
    return { readJson, postJson, stream, forms };
  }, crows.url);
  assert.is(result.readJson, "rejected TypeError", "CORS hides the answer");
  assert.is(result.postJson, "rejected TypeError", "the preflight is refused");
  assert.is(result.stream, "error", "EventSource cannot connect");
  assert.equal(result.forms, ["loaded", "loaded"], "both forms were posted and answered");
  assert.is(await crows.app.prisma.todoList.count(), before, "nothing was stored");
});

test.run();

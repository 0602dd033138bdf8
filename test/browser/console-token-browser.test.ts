// The owner console with CROWS_TOKEN set, in a real Chromium: without the cookie the owner gets a
// plain page saying to open /?token=<token> (not raw JSON); /?token= sets the HttpOnly,
// SameSite=Strict cookie and lands on the console, which then works end to end over that cookie
// alone (fetch and the graphql-sse streams), with no error, nothing off the origin, and the token
// nowhere the page's scripts can read. A wrong token gets a refusal page; a read-only token sees
// everything and every write it tries is refused in front of the owner. Each role browses in its
// own isolated context, so no cookie leaks between them.
import { mkdirSync } from "node:fs";
import path from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { Browser, BrowserContext, HTTPResponse, Page } from "puppeteer-core";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { browserTests, launchBrowser, openPage, type WatchedPage } from "../helpers/browser.ts";

const SHOTS = path.resolve("test-output", "screenshots");
const { executable, it } = browserTests("console-token-browser");

const OWNER = "owner-console-token-0123456789abcdef";
const READER = "reader-console-token-0123456789abcdef";

let server: TestServer;
let browser: Browser;
const contexts: BrowserContext[] = [];

/** REST or GraphQL as an API client with the owner's Bearer token. */
const api = (method: string, p: string, body?: unknown) =>
  server.request(method, p, body, { authorization: `Bearer ${OWNER}` });

async function graphql(query: string, variables: Record<string, unknown> = {}): Promise<any> {
  const response = await api("POST", "/graphql", { query, variables });
  assert.is(response.status, 200, response.text);
  assert.not.ok(response.body.errors, response.text);
  return response.body.data;
}

const storedList = async (id: string) =>
  (await graphql("query($id: ID!) { list(id: $id) { status requester items { text } } }", { id })).list;
const storedListIds = async () =>
  (await graphql("{ lists(limit: 100) { id } }")).lists.map((l: { id: string }) => l.id);
const pendingApprovals = async () =>
  (await graphql("{ approvals(status: pending, limit: 500) { target item { list { id } } } }")).approvals.map(
    (a: { target: string; item: { list: { id: string } } }) => `${a.item.list.id}:${a.target}`,
  );

async function freshPage(): Promise<WatchedPage> {
  const context = await browser.createBrowserContext();
  contexts.push(context);
  const watched = await openPage(context, [server.url]);
  await watched.page.setViewport({ width: 1360, height: 900 });
  return watched;
}

async function shot(page: Page, name: string): Promise<void> {
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

async function until<T>(watched: WatchedPage, what: string, check: () => T, timeoutMs = 10_000): Promise<T> {
  try {
    const handle = await watched.page.waitForFunction(check, { timeout: timeoutMs, polling: 50 });
    return (await handle.jsonValue()) as T;
  } catch (error) {
    const body = await watched.page.evaluate(() => document.body.innerText).catch(() => "");
    throw new Error(
      `${what}: ${(error as Error).message}\nerrors: ${JSON.stringify(watched.errors)}\npage: ${body.slice(0, 1500)}`,
    );
  }
}

/** What a refusal page must be: HTML the owner can read, self-contained, no script, no JSON. */
async function assertRefusalPage(
  watched: WatchedPage,
  response: HTTPResponse | null,
  status: number,
  says: RegExp,
): Promise<string> {
  assert.ok(response, "a response");
  assert.is(response!.status(), status);
  assert.match(response!.headers()["content-type"] ?? "", /^text\/html/);
  assert.match(response!.headers()["www-authenticate"] ?? "", /^Bearer/);
  assert.match(response!.headers()["content-security-policy"] ?? "", /default-src 'none'/);
  const { text, scripts, links, images, title } = await watched.page.evaluate(() => ({
    text: document.body.innerText,
    scripts: document.scripts.length,
    links: [...document.querySelectorAll("link[href]")].map((l) => l.getAttribute("href")),
    images: document.images.length,
    title: document.title,
  }));
  assert.match(text, says);
  assert.is(scripts, 0, "no script on the refusal page");
  assert.is(images, 0);
  assert.ok(
    links.every((href) => href === "data:,"),
    `no linked asset: ${JSON.stringify(links)}`,
  );
  assert.match(title, /crows/);
  assert.not.ok(text.trim().startsWith("{"), `not raw JSON: ${text}`);
  assert.not.match(text, /Approvals/, "not the console");
  return text;
}

it.before(async () => {
  server = await startTestServer({ env: { CROWS_BANTER_WAIT_MS: "0", CROWS_TOKEN: OWNER, CROWS_READ_TOKENS: READER } });
  browser = await launchBrowser(executable);
});

it.after(async () => {
  for (const context of contexts) await context.close().catch(() => {});
  await browser?.close();
  await server?.close();
});

it("without the cookie, / is a page telling the owner to open /?token=<token>; API clients keep the JSON 401", async () => {
  const watched = await freshPage();
  for (const target of ["/", "/index.html", "/#trust", "/#lists/abc"]) {
    await watched.page.goto("about:blank");
    const response = await watched.page.goto(server.url + target, { waitUntil: "load" });
    const text = await assertRefusalPage(watched, response, 401, /\/\?token=<token>/);
    assert.match(text, /CROWS_TOKEN/);
  }
  await shot(watched.page, "token-needed");
  assert.equal(await watched.page.cookies(), [], "nothing set");
  // HEAD as a browser would send it: the page's headers, no body.
  const head = await fetch(server.url + "/", { method: "HEAD", headers: { accept: "text/html" } });
  assert.is(head.status, 401);
  assert.match(head.headers.get("content-type") ?? "", /^text\/html/);
  assert.is(await head.text(), "");
  assert.equal(watched.offOrigin, []);
  // The browser logs the 401 itself; nothing else.
  assert.equal(
    watched.errors.filter((e) => !/status of 401/.test(e)),
    [],
  );

  // The page's own form does the /?token= exchange: a typo is refused, the token opens the console.
  await watched.page.locator('::-p-aria([name="Token"][role="textbox"])').fill("not-the-token-0123456789");
  const [refused] = await Promise.all([
    watched.page.waitForNavigation(),
    watched.page.locator('::-p-aria([name="Open the console"][role="button"])').click(),
  ]);
  await assertRefusalPage(watched, refused, 401, /not valid/);
  await watched.page.locator('::-p-aria([name="Token"][role="textbox"])').fill(OWNER);
  const [opened] = await Promise.all([
    watched.page.waitForNavigation(),
    watched.page.locator('::-p-aria([name="Open the console"][role="button"])').click(),
  ]);
  assert.is(opened!.status(), 200);
  assert.is(watched.page.url(), server.url + "/");
  await watched.page.waitForSelector('::-p-aria([name="Approvals"][role="region"])');
  assert.equal(
    (await watched.page.cookies()).map((c) => c.name),
    ["crows_token"],
  );
  assert.equal(
    watched.errors.filter((e) => !/status of 401/.test(e)),
    [],
  );
  assert.equal(watched.offOrigin, []);

  // The same paths for an API client (no Accept, */*, JSON, an event stream): JSON with a message.
  for (const accept of [
    undefined,
    "*/*",
    "application/json",
    "text/event-stream",
    "application/graphql-response+json",
  ]) {
    for (const p of ["/", "/api/nests", "/graphql?query=%7B__typename%7D", "/console/app.js"]) {
      const response = await fetch(server.url + p, { headers: accept ? { accept } : {} });
      assert.is(response.status, 401, `${p} accept ${accept}`);
      assert.match(response.headers.get("content-type") ?? "", /^application\/json/, `${p} accept ${accept}`);
      assert.type((await response.json()).message, "string");
    }
  }
});

it("a wrong token gets a refusal page, sets no cookie, and never echoes what was typed", async () => {
  const watched = await freshPage();
  for (const wrong of [
    "wrong-token-0123456789abcdef",
    OWNER.slice(0, -1),
    OWNER + "x",
    "",
    "<b>bold</b>",
    READER + " ",
  ]) {
    const response = await watched.page.goto(`${server.url}/?token=${encodeURIComponent(wrong)}`, {
      waitUntil: "load",
    });
    const text = await assertRefusalPage(watched, response, 401, /not valid/);
    if (wrong.length > 3)
      assert.not.ok((await watched.page.content()).includes(wrong), "the wrong token is not echoed");
    assert.match(text, /\/\?token=<token>/);
  }
  await shot(watched.page, "token-wrong");
  assert.equal(await watched.page.cookies(), []);
  assert.equal(watched.offOrigin, []);
  assert.equal(
    watched.errors.filter((e) => !/status of 401/.test(e)),
    [],
  );
});

it("/?token= sets the HttpOnly SameSite=Strict cookie and the console works end to end on it", async () => {
  const watched = await freshPage();
  const { page } = watched;
  const response = await page.goto(`${server.url}/?token=${OWNER}`, { waitUntil: "load" });
  assert.is(response!.status(), 200);
  const chain = response!.request().redirectChain();
  assert.is(chain.length, 1, "one redirect");
  assert.is(chain[0]!.response()!.status(), 303);
  assert.is(page.url(), server.url + "/", "the token left the address bar");
  const cookies = await page.cookies();
  assert.is(cookies.length, 1);
  assert.is(cookies[0]!.name, "crows_token");
  assert.ok(cookies[0]!.httpOnly, "HttpOnly");
  assert.is(cookies[0]!.sameSite, "Strict");
  assert.is(cookies[0]!.path, "/");
  await page.waitForSelector('::-p-aria([name="Approvals"][role="region"])');
  await until(watched, "the streams are live", () =>
    document.querySelector(".connections")?.textContent?.startsWith("live"),
  );

  // Send a list from the page.
  await page.locator("::-p-aria(Todo list)").fill("- Buy milk\n- Write a haiku about crows");
  await page.locator("::-p-aria(Requester)").fill("ana");
  await page.locator('::-p-aria([name="Send"][role="button"])').click();
  const listId = await until(
    watched,
    "the new list opens",
    () => document.querySelector("article.list h3")?.textContent?.replace("List ", "") ?? "",
  );
  assert.equal(
    (await storedList(listId)).items.map((i: { text: string }) => i.text),
    ["Buy milk", "Write a haiku about crows"],
  );

  // Approve everything from the Approvals region until the list finishes (approvalChanges live).
  const approve = '::-p-aria([name="Approvals"][role="region"]) ::-p-aria([name="Approve"][role="button"])';
  const deadline = Date.now() + 25_000;
  let answered = 0;
  while (Date.now() < deadline) {
    if (await page.$eval("article.list .list-status", (el) => el.textContent === "finished")) break;
    const cards = await page.$$eval("section.approvals li.card", (els) =>
      els.map((c) => c.getAttribute("aria-label")).join("|"),
    );
    if (cards) {
      await (await page.waitForSelector(approve))!.click();
      answered++;
      await page.waitForFunction(
        (b) =>
          [...document.querySelectorAll("section.approvals li.card")]
            .map((c) => c.getAttribute("aria-label"))
            .join("|") !== b,
        { timeout: 10_000 },
        cards,
      );
    } else {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  await until(
    watched,
    "finished",
    () => document.querySelector("article.list .list-status")?.textContent === "finished",
  );
  assert.ok(answered >= 4, `two triages and two outputs approved from the page (${answered})`);
  assert.is((await storedList(listId)).status, "finished");
  // The list's events streamed in over the cookie (listEvents), numbered and each once.
  const seqs = await page.$$eval("ol.events li", (els) => els.map((el) => el.getAttribute("data-seq")));
  assert.ok(seqs.length > 5, `events streamed: ${seqs.length}`);
  assert.is(new Set(seqs).size, seqs.length);
  assert.match(await page.$eval("article.list", (el) => (el as HTMLElement).innerText), /Verdicts: triage approved/);
  await shot(page, "token-console");

  // The token is nowhere a script on the page can read.
  const visible = await page.evaluate(() => ({
    cookie: document.cookie,
    local: JSON.stringify({ ...localStorage }),
    session: JSON.stringify({ ...sessionStorage }),
    href: location.href,
    html: document.documentElement.outerHTML,
    referrer: document.referrer,
    names: Object.keys(window).join(","),
  }));
  for (const [where, value] of Object.entries(visible))
    assert.not.ok(value.includes(OWNER), `the token shows in ${where}`);
  assert.is(visible.cookie, "");
  assert.equal(watched.errors, []);
  assert.equal(watched.offOrigin, []);
});

it("a read-only token: the console loads and shows data; Send and Approve are refused in front of the owner", async () => {
  // Something for the reader to see, and an approval waiting.
  const waiting = await api("POST", "/api/lists", { text: "Water the plants", requester: "ana" });
  assert.is(waiting.status, 202, waiting.text);
  const waitingId = waiting.body.list_id as string;
  const watched = await freshPage();
  const { page } = watched;
  const response = await page.goto(`${server.url}/?token=${READER}`, { waitUntil: "load" });
  assert.is(response!.status(), 200);
  assert.is(page.url(), server.url + "/");
  await until(watched, "the streams are live", () =>
    document.querySelector(".connections")?.textContent?.startsWith("live"),
  );
  await page.waitForFunction(
    (id) => document.querySelector("nav[aria-label='Recent lists']")?.textContent?.includes(id),
    { timeout: 10_000 },
    waitingId,
  );
  await until(
    watched,
    "the waiting triage shows",
    () => document.querySelectorAll("section.approvals li.card").length === 1,
    15_000,
  );
  const listsBefore = await storedListIds();

  // Approve: refused, shown, and the card is still there because nothing was decided.
  await page.locator('::-p-aria([name="Approvals"][role="region"]) ::-p-aria([name="Approve"][role="button"])').click();
  const alert = await until(
    watched,
    "the refusal is shown",
    () => (document.querySelector("[role=alert]") as HTMLElement | null)?.innerText ?? "",
  );
  assert.match(alert, /Approve triage of "Water the plants": This token lacks the "decide" scope needed here\./);
  assert.is(await page.$$eval("section.approvals li.card", (els) => els.length), 1, "still pending");
  assert.equal(await pendingApprovals(), [`${waitingId}:triage`], "nothing was decided");

  // Send: refused, shown, nothing stored.
  await page.locator("::-p-aria(Todo list)").fill("- Steal the owner's crows");
  await page.locator('::-p-aria([name="Send"][role="button"])').click();
  await until(watched, "the send's refusal", () =>
    (document.querySelector("[role=alert]") as HTMLElement | null)?.innerText.includes(
      'Send the list: This token lacks the "write" scope needed here.',
    ),
  );
  await shot(page, "token-reader");
  assert.equal(await storedListIds(), listsBefore, "nothing was stored");
  assert.equal(await pendingApprovals(), [`${waitingId}:triage`], "still nothing decided");

  assert.equal(watched.offOrigin, []);
  // The browser logs each refused write's 403 itself; nothing else.
  assert.equal(
    watched.errors.filter((e) => !/status of 403/.test(e)),
    [],
  );
  assert.is(watched.errors.length, 2, JSON.stringify(watched.errors));
});

test.run();

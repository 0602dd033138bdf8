// The console's notifications in a real Chromium: "Notify me" asks the permission (granted through
// puppeteer); then each new approval raises a Notification while the page is hidden (none while it
// is in view), the title counts what waits ("(2) crows"), and clicking a notification focuses that
// approval's card. The page's Notification is wrapped to record what it was asked to show. And
// the Webhooks view: add (the secret shown once), list, remove.
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { Browser, Page } from "puppeteer-core";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { chromiumPath, launchBrowser, openPage, type WatchedPage } from "../helpers/browser.ts";

const executable = chromiumPath("console-notify-browser");
const it = executable ? test : test.skip;

/**
 * Runs in the page before its own scripts: a recording Notification, and a visibility the test sets.
 * Text, not a function: the test's compiler would add helpers to a function that the page lacks.
 */
const INSTRUMENT = `
  const Real = window.Notification;
  const notes = [];
  class Recording extends Real {
    constructor(title, options) {
      super(title, options);
      notes.push({ title, body: (options && options.body) || "", tag: (options && options.tag) || "", note: this });
    }
  }
  Object.defineProperty(window, "Notification", { value: Recording, configurable: true, writable: true });
  window.__notes = notes;
  window.__hidden = false;
  Object.defineProperty(document, "hidden", { get: () => window.__hidden, configurable: true });
  Object.defineProperty(document, "visibilityState", { get: () => (window.__hidden ? "hidden" : "visible"), configurable: true });
`;

const notes = (page: Page) =>
  page.evaluate(() =>
    (window as any).__notes.map((n: any) => ({ title: n.title, body: n.body, tag: n.tag })),
  ) as Promise<Array<{ title: string; body: string; tag: string }>>;
const setHidden = (page: Page, hidden: boolean) => page.evaluate((h) => ((window as any).__hidden = h), hidden);

it("Notify me, then a notification per new approval while hidden, the title count, and a click focuses the approval", async () => {
  let server: TestServer | undefined;
  let browser: Browser | undefined;
  try {
    server = await startTestServer({ env: { CROWS_APPROVAL_WINDOW_MS: "120000" } });
    browser = await launchBrowser(executable!);
    const context = await browser.createBrowserContext();
    const watched: WatchedPage = await openPage(context, [server.url]);
    const page = watched.page;
    await page.evaluateOnNewDocument(INSTRUMENT);
    await page.goto(server.url, { waitUntil: "load" });
    const button = await page.waitForSelector("xpath/.//button[text()='Notify me']", { timeout: 10_000 });
    await context.overridePermissions(server.url, ["notifications"]);
    await button!.click();
    await page.waitForSelector("xpath/.//p[text()='Notifications on']", { timeout: 10_000 });
    await page.waitForFunction(
      () => document.querySelector(".approvals .quiet")?.textContent === "Nothing waits on you.",
      { timeout: 10_000 },
    );
    assert.is(await page.title(), "crows");

    await setHidden(page, true);
    const first = await server.post("/api/lists", {
      text: "Buy milk\nWrite a haiku about crows",
      requester: "notify-1",
    });
    const listId = first.body.list_id as string;
    await page
      .waitForFunction(() => (window as any).__notes.length >= 2, { timeout: 20_000 })
      .catch(async (e) => {
        throw new Error(
          `${e.message}; title ${await page.title()}; permission ${await page.evaluate(() => Notification.permission)}; hidden ${await page.evaluate(() => document.hidden)}; errors ${watched.errors.join(" | ")}`,
        );
      });
    await page.waitForFunction(() => document.title === "(2) crows", { timeout: 10_000 });
    const raised = await notes(page);
    assert.equal(raised.map((n) => n.tag).sort(), [`${listId}-1|triage`, `${listId}-2|triage`]);
    assert.ok(raised.every((n) => /^Approve the triage\? /.test(n.title)));
    assert.equal(raised.map((n) => n.body).sort(), ["Buy milk", "Write a haiku about crows"]);

    // In view: the title counts it, no notification is raised.
    await setHidden(page, false);
    await server.post("/api/lists", { text: "Plan a picnic", requester: "notify-2" });
    await page.waitForFunction(() => document.title === "(3) crows", { timeout: 20_000 });
    assert.is((await notes(page)).length, 2);

    // Clicking a notification focuses its approval.
    const tag = raised[0]!.tag;
    await page.evaluate(
      (t) => (window as any).__notes.find((n: any) => n.tag === t).note.onclick(new Event("click")),
      tag,
    );
    const [itemId, target] = tag.split("|");
    await page.waitForFunction(
      (id) => document.activeElement?.id === id,
      { timeout: 5_000 },
      `approval-${itemId}-${target}`,
    );

    // Answered: the count goes down.
    await server.post("/api/verdicts", { item_id: `${listId}-1`, target: "triage", approve: false });
    await page.waitForFunction(() => document.title === "(2) crows", { timeout: 20_000 });
    assert.equal(watched.errors, []);
    assert.equal(watched.offOrigin, []);
  } finally {
    await browser?.close();
    await server?.close();
  }
});

it("the Webhooks view: add an endpoint (its secret shown once), see it listed with its events, remove it", async () => {
  let server: TestServer | undefined;
  let browser: Browser | undefined;
  try {
    server = await startTestServer({ env: { CROWS_WEBHOOK_ALLOW_PRIVATE: "1" } });
    browser = await launchBrowser(executable!);
    const watched = await openPage(browser, [server.url]);
    const page = watched.page;
    await page.goto(`${server.url}/#webhooks`, { waitUntil: "load" });
    await page.waitForSelector("xpath/.//p[text()='No endpoints yet.']", { timeout: 10_000 });
    await page.type("form[aria-label='Add a webhook'] input[type=url]", "http://127.0.0.1:9/hook");
    await (await page.waitForSelector("xpath/.//label[contains(., 'list.finished')]/input"))!.click();
    await (await page.waitForSelector("xpath/.//form//button[text()='Add']"))!.click();
    const secret = await page.waitForSelector(".secret code", { timeout: 10_000 });
    const shown = await secret!.evaluate((el) => el.textContent ?? "");
    assert.match(shown, /^whsec_/);
    const stored = await server.app.prisma.webhookEndpoint.findFirstOrThrow();
    assert.is(stored.secret, shown);
    await page.waitForSelector("li[aria-label='Webhook http://127.0.0.1:9/hook']", { timeout: 10_000 });
    const card = await page.$eval("li[aria-label='Webhook http://127.0.0.1:9/hook']", (el) => el.textContent ?? "");
    assert.match(card, /list\.finished/);
    await (await page.waitForSelector("xpath/.//button[text()='I have kept it']"))!.click();
    assert.is(await page.$(".secret code"), null);
    await (await page.waitForSelector(
      "xpath/.//li[@aria-label='Webhook http://127.0.0.1:9/hook']//button[text()='Remove']",
    ))!.click();
    // Removing asks first, in place (issue 33).
    await (await page.waitForSelector(
      "xpath/.//li[@aria-label='Webhook http://127.0.0.1:9/hook']//button[text()='Yes, remove']",
    ))!.click();
    await page.waitForSelector("xpath/.//p[text()='No endpoints yet.']", { timeout: 10_000 });
    assert.is(await server.app.prisma.webhookEndpoint.count(), 0);
    assert.equal(watched.errors, []);
    assert.equal(watched.offOrigin, []);
  } finally {
    await browser?.close();
    await server?.close();
  }
});

test.run();

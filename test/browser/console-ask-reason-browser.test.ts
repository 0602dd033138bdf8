// The owner's reason with a reply to an ask, from the console's Nests view (issue 33, docs/rules.md
// "Reasons", docs/console.md), on a desktop and on a 390 × 844 phone: Quill asks in a nest; the
// owner types a reason under the open ask and answers it. The reply's record and its nest.message
// event carry the reason, the ask is approved as the server says, and the room shows "Reason: ..."
// under the reply live and after a reload, read from the server. No horizontal scroll on the
// phone; the ask's reason box and answer are at least 44 px.
import * as assert from "uvu/assert";
import type { Browser, Page } from "puppeteer-core";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { browserTests, launchBrowser, openPage, type WatchedPage } from "../helpers/browser.ts";
import { nestStream } from "../../src/base/streams.ts";
import { MAX_REASON_CHARS } from "../../src/flock/reason.ts";

const { executable, it } = browserTests("console-ask-reason-browser");

const VIEWPORTS = [
  { name: "desktop", width: 1360, height: 900 },
  { name: "phone", width: 390, height: 844 },
] as const;

let server: TestServer;
let browser: Browser;

it.before(async () => {
  server = await startTestServer();
  browser = await launchBrowser(executable);
});
it.after(async () => {
  await browser?.close();
  await server?.close();
});

async function until<T>(watched: WatchedPage, what: string, check: (...args: any[]) => T, ...args: unknown[]) {
  try {
    const handle = await watched.page.waitForFunction(check, { timeout: 60_000, polling: 50 }, ...args);
    return (await handle.jsonValue()) as T;
  } catch (error) {
    const body = await watched.page.evaluate(() => document.body.innerText).catch(() => "");
    throw new Error(`${what}: ${(error as Error).message}\nerrors: ${JSON.stringify(watched.errors)}\n${body}`);
  }
}

/** No horizontal scroll, and the open asks' buttons and reason boxes at least 44 px each way. */
async function checkLayout(page: Page, where: string): Promise<void> {
  const { scrollWidth, innerWidth, controls, small } = await page.evaluate(() => {
    const found = [...document.querySelectorAll('section[aria-label="Open asks"] :is(button, input)')];
    return {
      scrollWidth: document.documentElement.scrollWidth,
      innerWidth: window.innerWidth,
      controls: found.length,
      small: found
        .map((el) => [el.textContent?.trim() || el.id, el.getBoundingClientRect()] as const)
        .filter(([, box]) => box.height < 44 || box.width < 44)
        .map(([name, box]) => `${name}: ${box.width}×${box.height}`),
    };
  });
  assert.ok(scrollWidth <= innerWidth, `${where}: no horizontal scroll (${scrollWidth} > ${innerWidth})`);
  assert.ok(controls > 0, `${where}: the open ask's controls are there`);
  assert.equal(small, [], `${where}: targets of at least 44 px`);
}

/** The reason shown under the message `msgId` in the room, or "" (run in the page). */
function shownReason(msgId: string): string {
  return document.querySelector(`li.message[title="${msgId}"] .reason-given`)?.textContent ?? "";
}

for (const viewport of VIEWPORTS) {
  it(`${viewport.name}: a reason typed under an open ask goes with the answer, is stored, and shows live and after a reload`, async () => {
    const phrase = `order the ${viewport.name} beans`;
    const asked = await server.post("/api/nests/todo/messages", {
      author: "Quill",
      kind: "ask_owner",
      text: `May the crows order beans? Reply "${phrase}".`,
      approval_phrase: phrase,
    });
    assert.is(asked.status, 201, asked.text);
    const askId = asked.body.msg_id as string;

    const watched = await openPage(browser, [server.url]);
    const { page } = watched;
    await page.setViewport({ width: viewport.width, height: viewport.height });
    await page.goto(`${server.url}/#nests`, { waitUntil: "load" });
    const ask = `section[aria-label="Open asks"] li[data-ask="${askId}"]`;
    await page.waitForSelector(ask, { timeout: 60_000 });
    await checkLayout(page, `${viewport.name}, the open ask`);

    // The box is labelled, bounded by the server's limit, and counts what is typed. A long word
    // in the reason must wrap on the phone, not widen the page.
    const box = `${ask} ::-p-aria([name="Reason (optional)"][role="textbox"])`;
    assert.is(await page.$eval(`${ask} input`, (el) => (el as HTMLInputElement).maxLength), MAX_REASON_CHARS);
    const reason = `Only the house blend, ${viewport.name}: https://example.test/${"beans".repeat(16)}`;
    await page.locator(box).fill(reason);
    await until(
      watched,
      "the count",
      (sel, n) => document.querySelector(`${sel} .count`)?.textContent === `${n} / 1,000 characters`,
      ask,
      [...reason].length,
    );
    await page.locator(`${ask} ::-p-aria([name='Answer "${phrase}"'][role="button"])`).click();

    // Stored: the reply's record carries the reason, and the ask is approved, as the server says.
    await until(watched, "the ask leaves Open asks", (sel) => !document.querySelector(sel), ask);
    const records = (await server.get("/api/nests/todo/messages")).body as any[];
    const reply = records.find((r) => r.refers_to === askId && r.author === "owner");
    assert.ok(reply, "the owner's reply");
    assert.equal([reply.text, reply.reason], [phrase, reason]);
    assert.is(records.find((r) => r.msg_id === askId).resolved, "approved");
    const events = await server.app.log.read(nestStream("todo"), 0, 100_000);
    const payload = events.map((e) => JSON.parse(e.payload)).find((p) => p.msg_id === reply.msg_id);
    assert.is(Object.keys(payload).at(-1), "reason", "appended last to its nest.message");
    assert.is(payload.reason, reason);

    // Shown live under the reply, then again after a reload (the messages read, not the box).
    await until(watched, "the reason shown live", shownReason, reply.msg_id);
    assert.is(await page.evaluate(shownReason, reply.msg_id), `Reason: ${reason}`);
    assert.is(await page.evaluate(shownReason, askId), "", "the ask itself has no reason line");
    await checkLayoutAfter(page, `${viewport.name}, the reply shown`);
    await page.reload({ waitUntil: "load" });
    await until(watched, "the reason after a reload", shownReason, reply.msg_id);
    assert.is(await page.evaluate(shownReason, reply.msg_id), `Reason: ${reason}`);
    await checkLayoutAfter(page, `${viewport.name}, after a reload`);
    assert.equal(watched.errors, []);
    assert.equal(watched.offOrigin, []);
    await page.close();
  });
}

/** No horizontal scroll once the reply and its reason are in the room. */
async function checkLayoutAfter(page: Page, where: string): Promise<void> {
  const { scrollWidth, innerWidth } = await page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    innerWidth: window.innerWidth,
  }));
  assert.ok(scrollWidth <= innerWidth, `${where}: no horizontal scroll (${scrollWidth} > ${innerWidth})`);
}

it.run();

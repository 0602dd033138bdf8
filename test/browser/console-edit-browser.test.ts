// "Edit and approve" on the console's approval cards (docs/rules.md "Edits", docs/console.md), on a
// desktop and on a 390 × 844 phone: a triage opened for editing (mode, task type, subtasks as
// lines) and approved with the changes, after which the work follows the edited triage (the edited
// subtasks are the ones flown); an output approved with the owner's own text, which is then the
// answer the list shows. The Decided list shows each edit: who, before → after. No horizontal
// scroll on the phone; the card's targets are at least 44 px tall.
import * as assert from "uvu/assert";
import { mkdirSync } from "node:fs";
import path from "node:path";
import type { Browser, Page } from "puppeteer-core";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { browserTests, launchBrowser, openPage, type WatchedPage } from "../helpers/browser.ts";
import { openSse, type SseClient } from "../helpers/sse.ts";

const { executable, it } = browserTests("console-edit-browser");

const VIEWPORTS = [
  { name: "desktop", width: 1360, height: 900 },
  { name: "phone", width: 390, height: 844 },
] as const;

/** Screenshots land in test-output/screenshots/ (gitignored), to look at what the owner sees. */
const SHOTS = path.resolve("test-output", "screenshots");
async function shot(page: Page, name: string): Promise<void> {
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

let server: TestServer;
let browser: Browser;
let requesters = 0;

it.before(async () => {
  server = await startTestServer();
  browser = await launchBrowser(executable);
});
it.after(async () => {
  await browser?.close();
  await server?.close();
});

const card = (label: string) => `li.card[aria-label="${label}"]`;

async function until<T>(watched: WatchedPage, what: string, check: (...args: any[]) => T, ...args: unknown[]) {
  try {
    const handle = await watched.page.waitForFunction(check, { timeout: 60_000, polling: 50 }, ...args);
    return (await handle.jsonValue()) as T;
  } catch (error) {
    const body = await watched.page.evaluate(() => document.body.innerText).catch(() => "");
    throw new Error(`${what}: ${(error as Error).message}\nerrors: ${JSON.stringify(watched.errors)}\n${body}`);
  }
}

async function submit(text: string): Promise<{ listId: string; sse: SseClient }> {
  const res = await server.post("/api/lists", { text, requester: `console-edit-${requesters++}` });
  assert.is(res.status, 202, res.text);
  const listId = res.body.list_id as string;
  return { listId, sse: await openSse(`${server.url}/api/events?list_id=${listId}`) };
}

/** No horizontal scroll, and every button, select and text box of the card at least 44 px tall. */
async function checkLayout(page: Page, selector: string, where: string): Promise<void> {
  const { scrollWidth, innerWidth, small } = await page.evaluate((sel) => {
    const controls = [
      ...document.querySelectorAll(
        `${sel} .actions button, ${sel} .more-actions button, ${sel} select, ${sel} textarea`,
      ),
    ];
    return {
      scrollWidth: document.documentElement.scrollWidth,
      innerWidth: window.innerWidth,
      small: controls
        .map((el) => [el.textContent?.trim() || el.tagName, el.getBoundingClientRect().height] as const)
        .filter(([, height]) => height < 44),
    };
  }, selector);
  assert.ok(scrollWidth <= innerWidth, `${where}: no horizontal scroll (${scrollWidth} > ${innerWidth})`);
  assert.equal(small, [], `${where}: targets of at least 44 px`);
}

for (const viewport of VIEWPORTS) {
  it(`${viewport.name}: edit and approve a triage, then an output; the work follows, the list shows the owner's text`, async () => {
    const watched = await openPage(browser, [server.url]);
    const { page } = watched;
    await page.setViewport({ width: viewport.width, height: viewport.height });
    await page.goto(`${server.url}/`, { waitUntil: "load" });

    // A triage: the Sentry calls a murder; the owner makes it a split of two, for writing.
    const bakery = await submit("Brainstorm names for a bakery");
    const triage = card("Triage of Brainstorm names for a bakery");
    await page.waitForSelector(triage, { timeout: 60_000 });
    await page.locator(`${triage} ::-p-aria([name="Edit and approve"][role="button"])`).click();
    await page.waitForSelector(`${triage} form.edit`);
    await page.select(`${triage} form.edit label:nth-of-type(1) select`, "split");
    await page.select(`${triage} form.edit label:nth-of-type(2) select`, "writing");
    const subtasks = ["Names that mention bread", "Names that mention the street"];
    await page.locator(`${triage} form.edit textarea`).fill(subtasks.join("\n"));
    await checkLayout(page, triage, `${viewport.name}, triage edit open`);
    await shot(page, `edit-triage-${viewport.name}`);
    await page.locator(`${triage} ::-p-aria([name="Approve with these changes"][role="button"])`).click();
    const triaged = await bakery.sse.waitFor((m) => m.event === "verdict" && m.data.target === "triage", 60_000);
    assert.equal(triaged.data.edited.after, { mode: "split", task_type: "writing", subtasks });
    assert.is(triaged.data.edited.before.mode, "murder");
    assert.equal(triaged.data.actor, { kind: "owner" });

    // The work follows the edit: one crow per edited subtask, then the Elder.
    const output = card("Output of Brainstorm names for a bakery");
    await page.waitForSelector(output, { timeout: 60_000 });
    const flown = bakery.sse
      .messages()
      .filter((m) => m.event === "crow.flying" && !["Sentry", "Elder"].includes(m.data.crow));
    assert.is(flown.length, 2, "two crows, one per edited subtask");
    const item = await server.app.log.state.item(`${bakery.listId}-1`);
    assert.equal([item?.mode, item?.taskType, JSON.parse(item!.subtasks)], ["split", "writing", subtasks]);
    await checkLayout(page, output, `${viewport.name}, output card`);
    await page.locator(`${output} button.approve`).click();
    await bakery.sse.waitFor((m) => m.event === "list.finished", 60_000);
    bakery.sse.close();

    // The Decided list shows the edit: who, before → after.
    const decided = await until(
      watched,
      "the triage edit is shown",
      () =>
        [...document.querySelectorAll('ul[aria-label="Decided approvals"] > li')]
          .map((li) => (li as HTMLElement).innerText)
          .find((text) => text.includes("Edited by owner") && text.includes("mode")) ?? "",
    );
    assert.match(decided, /mode: murder → split/);
    assert.match(decided, /subtasks: .* → Names that mention bread; Names that mention the street/);

    // An output: the owner rewrites the answer in the box, prefilled with the crows' answer.
    const note = await submit("Write a thank-you note to the plumber");
    const noteTriage = card("Triage of Write a thank-you note to the plumber");
    await page.waitForSelector(noteTriage, { timeout: 60_000 });
    await page.locator(`${noteTriage} button.approve`).click();
    const noteOutput = card("Output of Write a thank-you note to the plumber");
    await page.waitForSelector(noteOutput, { timeout: 60_000 });
    const answered = await note.sse.waitFor((m) => m.event === "item.answered", 60_000);
    await page.locator(`${noteOutput} ::-p-aria([name="Edit and approve"][role="button"])`).click();
    const box = `${noteOutput} form.edit textarea`;
    await page.waitForSelector(box);
    assert.is(await page.$eval(box, (el) => (el as HTMLTextAreaElement).value), answered.data.answer, "prefilled");
    await checkLayout(page, noteOutput, `${viewport.name}, output edit open`);
    await shot(page, `edit-output-${viewport.name}`);
    const mine = `Dear plumber, thank you: the sink is dry at last (${viewport.name}). Ana`;
    await page.locator(box).fill(mine);
    await page.locator(`${noteOutput} ::-p-aria([name="Approve with these changes"][role="button"])`).click();
    const verdict = await note.sse.waitFor((m) => m.event === "verdict" && m.data.target === "output", 60_000);
    assert.equal(verdict.data.edited, { before: { answer: answered.data.answer }, after: { answer: mine } });
    await note.sse.waitFor((m) => m.event === "list.finished", 60_000);
    note.sse.close();
    assert.is((await server.app.log.state.item(`${note.listId}-1`))?.answer, mine);

    // The answer the list shows is the owner's text, live and after a reload.
    await page.goto(`${server.url}/#lists/${note.listId}`, { waitUntil: "load" });
    const shown = () =>
      until(
        watched,
        "the list shows the owner's text",
        (text: string) =>
          (document.querySelector("article.list blockquote.answer") as HTMLElement | null)?.innerText.includes(text),
        mine,
      );
    await shown();
    await page.reload({ waitUntil: "load" });
    await shown();
    const outputEdit = await until(
      watched,
      "the output edit is shown",
      () =>
        [...document.querySelectorAll('ul[aria-label="Decided approvals"] > li')]
          .map((li) => (li as HTMLElement).innerText)
          .find((text) => text.includes("Edited by owner") && text.includes("answer")) ?? "",
    );
    assert.ok(outputEdit.includes(mine), outputEdit);
    await checkLayout(page, "section.decisions", `${viewport.name}, decided`);
    await shot(page, `edit-decided-${viewport.name}`);
    assert.equal(watched.errors, []);
    assert.equal(watched.offOrigin, []);
    await page.close();
  });
}

it.run();

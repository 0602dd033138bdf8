// The console's Nests view for the owner's decisions: a crow breaches, the Sentry flags it and
// asks; the page shows the open ask with its phrase and the quarantine with Reinstate / Retire,
// and the owner's click decides it (a real Chromium, the System One fake scripting Jev).
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { Browser, Page } from "puppeteer-core";
import { startKit, CLEAN, OFF_TOPIC, type Kit } from "../helpers/nest-kit.ts";
import { browserTests, launchBrowser, openPage, type WatchedPage } from "../helpers/browser.ts";

const { executable, it } = browserTests("console-quarantine-browser");

let kit: Kit;
let browser: Browser;
let watched: WatchedPage;
let page: Page;

/** The text of the nest room's section named `name` (run in the page). */
declare function section(name: string): string;
const SECTION_HELPER = `window.section = (name) => document.querySelector('section[aria-label="' + name + '"]')?.innerText ?? ""`;

async function until(what: string, check: () => unknown, timeoutMs = 10_000): Promise<void> {
  try {
    await page.waitForFunction(check, { timeout: timeoutMs, polling: 50 });
  } catch (error) {
    const body = await page.evaluate(() => document.body.innerText).catch(() => "");
    throw new Error(
      `${what}: ${(error as Error).message}\nerrors: ${JSON.stringify(watched.errors)}\npage: ${body.slice(0, 2000)}`,
    );
  }
}

/** Posts the owner's request for `crow` from the page and waits for the Sentry's ask about it. */
async function breach(nest: string, crow: string): Promise<void> {
  await page.goto(`${kit.server.url}/#nests`, { waitUntil: "load" });
  await page.locator(`::-p-aria([name="${nest}"][role="button"])`).click();
  await page.waitForSelector(`::-p-aria([name="Nest ${nest}"])`);
  await page.locator('::-p-aria([name="Message"][role="textbox"])').fill(`${crow}, summarise the meeting notes`);
  await page.locator('::-p-aria([name="Post"][role="button"])').click();
  await until(
    "the Sentry's flag and ask",
    () => document.querySelector("[data-kind=flag]") && document.querySelector("[data-kind=ask_owner]"),
    15_000,
  );
}

it.before(async () => {
  kit = await startKit();
  // Jev reads the owner's ask for a summary as a request (and is unsure of the rest, so headers
  // decide); the breachers' claims and delivers are off topic.
  kit.plan.kind = (state) =>
    state.author === "owner" && /summarise/.test(state.text) ? { choice: "request", confidence: 0.95 } : "unsure";
  kit.plan.watch = (state) => (state.author === "Sable" || state.author === "Rook" ? OFF_TOPIC : CLEAN);
  assert.is((await kit.server.post("/api/nests", { name: "Notes", crows: ["Sable"] })).status, 201);
  assert.is((await kit.server.post("/api/nests", { name: "Ops", crows: ["Rook"] })).status, 201);
  browser = await launchBrowser(executable);
  watched = await openPage(browser, [kit.server.url]);
  page = watched.page;
  await page.setViewport({ width: 1360, height: 900 });
  await page.evaluateOnNewDocument(SECTION_HELPER);
});

it.after(async () => {
  await browser?.close();
  await kit?.close();
});

it("the open ask shows its phrase and the quarantine offers Reinstate; the owner's click lifts it", async () => {
  await breach("Notes", "Sable");
  await until("the open ask", () => section("Open asks").includes('Answer "reinstate Sable"'));
  await until("the quarantine", () => section("Quarantines").includes("Sable is quarantined."));
  await page.locator('::-p-aria([name="Reinstate Sable"][role="button"])').click();
  await until("the quarantine is lifted", () => section("Quarantines").includes("None."));
  await until("the ask is no longer open", () => section("Open asks").includes("None."));
  const quarantines = await kit.server.post("/graphql", { query: '{ quarantines(crow: "Sable") { status } }' });
  assert.equal(quarantines.body.data.quarantines, [{ status: "reinstated" }]);
  const messages = (await kit.server.get("/api/nests/notes/messages")).body as Array<{
    author: string;
    text: string;
    refers_to: string;
    kind: string;
  }>;
  const ask = messages.find((m) => m.kind === "ask_owner")!;
  assert.ok(
    messages.some((m) => m.author === "owner" && m.text === "reinstate Sable" && m.refers_to === (ask as any).msg_id),
  );
});

it("Retire removes the crow from the nest; the quarantine stays on the books, shown as retired", async () => {
  await kit.server.app.prisma.requester.deleteMany({ where: { name: "owner" } }); // no strikes from the earlier posts
  await breach("Ops", "Rook");
  await until("the quarantine", () => section("Quarantines").includes("Rook is quarantined."));
  await page.locator('::-p-aria([name="Retire Rook"][role="button"])').click();
  await until("shown as retired", () => section("Quarantines").includes("Rook is quarantined and retired"));
  assert.not.ok(
    await page.$('::-p-aria([name="Reinstate Rook"][role="button"])'),
    "no buttons for a decided quarantine",
  );
  const nest = await kit.server.post("/graphql", { query: '{ nest(id: "ops") { crows } }' });
  assert.equal(nest.body.data.nest.crows, [], "Rook is out of the nest");
  assert.equal(watched.errors, []);
  assert.equal(watched.offOrigin, []);
});

test.run();

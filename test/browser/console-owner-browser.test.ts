// Issue 33, "What an owner meets in the console today": each point in a real Chromium, on a desktop
// and on a phone-sized viewport (390 × 844). A rejected output reads "rejected" (live, and after a
// reload); two tabs on one list both show its approvals (one connection per tab); on a phone the
// approvals come first, targets are at least 44 px and nothing scrolls sideways; lists and verdicts
// are named by their items; events show a summary and a time, flights their latency; a nest is
// created and a crow spun from the page; removing a webhook asks first and its secret can be copied.
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { Browser } from "puppeteer-core";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { browserTests, launchBrowser, openPage, type WatchedPage } from "../helpers/browser.ts";

const { executable, it } = browserTests("console-owner-browser");

let server: TestServer;
let browser: Browser;

it.before(async () => {
  server = await startTestServer({ env: { CROWS_BANTER_WAIT_MS: "0", CROWS_WEBHOOK_ALLOW_PRIVATE: "1" } });
  browser = await launchBrowser(executable);
});
it.after(async () => {
  await browser?.close();
  await server?.close();
});

async function until<T>(watched: WatchedPage, what: string, check: (...args: any[]) => T, ...args: any[]): Promise<T> {
  try {
    const handle = await watched.page.waitForFunction(check, { timeout: 15_000, polling: 50 }, ...args);
    return (await handle.jsonValue()) as T;
  } catch (error) {
    const body = await watched.page.evaluate(() => document.body.innerText).catch(() => "");
    throw new Error(
      `${what}: ${(error as Error).message}\nerrors: ${JSON.stringify(watched.errors)}\n${body.slice(0, 1500)}`,
    );
  }
}

async function pending(): Promise<Array<{ itemId: string; target: string }>> {
  const r = await server.post("/graphql", { query: "{ approvals(status: pending, limit: 50) { itemId target } }" });
  return r.body.data.approvals;
}

async function waitPending(where: (p: Array<{ itemId: string; target: string }>) => boolean) {
  for (let i = 0; i < 300; i++) {
    const p = await pending();
    if (where(p)) return p;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`never: ${JSON.stringify(await pending())}`);
}

async function verdict(itemId: string, target: string, approve: boolean) {
  const r = await server.post("/api/verdicts", { item_id: itemId, target, approve });
  assert.is(r.status, 204, r.text);
}

async function submit(text: string): Promise<string> {
  const r = await server.post("/api/lists", { text, requester: "ana" });
  assert.is(r.status, 202, r.text);
  return r.body.list_id;
}

async function fresh(width: number, height: number, hash = ""): Promise<WatchedPage> {
  const watched = await openPage(browser, [server.url]);
  await watched.page.setViewport({ width, height });
  await watched.page.goto(`${server.url}/${hash}`, { waitUntil: "load" });
  return watched;
}

it("a rejected output reads rejected, live and after a reload; the list is named by its item; 1 item", async () => {
  const listId = await submit("Fold the towels");
  const watched = await fresh(1360, 900, `#lists/${listId}`);
  const { page } = watched;
  await waitPending((p) => p.some((a) => a.target === "triage"));
  await verdict(`${listId}-1`, "triage", true);
  await waitPending((p) => p.some((a) => a.target === "output"));
  await verdict(`${listId}-1`, "output", false);
  const stage = () => document.querySelector("article.list li.item .stage")?.textContent;
  await until(watched, "finished", () => document.querySelector(".list-status")?.textContent === "finished");
  assert.is(await page.evaluate(stage), "rejected");
  await page.reload({ waitUntil: "load" });
  await until(watched, "replayed", () => document.querySelector(".list-status")?.textContent === "finished");
  assert.is(await page.evaluate(stage), "rejected");
  // The picker names the list by its item and counts in words.
  const picker = await until(
    watched,
    "the picker",
    (id: string) => {
      const b = [...document.querySelectorAll("nav[aria-label='Recent lists'] button")].find((x) =>
        x.textContent?.includes(id),
      );
      return b?.textContent ?? "";
    },
    listId,
  );
  assert.match(picker, /^Fold the towels/);
  assert.match(picker, /· 1 item ·/);
  assert.ok(await page.$eval(".list-title", (el) => el.textContent === "Fold the towels"));
  // Decided names the item, not only its id.
  await until(
    watched,
    "decided names the item",
    (id: string) =>
      [...document.querySelectorAll("[aria-label='Decided approvals'] li")].some(
        (li) => li.textContent!.includes("Fold the towels") && li.textContent!.includes(`${id}-1`),
      ),
    listId,
  );
  // Events: a summary and a time each; the flight its latency.
  const events = await page.$$eval("ol.events li", (els) => els.map((el) => (el as HTMLElement).textContent ?? ""));
  assert.ok(
    events.some((t) => t.includes("verdict") && t.includes('output of "Fold the towels": rejected')),
    JSON.stringify(events),
  );
  assert.ok(await page.$$eval("ol.events time", (els) => els.every((el) => el.getAttribute("datetime"))));
  const flights = await page.$$eval("ul.flights li", (els) => els.map((el) => el.textContent ?? ""));
  assert.ok(
    flights.some((t) => /landed, \d+ tokens · \d+(\.\d)? (ms|s)/.test(t)),
    JSON.stringify(flights),
  );
  assert.equal(watched.errors, []);
  await page.close();
});

it("two tabs open on one list both show its approvals; no 'Nothing waits' before they load", async () => {
  const listId = await submit("- Wash the car\n- Call grandma");
  await waitPending((p) => p.filter((a) => a.itemId.startsWith(listId)).length === 2);
  const tabs = [await fresh(1360, 900, `#lists/${listId}`), await fresh(1360, 900, `#lists/${listId}`)];
  for (const watched of tabs) {
    await until(watched, "its approvals", () => document.querySelectorAll("section.approvals li.card").length >= 2);
    await until(watched, "live", () => document.querySelector(".connections")?.textContent?.startsWith("live"));
    assert.not.ok(await watched.page.$eval("section.approvals", (el) => el.textContent?.includes("Nothing waits")));
  }
  // Both stay live: a new approval reaches both tabs.
  const second = await submit("Bake bread");
  for (const watched of tabs)
    await until(watched, "the new approval", () =>
      [...document.querySelectorAll("section.approvals li.card")].some((c) =>
        c.getAttribute("aria-label")?.includes("Bake bread"),
      ),
    );
  // A page that has not read its approvals yet says it is loading, never "Nothing waits on you."
  const slow = await openPage(browser, [server.url]);
  await slow.page.setRequestInterception(true);
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  slow.page.on("request", (request) => {
    if ((request.postData() ?? "").includes("PendingApprovals")) void held.then(() => request.continue());
    else void request.continue();
  });
  await slow.page.goto(`${server.url}/`, { waitUntil: "load" });
  await until(slow, "loading shown", () => document.querySelector("section.approvals .loading") !== null);
  assert.not.ok(await slow.page.$eval("section.approvals", (el) => el.textContent?.includes("Nothing waits")));
  release();
  await until(slow, "loaded", () => document.querySelectorAll("section.approvals li.card").length >= 3);
  for (const [id, target] of [
    [`${listId}-1`, "triage"],
    [`${listId}-2`, "triage"],
    [`${second}-1`, "triage"],
  ] as const)
    await verdict(id, target, false);
  for (const watched of [...tabs, slow]) {
    assert.equal(watched.errors, []);
    await watched.page.close();
  }
});

it("on a phone: approvals first, 44 px targets, nothing wider than the screen on any view", async () => {
  const listId = await submit("Water the ferns");
  await waitPending((p) => p.some((a) => a.itemId === `${listId}-1`));
  const watched = await fresh(390, 844, `#lists/${listId}`);
  const { page } = watched;
  await until(watched, "the card", () => document.querySelector("section.approvals li.card") !== null);
  const order = await page.evaluate(() => {
    const aside = document.querySelector("section.approvals")!.getBoundingClientRect().top;
    const main = document.querySelector("main")!.getBoundingClientRect().top;
    return { aside, main };
  });
  assert.ok(order.aside < order.main, `approvals above the view: ${JSON.stringify(order)}`);
  const buttons = await page.$$eval("section.approvals li.card .actions button", (els) =>
    els.map((el) => {
      const r = el.getBoundingClientRect();
      return { left: r.left, right: r.right, top: r.top, bottom: r.bottom, width: r.width, height: r.height };
    }),
  );
  // Approve and Reject at least (a card may offer more: Try again, Edit and approve).
  assert.ok(buttons.length >= 2, JSON.stringify(buttons));
  for (const b of buttons) assert.ok(b.height >= 44 && b.width >= 44, JSON.stringify(b));
  // Every two targets at least 8 px apart, side by side or one above the other.
  for (const [i, a] of buttons.entries())
    for (const b of buttons.slice(i + 1)) {
      const apart = Math.max(b.left - a.right, a.left - b.right, b.top - a.bottom, a.top - b.bottom);
      assert.ok(apart >= 8, `targets ${apart} px apart: ${JSON.stringify([a, b])}`);
    }
  const navHeights = await page.$$eval("nav[aria-label='Views'] button", (els) =>
    els.map((el) => el.getBoundingClientRect().height),
  );
  assert.ok(
    navHeights.every((h) => h >= 44),
    JSON.stringify(navHeights),
  );
  // Each view with its data in: the widest thing it shows is on the page before the width is read.
  const loaded: Array<[string, string]> = [
    ["lists", "nav[aria-label='Recent lists'] li"],
    [`lists/${listId}`, "article.list li.item"],
    ["trust", "table.ledger"],
    ["nests", "article.nest form.post"],
    ["crows", "ul.personas li"],
    ["classifier", "img.diagram"],
    ["tokens", "table[aria-label='Tokens']"],
    ["webhooks", "form[aria-label='Add a webhook']"],
  ];
  for (const [view, selector] of loaded) {
    await page.evaluate((v) => {
      location.hash = v;
    }, view);
    await page.waitForSelector(selector, { timeout: 15_000 });
    const widths = await page.evaluate(() => ({ scroll: document.scrollingElement!.scrollWidth, inner: innerWidth }));
    assert.ok(widths.scroll <= widths.inner, `${view}: ${JSON.stringify(widths)}`);
  }
  await verdict(`${listId}-1`, "triage", false);
  assert.equal(watched.errors, []);
  await page.close();
});

it("nests: create one and spin a crow from the page; the message box gets the width; kinds in words", async () => {
  const watched = await fresh(1360, 900, "#nests");
  const { page } = watched;
  await page.waitForSelector("form[aria-label='Spin a crow']");
  await page.type("#spin-name", "Quincy");
  await page.select("#spin-persona", "Rook").catch(() => {}); // whichever persona the roster offers first otherwise
  await page.click("form[aria-label='Spin a crow'] button[type=submit]");
  for (let i = 0; i < 100 && !(await server.app.prisma.spunCrow.findFirst({ where: { name: "Quincy" } })); i++)
    await new Promise((resolve) => setTimeout(resolve, 100));
  assert.ok(await server.app.prisma.spunCrow.findFirst({ where: { name: "Quincy" } }), "spun");
  await page.type("#new-nest-name", "Garden club");
  await until(watched, "Quincy offered", () =>
    [...document.querySelectorAll("form[aria-label='Create a nest'] label")].some((l) =>
      l.textContent?.includes("Quincy"),
    ),
  );
  await page.$$eval("form[aria-label='Create a nest'] label", (labels) => {
    for (const l of labels)
      if (l.textContent?.includes("Quincy")) (l.querySelector("input") as HTMLInputElement).click();
  });
  await page.click("form[aria-label='Create a nest'] button[type=submit]");
  await until(
    watched,
    "the new nest opens",
    () => document.querySelector("article.nest h3")?.textContent === "Garden club",
  );
  const nest = (await server.get("/api/nests")).body;
  assert.ok(JSON.stringify(nest).includes("Garden club"), JSON.stringify(nest));
  const widths = await page.evaluate(() => {
    const to = document.querySelector("form.post select")!.getBoundingClientRect().width;
    const box = document.querySelector("form.post textarea")!.getBoundingClientRect().width;
    return { to, box };
  });
  assert.ok(widths.box > widths.to && widths.box >= 300, JSON.stringify(widths));
  assert.equal(watched.errors, []);
  await page.close();
});

it("a webhook's secret has a Copy button and Remove asks before it acts", async () => {
  const watched = await fresh(1360, 900, "#webhooks");
  const { page } = watched;
  await page.waitForSelector("form[aria-label='Add a webhook'] input[type=url]");
  await page.type("form[aria-label='Add a webhook'] input[type=url]", "http://127.0.0.1:9/hook");
  await (await page.waitForSelector("xpath/.//label[contains(., 'list.finished')]/input"))!.click();
  await (await page.waitForSelector("xpath/.//form//button[text()='Add']"))!.click();
  await page.waitForSelector(".secret code");
  assert.ok(await page.$("xpath/.//p[contains(@class,'secret')]//button[text()='Copy']"));
  await (await page.waitForSelector(
    "xpath/.//li[@aria-label='Webhook http://127.0.0.1:9/hook']//button[text()='Remove']",
  ))!.click();
  await page.waitForSelector("xpath/.//button[text()='Yes, remove']");
  assert.is(await server.app.prisma.webhookEndpoint.count(), 1, "nothing removed before the owner confirms");
  await (await page.waitForSelector("xpath/.//button[text()='Keep it']"))!.click();
  assert.is(await server.app.prisma.webhookEndpoint.count(), 1);
  assert.equal(watched.errors, []);
  await page.close();
});

test.run();

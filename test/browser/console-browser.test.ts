// The owner console in a real Chromium against a real server (offline model): send a list, approve
// everything from the page and see it finish, see the ledger move in Trust, post a request in a
// nest and see the crow answer, then restart the server under the page and see every stream
// resume with no duplicate row. Throughout: no console error, no request off the origin.
// Screenshots of each view land in test-output/screenshots/ (gitignored).
import { mkdirSync } from "node:fs";
import path from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { Browser, Page } from "puppeteer-core";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { browserTests, launchBrowser, openPage, type WatchedPage } from "../helpers/browser.ts";

const SHOTS = path.resolve("test-output", "screenshots");
const { executable, it } = browserTests("console-browser");

let server: TestServer;
let browser: Browser;
let watched: WatchedPage;
let page: Page;
let listId = "";

async function shot(name: string): Promise<void> {
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

/** Polls the page until `check` (run in the page) returns a truthy value, and returns it. */
async function until<T>(what: string, check: () => T, timeoutMs = 10_000): Promise<T> {
  try {
    const handle = await page.waitForFunction(check, { timeout: timeoutMs, polling: 50 });
    return (await handle.jsonValue()) as T;
  } catch (error) {
    const body = await page.evaluate(() => document.body.innerText).catch(() => "");
    throw new Error(
      `${what}: ${(error as Error).message}\nerrors: ${JSON.stringify(watched.errors)}\npage: ${body.slice(0, 1500)}`,
    );
  }
}

/** The list as the server stored it (GraphQL, the console's own API). */
async function storedList(id: string): Promise<any> {
  const response = await server.post("/graphql", {
    query: "query($id: ID!) { list(id: $id) { requester status items { text } } }",
    variables: { id },
  });
  assert.is(response.status, 200, response.text);
  return response.body.data.list;
}

async function view(name: string): Promise<void> {
  await page.locator(`::-p-aria([name="${name}"][role="button"])`).click();
  await page.waitForSelector(`::-p-aria([name="${name}"][role="region"])`);
}

async function approvalsWaiting(): Promise<number> {
  return page.$$eval("section.approvals li.card", (cards) => cards.length);
}

/** Clicks the first Approve button in the Approvals region. */
async function approveFirst(): Promise<void> {
  const button = await page.waitForSelector(
    '::-p-aria([name="Approvals"][role="region"]) ::-p-aria([name="Approve"][role="button"])',
    { timeout: 10_000 },
  );
  await button!.click();
}

it.before(async () => {
  server = await startTestServer({ env: { CROWS_BANTER_WAIT_MS: "0" } });
  const nest = await server.post("/api/nests", { name: "Coffee shop", crows: ["Pepper"] });
  assert.is(nest.status, 201, nest.text);
  browser = await launchBrowser(executable);
  watched = await openPage(browser, [server.url]);
  page = watched.page;
  await page.setViewport({ width: 1360, height: 900 });
  await page.goto(server.url + "/", { waitUntil: "load" });
  await page.waitForSelector('::-p-aria([name="Approvals"][role="region"])');
});

it.after(async () => {
  await browser?.close();
  await server?.close();
});

it("1. the owner sends a two-item list from the page", async () => {
  await page.locator("::-p-aria(Todo list)").fill("- Buy milk\n- Write a haiku about crows");
  await page.locator("::-p-aria(Requester)").fill("ana");
  await page.locator('::-p-aria([name="Send"][role="button"])').click();
  listId = await until(
    "the new list opens",
    () => document.querySelector("article.list h3")?.textContent?.replace("List ", "") ?? "",
  );
  const stored = await storedList(listId);
  assert.equal(
    stored.items.map((i: { text: string }) => i.text),
    ["Buy milk", "Write a haiku about crows"],
  );
  assert.is(stored.requester, "ana");
  await until("both items listed", () => document.querySelectorAll("article.list li.item").length === 2);
  await until(
    "both triages wait in Approvals",
    () => document.querySelectorAll("section.approvals li.card").length === 2,
  );
  const card = await page.$eval("section.approvals li.card", (el) => (el as HTMLElement).innerText);
  assert.match(card, /triage/);
  assert.match(card, /Mode/);
  assert.match(card, /Reason/);
  assert.match(card, /\d+:\d\d left/);
  await shot("lists");
});

it("2. the owner approves everything from the page and sees the list finish", async () => {
  const deadline = Date.now() + 20_000;
  let answered = 0;
  while (Date.now() < deadline) {
    const finished = await page.$eval("article.list .list-status", (el) => el.textContent === "finished");
    if (finished) break;
    if ((await approvalsWaiting()) > 0) {
      if (answered === 2) await shot("approvals"); // an output approval: the answer and its crows
      const before = await page.$$eval("section.approvals li.card", (cards) =>
        cards.map((c) => c.getAttribute("aria-label")).join("|"),
      );
      await approveFirst();
      answered++;
      await page.waitForFunction(
        (b) =>
          [...document.querySelectorAll("section.approvals li.card")]
            .map((c) => c.getAttribute("aria-label"))
            .join("|") !== b,
        { timeout: 10_000 },
        before,
      );
    } else {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  await until("finished", () => document.querySelector("article.list .list-status")?.textContent === "finished");
  assert.ok(answered >= 2, `answered ${answered} approvals`);
  const text = await page.$eval("article.list", (el) => (el as HTMLElement).innerText);
  assert.match(text, /Tokens: \d+ of 20000/);
  assert.match(text, /landed, \d+ tokens/);
  assert.match(text, /Verdicts: triage approved/);
  assert.is((await storedList(listId)).status, "finished");
  assert.is(await approvalsWaiting(), 0, "nothing waits once the list is done");
  await shot("list-finished");
});

it("3. the ledger moves in Trust, live", async () => {
  // Another list arrives from elsewhere: the Lists view picks it up when its triage opens.
  const response = await server.post("/api/lists", { text: "Buy milk", requester: "ana" });
  assert.is(response.status, 202, response.text);
  const otherId = response.body.list_id as string;
  await page.waitForFunction(
    (id) => document.querySelector("nav[aria-label='Recent lists']")?.textContent?.includes(id),
    { timeout: 10_000 },
    otherId,
  );
  await view("Trust");
  await until("the ledger shows flock", () =>
    [...document.querySelectorAll("table.ledger th[scope=row]")].some((th) => th.textContent === "flock"),
  );
  const flockRow = () => (document.querySelector("table.ledger") as HTMLElement | null)?.innerText ?? "";
  const before = await page.evaluate(flockRow);
  assert.match(before, /stranger|regular|trusted/);
  // The owner approves its triage from the Approvals region beside Trust.
  await until("its triage waits", () => document.querySelectorAll("section.approvals li.card").length === 1);
  await approveFirst();
  await page.waitForFunction(
    (b) => ((document.querySelector("table.ledger") as HTMLElement | null)?.innerText ?? "") !== b,
    { timeout: 10_000 },
    before,
  );
  // The page now shows exactly the stored ledger: each holder x task type cell, level and streak.
  const ledger = (await server.get("/api/trust")).body.ledger as Array<{
    holder: string;
    task_type: string;
    level_name: string;
    streak: number;
  }>;
  assert.ok(ledger.some((r) => r.holder === "flock"));
  await page.waitForFunction(
    (rows: Array<{ holder: string; task_type: string; level_name: string; streak: number }>) => {
      const table = document.querySelector("table.ledger");
      if (!table) return false;
      const types = [...table.querySelectorAll("thead th")].map((th) => th.textContent);
      return rows.every((r) => {
        const row = [...table.querySelectorAll("tbody tr")].find(
          (tr) => tr.querySelector("th")?.textContent === r.holder,
        );
        const cell = row?.children[types.indexOf(r.task_type)] as HTMLElement | undefined;
        return !!cell && cell.innerText.includes(`${r.level_name} streak ${r.streak}`);
      });
    },
    { timeout: 5_000 },
    ledger,
  );
  await shot("trust");
  // Leave nothing pending for the later tests: answer the output too.
  await until("the output waits", () => document.querySelectorAll("section.approvals li.card").length === 1, 15_000);
  await approveFirst();
  await until("nothing waits", () => document.querySelectorAll("section.approvals li.card").length === 0);
});

it("4. a request posted in a nest gets the crow's reply, live", async () => {
  await view("Nests");
  await page.locator('::-p-aria([name="Coffee shop"][role="button"])').click();
  await page.waitForSelector('::-p-aria([name="Nest Coffee shop"])');
  // The Message box offers the nest's members and the addressable roles; @Pepper in the text addresses Pepper too.
  const offered = await page.$$eval('select[id^="to-"] option', (els) =>
    els.map((el) => (el as HTMLOptionElement).value),
  );
  assert.equal(offered, ["", "Pepper", "Elder", "Quill", "Boss"]);
  await page
    .locator('::-p-aria([name="Message"][role="textbox"])')
    .fill("@Pepper please draft a tagline for our coffee shop");
  await page.locator('::-p-aria([name="Post"][role="button"])').click();
  await until("the owner's message", () =>
    [...document.querySelectorAll("li.message")].some((m) => m.querySelector(".author")?.textContent === "owner"),
  );
  const kinds = await until(
    "Pepper replies",
    () => {
      const replies = [...document.querySelectorAll("li.message")].filter(
        (m) => m.querySelector(".author")?.textContent === "Pepper",
      );
      return replies.some((m) => m.getAttribute("data-kind") === "deliver")
        ? replies.map((m) => m.getAttribute("data-kind")).join(",")
        : "";
    },
    15_000,
  );
  const stored = (await server.get("/api/nests/coffee-shop/messages")).body as Array<{
    msg_id: string;
    author: string;
    kind: string;
    refers_to: string;
  }>;
  const request = stored.find((m) => m.author === "owner") as { msg_id: string; to?: string } | undefined;
  assert.is(request?.to, "Pepper", "the stored request is addressed to the crow its text opens with");
  const reply = stored.find((m) => m.author === "Pepper" && m.kind !== "claim");
  assert.ok(reply, `Pepper replied: ${JSON.stringify(stored)}`);
  assert.is(reply!.refers_to, request!.msg_id, "the reply answers the owner's request");
  assert.is(reply!.kind, "deliver");
  // The page shows each message's kind, author, to and tagged_by (the claim is addressed to the owner).
  const shown = await page.$$eval("li.message", (els) => els.map((el) => (el as HTMLElement).innerText));
  assert.ok(
    shown.some(
      (t) => t.includes("claim") && t.includes("Pepper") && t.includes("→ owner") && t.includes("tagged by harness"),
    ),
    JSON.stringify(shown),
  );
  assert.ok(
    shown.some((t) => t.includes(`${reply!.kind}`) && t.includes("Pepper") && t.includes("[offline]")),
    JSON.stringify(shown),
  );
  assert.is(kinds, "claim,deliver");
  await shot("nests");
});

it("crows and classifier views render", async () => {
  await view("Crows");
  await until(
    "the personas",
    () => document.body.innerText.includes("Pepper") && document.body.innerText.includes("Sentry"),
  );
  await shot("crows");
  await view("Classifier");
  await until("the diagram loads", () => {
    const img = document.querySelector("img.diagram") as HTMLImageElement | null;
    return !!img && img.complete && img.naturalWidth > 0;
  });
  await until(
    "recent answers",
    () => document.querySelectorAll("table[aria-label='Recent answers'] tbody tr").length > 0,
  );
  await shot("classifier");
});

it("refusals reach the owner in the Errors alert, and can be dismissed", async () => {
  await view("Lists");
  await page.locator("::-p-aria(Todo list)").fill("   \n   ");
  await page.locator('::-p-aria([name="Send"][role="button"])').click();
  const alert = await until(
    "an error is shown",
    () => (document.querySelector("[role=alert]") as HTMLElement | null)?.innerText ?? "",
  );
  assert.match(alert, /Send the list: /);
  await view("Nests");
  await page.locator('::-p-aria([name="Coffee shop"][role="button"])').click();
  await page.locator('::-p-aria([name="Message"][role="textbox"])').fill("x".repeat(2001));
  await page.locator('::-p-aria([name="Post"][role="button"])').click();
  await until("the post's refusal", () =>
    (document.querySelector("[role=alert]") as HTMLElement | null)?.innerText.includes("Post in Coffee shop: "),
  );
  await shot("errors");
  for (let left = 2; left > 0; left--) {
    await page.locator('::-p-aria([role="alert"]) ::-p-aria([role="button"])').click();
    await page.waitForFunction((n) => document.querySelectorAll("[role=alert] li").length === n - 1, {}, left);
  }
});

it("5. no console errors and no request off the origin so far", () => {
  assert.equal(watched.errors, []);
  assert.equal(watched.offOrigin, []);
});

it("a server restart: every stream reconnects and resumes with no duplicate row", async () => {
  // The list view and the nest view stream at once (the Approvals feed streams all along).
  await view("Nests");
  await page.locator('::-p-aria([name="Coffee shop"][role="button"])').click();
  await page.waitForSelector('::-p-aria([name="Nest Coffee shop"])');
  const messagesBefore = await page.$$eval("li.message", (els) => els.length);
  const port = new URL(server.url).port;
  const errorsBefore = watched.errors.length;
  server = await server.restart({ env: { CROWS_PORT: port } });
  assert.is(new URL(server.url).port, port, "the same origin comes back");
  await until(
    "the streams are live again",
    () => document.querySelector(".connections")?.textContent?.startsWith("live"),
    15_000,
  );
  // Something new on each stream: a message in the nest, and a list whose triage waits.
  const posted = await server.post("/api/nests/coffee-shop/messages", {
    author: "owner",
    text: "Thanks, that will do.",
    kind: "say",
  });
  assert.is(posted.status, 201, posted.text);
  const list = await server.post("/api/lists", { text: "Water the plants", requester: "ana" });
  assert.is(list.status, 202, list.text);
  await until("the new message arrives", () => document.body.innerText.includes("Thanks, that will do."));
  await until(
    "the new approval arrives",
    () => document.querySelectorAll("section.approvals li.card").length === 1,
    15_000,
  );
  const ids = await page.$$eval("li.message", (els) => els.map((el) => el.querySelector(".quiet")?.textContent ?? ""));
  assert.is(new Set(ids).size, ids.length, `no message twice: ${JSON.stringify(ids)}`);
  const stored = (await server.get("/api/nests/coffee-shop/messages")).body as unknown[];
  assert.is(ids.length, stored.length, "exactly the stored messages");
  assert.ok(ids.length > messagesBefore);
  const cards = await page.$$eval("section.approvals li.card", (els) => els.map((el) => el.getAttribute("aria-label")));
  assert.equal(cards, ["Triage of Water the plants"]);

  // The list stream too: open the waiting list, restart again; what it showed is not repeated, and
  // what comes after the restart (the triage rejected: the list finishes) arrives once each. Those
  // later events are the proof of the quiet: a replayed duplicate would have come before them.
  const waterId = list.body.list_id as string;
  const shownSeqs = () => page.$$eval("ol.events li", (els) => els.map((el) => Number(el.getAttribute("data-seq"))));
  await page.goto(`${server.url}/#lists/${waterId}`, { waitUntil: "load" });
  const storedBefore = (await server.app.log.read(`list:${waterId}`)).map((e) => e.seq);
  await until("the waiting list's events", () => document.querySelectorAll("ol.events li").length > 0);
  await page.waitForFunction(
    (n: number) => document.querySelectorAll("ol.events li").length >= n,
    { timeout: 10_000, polling: 50 },
    storedBefore.length,
  );
  const eventsBefore = await shownSeqs();
  assert.equal(eventsBefore, storedBefore, "the list's events as stored, each once");
  server = await server.restart({ env: { CROWS_PORT: port } });
  await until("live again", () => document.querySelector(".connections")?.textContent?.startsWith("live"), 15_000);
  const { approvals } = (
    await server.post("/graphql", { query: "{ approvals(status: pending, limit: 10) { itemId target } }" })
  ).body.data;
  assert.is(approvals.length, 1, JSON.stringify(approvals));
  const rejected = await server.post("/api/verdicts", {
    item_id: approvals[0].itemId,
    target: approvals[0].target,
    approve: false,
  });
  assert.is(rejected.status, 204, rejected.text);
  await until(
    "the list to finish after the restart",
    () => document.querySelector("article.list .list-status")?.textContent === "finished",
    15_000,
  );
  const eventsAfter = await shownSeqs();
  assert.equal(
    eventsAfter,
    (await server.app.log.read(`list:${waterId}`)).map((e) => e.seq),
    "the list's events, each once, in order",
  );
  assert.ok(eventsAfter.length > eventsBefore.length, "the events after the restart arrived");
  // And the Approvals feed: a new triage is the marker; the rejected card is gone, nothing is twice.
  const kettle = await server.post("/api/lists", { text: "Fill the kettle", requester: "ana" });
  assert.is(kettle.status, 202, kettle.text);
  await until(
    "the marker's approval arrives",
    () =>
      [...document.querySelectorAll("section.approvals li.card")].some(
        (el) => el.getAttribute("aria-label") === "Triage of Fill the kettle",
      ),
    15_000,
  );
  assert.equal(
    await page.$$eval("section.approvals li.card", (els) => els.map((el) => el.getAttribute("aria-label"))),
    ["Triage of Fill the kettle"],
    "each approval once, the decided one gone",
  );
  // While the server is down the browser itself logs the streams it cut (the server ends open
  // responses at shutdown) and the refused reconnects (refused outright, or a 503 from a server
  // that is stopping: a running list's view has two more streams to reconnect); nothing else.
  const newErrors = watched.errors
    .slice(errorsBefore)
    .filter(
      (e) =>
        !/^console: Failed to load resource: (net::(ERR_CONNECTION_REFUSED|ERR_INCOMPLETE_CHUNKED_ENCODING)|the server responded with a status of 503 \(Service Unavailable\))$/.test(
          e,
        ),
    );
  assert.equal(newErrors, []);
  assert.equal(watched.offOrigin, []);
  await shot("after-restart");
});

it("a stream the server refuses (401, as without the session cookie) is shown, retried, and recovers", async () => {
  const errorsBefore = watched.errors.length;
  let refusing = true;
  await page.setRequestInterception(true);
  const onRequest = (request: import("puppeteer-core").HTTPRequest) => {
    if (refusing && request.url().endsWith("/graphql/stream")) {
      void request.respond({
        status: 401,
        contentType: "application/json",
        body: JSON.stringify({ message: "Unauthorized" }),
      });
    } else {
      void request.continue();
    }
  };
  page.on("request", onRequest);
  try {
    await page.goto(`${server.url}/#trust`, { waitUntil: "load" });
    await page.reload({ waitUntil: "load" }); // a new page: every stream starts refused
    await until("the refusal is shown", () =>
      (document.querySelector("[role=alert]") as HTMLElement | null)?.innerText.includes(
        "approvals: the server refused the stream (401).",
      ),
    );
    assert.match(await page.$eval(".connections", (el) => el.textContent ?? ""), /reconnecting/);
    refusing = false;
    await until(
      "live once the server accepts",
      () => document.querySelector(".connections")?.textContent?.startsWith("live"),
      15_000,
    );
    const alerts = await page.$$eval("[role=alert] li", (els) => els.map((el) => el.textContent ?? ""));
    assert.ok(
      alerts.filter((a) => a.includes("approvals: the server refused")).length === 1,
      `shown once, not per retry: ${JSON.stringify(alerts)}`,
    );
  } finally {
    page.off("request", onRequest);
    await page.setRequestInterception(false);
  }
  const newErrors = watched.errors
    .slice(errorsBefore)
    .filter((e) => !/^console: Failed to load resource: the server responded with a status of 401/.test(e));
  assert.equal(newErrors, []);
});

test.run();

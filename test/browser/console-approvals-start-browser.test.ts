// The Approvals region starts from what waits now, not from the whole history: with many decided
// approvals in the log the page shows exactly the pending ones and subscribes after the log's
// cursor (never from 0). Changes that commit while the page is between its steps (after the cursor,
// before the pending read; after the read, before the feed connects) are neither missed nor doubled:
// the test holds each of those requests in the browser, commits changes meanwhile, then lets it go.
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { Browser, HTTPRequest, Page } from "puppeteer-core";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { browserTests, launchBrowser, openPage, type WatchedPage } from "../helpers/browser.ts";

const { executable, it } = browserTests("console-approvals-start-browser");

let server: TestServer;
let browser: Browser;
let watched: WatchedPage;
let page: Page;
/** The `after` of every approvalChanges subscription the page opened, in order. */
const subscribedAfter: Array<number | undefined> = [];

async function graphql(query: string, variables: Record<string, unknown> = {}): Promise<any> {
  const response = await server.post("/graphql", { query, variables });
  assert.is(response.status, 200, response.text);
  assert.not.ok(response.body.errors, response.text);
  return response.body.data;
}

interface Pending {
  itemId: string;
  target: string;
  label: string;
}

/** What waits on the owner, as the server stores it, labelled as the page labels its cards. */
async function storedPending(): Promise<Pending[]> {
  const { approvals } = await graphql("{ approvals(status: pending, limit: 500) { itemId target item { text } } }");
  return approvals.map((a: { itemId: string; target: string; item: { text: string } }) => ({
    itemId: a.itemId,
    target: a.target,
    label: `${a.target === "triage" ? "Triage" : "Output"} of ${a.item.text}`,
  }));
}

async function waitForPending(check: (pending: Pending[]) => boolean, what: string): Promise<Pending[]> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const pending = await storedPending();
    if (check(pending)) return pending;
    if (Date.now() > deadline) throw new Error(`${what}: ${JSON.stringify(pending)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

let requesters = 0;
async function submit(text: string): Promise<string> {
  // A requester of its own each time: five lists a minute per requester is the rate limit.
  const response = await server.post("/api/lists", { text, requester: `neighbour${requesters++}` });
  assert.is(response.status, 202, response.text);
  return response.body.list_id as string;
}

async function decide(p: Pending, approve: boolean): Promise<void> {
  const response = await server.post("/api/verdicts", { item_id: p.itemId, target: p.target, approve });
  assert.is(response.status, 204, response.text);
}

const cardLabels = () =>
  page.$$eval("section.approvals li.card", (els) => els.map((el) => el.getAttribute("aria-label") ?? ""));

/** The page shows exactly the stored pending set (each once), and keeps showing it for a moment. */
async function assertShowsExactlyPending(): Promise<string[]> {
  const expected = (await storedPending()).map((p) => p.label).sort();
  try {
    await page.waitForFunction(
      (want: string[]) =>
        JSON.stringify(
          [...document.querySelectorAll("section.approvals li.card")].map((el) => el.getAttribute("aria-label")).sort(),
        ) === JSON.stringify(want),
      { timeout: 10_000, polling: 50 },
      expected,
    );
  } catch {
    throw new Error(
      `the page shows ${JSON.stringify((await cardLabels()).sort())}, the server holds ${JSON.stringify(expected)}; errors ${JSON.stringify(watched.errors)}`,
    );
  }
  await markerThroughTheFeed();
  assert.equal((await cardLabels()).sort(), expected);
  return expected;
}

let markers = 0;
/**
 * A marker through the page's feed, after everything it was sent: a new triage's card appears,
 * then, rejected, goes. The feed is in order, so a late duplicate would have come before it went.
 */
async function markerThroughTheFeed(): Promise<void> {
  const label = `Triage of Quiet marker ${markers}`;
  await submit(`- Quiet marker ${markers++}`);
  const marker = (await waitForPending((p) => p.some((x) => x.label === label), "the marker's triage")).find(
    (x) => x.label === label,
  )!;
  const showing = (want: boolean) =>
    page.waitForFunction(
      (l: string, w: boolean) =>
        [...document.querySelectorAll("section.approvals li.card")].some(
          (el) => el.getAttribute("aria-label") === l,
        ) === w,
      { timeout: 15_000, polling: 50 },
      label,
      want,
    );
  await showing(true);
  await decide(marker, false);
  await showing(false);
}

/** Reloads the page while holding the first request `matches` picks; `meanwhile` runs while it is held. */
async function reloadHolding(
  matches: (request: HTTPRequest) => boolean,
  meanwhile: () => Promise<void>,
): Promise<void> {
  let held: HTTPRequest | undefined;
  let release: () => void = () => {};
  const heldNow = new Promise<void>((resolve) => (release = resolve));
  const onRequest = (request: HTTPRequest) => {
    if (request.isInterceptResolutionHandled()) return;
    if (!held && matches(request)) {
      held = request;
      release();
      return;
    }
    void request.continue();
  };
  await page.setRequestInterception(true);
  page.on("request", onRequest);
  try {
    await page.reload({ waitUntil: "load" });
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      heldNow,
      new Promise(
        (_, reject) => (timer = setTimeout(() => reject(new Error("the request to hold never came")), 10_000)),
      ),
    ]);
    clearTimeout(timer);
    await meanwhile();
    await held!.continue();
    await assertShowsExactlyPending();
  } finally {
    page.off("request", onRequest);
    await page.setRequestInterception(false);
  }
}

const isQuery = (name: string) => (request: HTTPRequest) =>
  request.url().endsWith("/graphql") && (request.postData() ?? "").includes(name);
const isApprovalsStream = (request: HTTPRequest) =>
  request.url().endsWith("/graphql/stream") && (request.postData() ?? "").includes("approvalChanges");

it.before(async () => {
  server = await startTestServer({ env: { CROWS_BANTER_WAIT_MS: "0" } });
  browser = await launchBrowser(executable);
  watched = await openPage(browser, [server.url]);
  page = watched.page;
  page.on("request", (request) => {
    if (!isApprovalsStream(request)) return;
    // One connection carries the tab's streams (console/app/streams.ts): the approvals operation's cursor.
    const body = JSON.parse(request.postData() ?? "{}");
    const ops: Array<{ query: string; variables?: { after?: number } }> = Object.values(body.operations ?? {});
    subscribedAfter.push(ops.find((op) => op.query.includes("approvalChanges"))?.variables?.after);
  });
  await page.setViewport({ width: 1360, height: 900 });
});

it.after(async () => {
  await browser?.close();
  await server?.close();
});

it("with many decided approvals in history, the page shows exactly the pending ones and follows from the cursor", async () => {
  // History: 40 triages asked and answered (rejected: the items are skipped, nothing reopens), and
  // one list's triages approved so its outputs wait too.
  for (let list = 0; list < 8; list++) {
    await submit(Array.from({ length: 5 }, (_, n) => `- Old chore ${list}.${n}`).join("\n"));
  }
  // Rejected as they open (a list triages a few items at a time), until all 40 are decided.
  let rejected = 0;
  while (rejected < 40) {
    for (const p of await waitForPending((p) => p.length > 0, `triages wait (${rejected} rejected)`)) {
      await decide(p, false);
      rejected++;
    }
  }
  await waitForPending((p) => p.length === 0, "nothing waits");
  await submit("- Pending one\n- Pending two\n- Pending three");
  const fresh = await waitForPending((p) => p.length === 3, "3 triages wait");
  await decide(fresh.find((p) => p.label === "Triage of Pending three")!, true);
  await waitForPending((p) => p.some((x) => x.label === "Output of Pending three"), "its output waits");
  const { approvals: decided } = await graphql("{ approvals(status: rejected, limit: 500) { id } }");
  assert.ok(decided.length >= 40, `decided history: ${decided.length}`);
  const { approvalChangesCursor: cursorBefore } = await graphql("{ approvalChangesCursor }");
  assert.ok(cursorBefore > 80, `the log holds the history: ${cursorBefore}`);

  await page.goto(server.url + "/", { waitUntil: "load" });
  const shown = await assertShowsExactlyPending();
  assert.equal(shown, ["Output of Pending three", "Triage of Pending one", "Triage of Pending two"]);
  assert.is(subscribedAfter.length, 1);
  assert.ok(subscribedAfter[0]! >= cursorBefore, `the feed starts at the cursor (${subscribedAfter[0]}), not 0`);
  assert.is(await page.$eval("section.approvals", (el) => (el as HTMLElement).innerText.includes("more than")), false);

  // Live from there: a new triage appears, an answered one goes.
  await submit("- Arrived live");
  await waitForPending((p) => p.some((x) => x.label === "Triage of Arrived live"), "the new triage");
  await decide((await storedPending()).find((p) => p.label === "Triage of Pending one")!, false);
  assert.equal(await assertShowsExactlyPending(), [
    "Output of Pending three",
    "Triage of Arrived live",
    "Triage of Pending two",
  ]);
});

it("changes between the cursor and the pending read are neither missed nor doubled", async () => {
  // Held: whichever of the two load queries comes second (the pending read, if the cursor is taken
  // first as it must be; a page that read first and took the cursor after would miss these).
  let loadQueries = 0;
  const secondLoadQuery = (request: HTTPRequest) =>
    (isQuery("ApprovalsCursor")(request) || isQuery("PendingApprovals")(request)) && ++loadQueries === 2;
  await reloadHolding(secondLoadQuery, async () => {
    // The page holds its cursor; these commit after it and before the read: in both.
    await submit("- Arrived before the read");
    await waitForPending((p) => p.some((x) => x.label === "Triage of Arrived before the read"), "its triage");
    await decide((await storedPending()).find((p) => p.label === "Triage of Pending two")!, false);
  });
  assert.equal((await cardLabels()).sort(), [
    "Output of Pending three",
    "Triage of Arrived before the read",
    "Triage of Arrived live",
  ]);
});

it("changes between the pending read and the feed connecting are neither missed nor doubled", async () => {
  await reloadHolding(isApprovalsStream, async () => {
    // Read done, feed not yet connected: these reach the page only through the feed.
    await submit("- Arrived before the feed");
    await waitForPending((p) => p.some((x) => x.label === "Triage of Arrived before the feed"), "its triage");
    await decide((await storedPending()).find((p) => p.label === "Triage of Arrived live")!, true);
    await decide((await storedPending()).find((p) => p.label === "Output of Pending three")!, true);
  });
  const labels = (await cardLabels()).sort();
  assert.ok(labels.includes("Triage of Arrived before the feed"), JSON.stringify(labels));
  assert.not.ok(labels.includes("Triage of Arrived live"), JSON.stringify(labels));
  assert.not.ok(labels.includes("Output of Pending three"), JSON.stringify(labels));
});

it("every subscription started from a cursor, never from 0; no console error, nothing off the origin", () => {
  assert.ok(subscribedAfter.length >= 3, JSON.stringify(subscribedAfter));
  for (const after of subscribedAfter)
    assert.ok(typeof after === "number" && after > 80, JSON.stringify(subscribedAfter));
  assert.equal(watched.errors, []);
  assert.equal(watched.offOrigin, []);
});

test.run();

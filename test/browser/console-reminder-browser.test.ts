// The console's reminder notice (docs/rules.md "Reminders"): when an approval's window nears its end
// the console shows "N min left: <item text>", fed by the tab's one stream; its link focuses the
// approval's card, and the notice goes when the approval is decided. The webhook form asks for a
// body format (docs/webhooks.md "Formats").
import * as assert from "uvu/assert";
import type { Browser } from "puppeteer-core";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { browserTests, launchBrowser, openPage } from "../helpers/browser.ts";
import { openSse } from "../helpers/sse.ts";

const { executable, it } = browserTests("console-reminder-browser");

let server: TestServer;
let browser: Browser;

it.before(async () => {
  // A minute's window reminded 50 s before it ends: the reminder comes 10 s in, and leaves a loaded
  // machine 50 s to show it and click it before the window's own end would clear it.
  server = await startTestServer({
    env: {
      CROWS_APPROVAL_WINDOW_MS: "60000",
      CROWS_APPROVAL_REMINDER_MS: "50000",
      CROWS_WEBHOOK_ALLOW_PRIVATE: "1",
    },
  });
  browser = await launchBrowser(executable);
});
it.after(async () => {
  await browser?.close();
  await server?.close();
});

it("a reminder shows N min left with the item's text, its link focuses the card, and a decision clears it", async () => {
  const watched = await openPage(browser, [server.url]);
  const page = watched.page;
  let streamPosts = 0;
  page.on("request", (request) => {
    if (new URL(request.url()).pathname === "/graphql/stream") streamPosts++;
  });
  await page.goto(server.url + "/", { waitUntil: "load" });
  // Following before the list exists: the reminder comes live (however many feeds the tab's one
  // connection carries).
  await page.waitForFunction(
    () => /^live \(\d+ streams\)$/.test(document.querySelector(".connections")?.textContent ?? ""),
    { timeout: 60_000 },
  );

  const res = await server.post("/api/lists", { text: "Write a haiku about crows", requester: "console-reminder" });
  const listId = res.body.list_id as string;
  const itemId = `${listId}-1`;
  const sse = await openSse(`${server.url}/api/events?list_id=${listId}`);
  await sse.waitFor((m) => m.event === "approval.reminder", 60_000);

  const notice = await page.waitForSelector("::-p-aria([name='1 min left: Write a haiku about crows'][role='link'])", {
    timeout: 30_000,
  });
  await notice!.click();
  await page.waitForFunction(
    (id) => document.activeElement?.id === id,
    { timeout: 10_000 },
    `approval-${itemId}-triage`,
  );
  assert.ok(!page.url().includes("approval-"), "the view stays in the hash");

  // Decided: the card and the notice go.
  assert.is((await server.post("/api/verdicts", { item_id: itemId, target: "triage", approve: true })).status, 204);
  await page.waitForFunction(() => !document.querySelector(".reminders"), { timeout: 30_000 });
  assert.ok(streamPosts >= 1 && (await page.$$eval("section.reminders", (s) => s.length)) === 0);
  assert.equal(watched.errors, []);
  sse.close();
  await page.close();
});

it("the webhook form asks for a format: a Slack endpoint is added and shown as one", async () => {
  const watched = await openPage(browser, [server.url]);
  const page = watched.page;
  await page.goto(server.url + "/#webhooks", { waitUntil: "load" });
  await page.waitForSelector("form[aria-label='Add a webhook'] input[type=url]");
  await page.type("form[aria-label='Add a webhook'] input[type=url]", "http://127.0.0.1:9/slack");
  await page.select("form[aria-label='Add a webhook'] select", "slack");
  await (await page.waitForSelector("xpath/.//form//button[text()='Add']"))!.click();
  await page.waitForSelector("xpath/.//li[@aria-label='Webhook http://127.0.0.1:9/slack']//p[contains(., 'slack ·')]");
  const stored = await server.app.prisma.webhookEndpoint.findFirst({ where: { url: "http://127.0.0.1:9/slack" } });
  assert.is(stored?.format, "slack");
  assert.equal(watched.errors, []);
  await page.close();
});

it.run();

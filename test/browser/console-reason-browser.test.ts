// The console's minimum for the owner's word (docs/rules.md "Reasons", "Rework"): each approval
// card has a reason box, sent with the answer, and "Try again" rejects and asks for another try.
import * as assert from "uvu/assert";
import type { Browser } from "puppeteer-core";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { browserTests, launchBrowser, openPage } from "../helpers/browser.ts";
import { openSse } from "../helpers/sse.ts";

const { executable, it } = browserTests("console-reason-browser");

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

it("a reason typed on a card goes with Reject, and Try again sends the output back", async () => {
  const res = await server.post("/api/lists", { text: "Write a haiku about crows", requester: "console-reason" });
  const listId = res.body.list_id as string;
  const itemId = `${listId}-1`;
  const sse = await openSse(`${server.url}/api/events?list_id=${listId}`);
  const watched = await openPage(browser, [server.url]);
  const page = watched.page;
  await page.goto(server.url + "/", { waitUntil: "load" });
  const card = (label: string) => `::-p-aria([name="${label}"][role="listitem"])`;

  // Triage: a reason, then Approve.
  const triage = await page.waitForSelector(card("Triage of Write a haiku about crows"), { timeout: 60_000 });
  await (await triage!.$("input"))!.type("One crow will do.");
  await (await triage!.$("button.approve"))!.click();
  const triageVerdict = await sse.waitFor((m) => m.event === "verdict" && m.data.target === "triage", 60_000);
  assert.is(triageVerdict.data.reason, "One crow will do.");

  // Output: a reason, then Try again: rejected, reworked, answered again.
  const output = await page.waitForSelector(card("Output of Write a haiku about crows"), { timeout: 60_000 });
  await (await output!.$("input"))!.type("Shorter, please.");
  await page
    .locator(`${card("Output of Write a haiku about crows")} ::-p-aria([name="Try again"][role="button"])`)
    .click();
  const rejected = await sse.waitFor((m) => m.event === "verdict" && m.data.target === "output", 60_000);
  assert.equal(
    [rejected.data.verdict, rejected.data.reason, rejected.data.rework],
    ["rejected", "Shorter, please.", true],
  );
  await sse.waitFor(
    (m) => m.event === "item.answered" && sse.messages().filter((x) => x.event === "item.answered").length === 2,
    60_000,
  );
  assert.is((await server.app.log.state.approval(itemId, "output"))?.status, "pending");
  assert.equal(watched.errors, []);
  sse.close();
  await page.close();
});

it.run();

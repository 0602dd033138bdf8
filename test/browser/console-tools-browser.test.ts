// The console's Tools view in a real Chromium over the owner's cookie: a stdio server connected
// from the page (its env value sent once and found nowhere in the page afterwards), its card with
// its state, its tools with their default policies, a policy changed from the page (and seen by
// the API), and the server removed.
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { Browser } from "puppeteer-core";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { chromiumPath, launchBrowser, openPage, type WatchedPage } from "../helpers/browser.ts";
import { bearer } from "../helpers/tokens.ts";
import { HOSTILE } from "../helpers/tool-servers.ts";

const executable = chromiumPath("console-tools-browser");
const OWNER = "owner-console-tools-0123456789abcdef";
const SECRET = "console-secret-value-5f4e3d2c1b";

let server: TestServer;
let browser: Browser;

async function until<T>(watched: WatchedPage, what: string, check: (...args: any[]) => T, timeoutMs = 30_000) {
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

if (executable) {
  test.before(async () => {
    server = await startTestServer({ env: { CROWS_TOKEN: OWNER } });
    browser = await launchBrowser(executable);
  });
  test.after(async () => {
    await browser?.close();
    await server?.close();
  });

  test("connect a server from the page, see its tools and defaults, change a policy, remove it", async () => {
    const context = await browser.createBrowserContext();
    const watched = await openPage(context, [server.url]);
    const { page } = watched;
    await page.setViewport({ width: 1360, height: 900 });
    await page.goto(`${server.url}/?token=${OWNER}`, { waitUntil: "load" });
    await page.locator('::-p-aria([name="Tools"][role="button"])').click();
    await page.waitForSelector('::-p-aria([name="Tools"][role="heading"])');
    await page.locator('::-p-aria([name="Name"][role="textbox"])').fill("notes");
    await page.locator('::-p-aria([name="Command"][role="textbox"])').fill(process.execPath);
    await page.locator('::-p-aria([name="Arguments, one per line"][role="textbox"])').fill(`${HOSTILE}\npolite`);
    await page.locator("textarea[name='secrets']").fill(`API_KEY=${SECRET}`);
    await page.locator('::-p-aria([name="Connect"][role="button"])').click();
    const card = await until(
      watched,
      "the card shows",
      () => (document.querySelector("li[aria-label='Tool server notes']") as HTMLElement | null)?.innerText ?? "",
    );
    assert.match(card, /idle/);
    assert.match(card, /secrets: API_KEY/);
    await page.locator("li[aria-label='Tool server notes'] button").click(); // Tools and policies
    await until(
      watched,
      "the tools are listed",
      () => document.querySelectorAll("table[aria-label='Tools'] tr").length > 3,
    );
    const policyOf = (tool: string) =>
      page.$eval(`select[aria-label='Policy for ${tool}']`, (select) => {
        const s = select as HTMLSelectElement;
        return s.options[s.selectedIndex]!.textContent;
      });
    assert.is(await policyOf("echo_env"), "default (allow)");
    assert.is(await policyOf("write_note"), "default (ask)");
    await page.select("select[aria-label='Policy for write_note']", "deny");
    const id = (await server.request("GET", "/api/tools/servers", undefined, bearer(OWNER))).body.servers[0].id;
    await until(
      watched,
      "the page shows deny",
      () =>
        (document.querySelector("select[aria-label='Policy for write_note']") as HTMLSelectElement | null)?.value ===
        "deny",
    );
    const stored = (await server.request("GET", `/api/tools/servers/${id}`, undefined, bearer(OWNER))).body;
    assert.equal(stored.policies, { write_note: "deny" });
    assert.is(stored.state.status, "up");
    assert.not.ok((await page.content()).includes(SECRET), "the secret is gone from the page");

    await page.locator("li[aria-label='Tool server notes'] button.reject").click();
    await until(watched, "the card is gone", () => !document.querySelector("li[aria-label='Tool server notes']"));
    assert.equal((await server.request("GET", "/api/tools/servers", undefined, bearer(OWNER))).body.servers, []);
    assert.equal(watched.errors, []);
    assert.equal(watched.offOrigin, []);
    await context.close();
  });
}

test.run();

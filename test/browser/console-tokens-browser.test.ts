// The console's Tokens view and its approvals history, in a real Chromium over the owner's cookie:
// a token made in the page shows its secret once (the copy button puts it on the clipboard), the
// list shows name, prefix, scopes, last use and expiry but never a secret, and Revoke ends it at
// once. The Decided list under Approvals names who decided each verdict: the owner (from the
// page), a named token (from a script) or the system (a timeout). A console opened with a token
// without admin sees the refusal naming the scope.
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { Browser, BrowserContext } from "puppeteer-core";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { chromiumPath, launchBrowser, openPage, type WatchedPage } from "../helpers/browser.ts";
import { bearer, makeToken } from "../helpers/tokens.ts";

const executable = chromiumPath("console-tokens-browser");
const OWNER = "owner-console-tokens-0123456789abcdef";

let server: TestServer;
let browser: Browser;
const contexts: BrowserContext[] = [];

async function freshPage(token: string): Promise<WatchedPage> {
  const context = await browser.createBrowserContext();
  contexts.push(context);
  await context.overridePermissions(server.url, ["clipboard-read", "clipboard-write", "clipboard-sanitized-write"]);
  const watched = await openPage(context, [server.url]);
  await watched.page.setViewport({ width: 1360, height: 900 });
  const response = await watched.page.goto(`${server.url}/?token=${token}`, { waitUntil: "load" });
  assert.is(response!.status(), 200);
  return watched;
}

async function until<T>(
  watched: WatchedPage,
  what: string,
  check: (...args: any[]) => T,
  arg?: unknown,
  timeoutMs = 15_000,
): Promise<T> {
  try {
    const handle = await watched.page.waitForFunction(check, { timeout: timeoutMs, polling: 50 }, arg);
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
    server = await startTestServer({
      env: { CROWS_BANTER_WAIT_MS: "0", CROWS_TOKEN: OWNER, CROWS_APPROVAL_WINDOW_MS: "6000" },
    });
    browser = await launchBrowser(executable);
  });
  test.after(async () => {
    for (const context of contexts) await context.close().catch(() => {});
    await browser?.close();
    await server?.close();
  });

  test("create shows the secret once with a copy button; the list never shows it; revoke ends the token at once", async () => {
    const watched = await freshPage(OWNER);
    const { page } = watched;
    await page.locator('::-p-aria([name="Tokens"][role="button"])').click();
    await page.waitForSelector('::-p-aria([name="Tokens"][role="heading"])');
    await page.locator('::-p-aria([name="Name"][role="textbox"])').fill("ci bot");
    await page.locator('::-p-aria([name="decide"][role="checkbox"])').click();
    await page.locator('::-p-aria([name="Create token"][role="button"])').click();
    const secret = await until(
      watched,
      "the secret is shown",
      () => document.querySelector("[aria-label='New secret'] code")?.textContent ?? "",
    );
    assert.match(secret, /^crows_[A-Za-z0-9]{40}$/);
    await page.locator('::-p-aria([name="Copy"][role="button"])').click();
    await until(watched, "copied", () =>
      document.querySelector("[aria-label='New secret']")?.textContent?.includes("Copied"),
    );
    assert.is(
      await page.evaluate(() => navigator.clipboard.readText()),
      secret,
      "the copy button put the secret on the clipboard",
    );

    // The secret works, with exactly the scopes ticked (read was ticked by default).
    const listed = (await server.request("GET", "/api/tokens", undefined, bearer(OWNER))).body.tokens;
    const made = listed.find((t: any) => t.name === "ci bot");
    assert.equal(made.scopes, ["read", "decide"]);
    assert.is((await server.request("GET", "/api/nests", undefined, bearer(secret))).status, 200);
    assert.is((await server.request("POST", "/api/lists", { text: "x", requester: "ci" }, bearer(secret))).status, 403);

    const row = await until(
      watched,
      "the row shows",
      () => (document.querySelector("tr[aria-label='Token ci bot']") as HTMLElement | null)?.innerText ?? "",
    );
    assert.match(row, new RegExp(`${secret.slice(0, 10)}`));
    assert.match(row, /read, decide/);
    await page.locator('::-p-aria([name="Done"][role="button"])').click();
    await until(watched, "the secret is gone", () => !document.querySelector("[aria-label='New secret']"));
    assert.not.ok((await page.content()).includes(secret), "after Done the page holds no secret");
    await page.reload({ waitUntil: "load" });
    await page.waitForSelector("tr[aria-label='Token ci bot']");
    assert.not.ok((await page.content()).includes(secret), "nor after a reload");

    await page.locator("tr[aria-label='Token ci bot'] button").click();
    // Revoking asks first, in place (issue 33).
    await page.locator("tr[aria-label='Token ci bot'] button.confirm-yes").click();
    await until(watched, "revoked", () =>
      (document.querySelector("tr[aria-label='Token ci bot']") as HTMLElement | null)?.innerText.includes("revoked"),
    );
    assert.is((await server.request("GET", "/api/nests", undefined, bearer(secret))).status, 401);
    assert.equal(watched.errors, []);
    assert.equal(watched.offOrigin, []);
  });

  test("the Decided list names who decided each verdict: the owner, a named token, the system", async () => {
    const bot = await makeToken(server, "deploy-bot", ["decide"], bearer(OWNER));
    const watched = await freshPage(OWNER);
    const { page } = watched;
    await until(watched, "the streams are live", () =>
      document.querySelector(".connections")?.textContent?.startsWith("live"),
    );
    const posted = await server.request(
      "POST",
      "/api/lists",
      { text: "- Buy milk\n- Water the plants\n- Walk the dog", requester: "ana" },
      bearer(OWNER),
    );
    assert.is(posted.status, 202);
    const id = posted.body.list_id as string;
    await until(
      watched,
      "three triages wait",
      () => document.querySelectorAll("section.approvals li.card").length === 3,
    );
    // One from the page (the owner), one from a script with the named token; the third times out.
    await page.locator('::-p-aria([name="Triage of Buy milk"]) ::-p-aria([name="Approve"][role="button"])').click();
    assert.is(
      (
        await server.request(
          "POST",
          "/api/verdicts",
          { item_id: `${id}-2`, target: "triage", approve: false },
          bearer(bot.secret),
        )
      ).status,
      204,
    );
    const decided = (item: string, by: string) =>
      until(
        watched,
        `${item} decided by ${by}`,
        ([i, b]: string[]) =>
          [...document.querySelectorAll("[aria-label='Decided approvals'] li")].some(
            (li) => li.textContent!.includes(`${i} `) && li.textContent!.includes(`by ${b}`),
          ),
        [item, by],
      );
    await decided(`${id}-1`, "owner");
    await decided(`${id}-2`, 'token "deploy-bot"');
    await decided(`${id}-3`, "system");
    assert.equal(watched.errors, []);
  });

  test("a console opened with a read-only named token sees the Tokens refusal naming admin", async () => {
    const reader = await makeToken(server, "dashboard", ["read"], bearer(OWNER));
    const watched = await freshPage(reader.secret);
    const { page } = watched;
    await page.locator('::-p-aria([name="Tokens"][role="button"])').click();
    const alert = await until(
      watched,
      "the refusal",
      () => (document.querySelector("[role=alert]") as HTMLElement | null)?.innerText ?? "",
    );
    assert.match(alert, /lacks the "admin" scope/);
    assert.is(await page.$$eval("tr[aria-label^='Token ']", (rows) => rows.length), 0, "no token listed");
    assert.ok(
      watched.errors.every((e) => /status of 403/.test(e)),
      JSON.stringify(watched.errors),
    );
  });
}

test.run();

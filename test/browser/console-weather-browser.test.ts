// The console under provider weather (a real Chromium, a fake provider on loopback): while the
// provider answers 503 the open list shows, under each waiting item, "waiting for the provider:
// retry in N s"; when it comes back the waits go, answers stream in under their items, and the
// answer shown is the one item.answered carries.
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { Browser, Page } from "puppeteer-core";
import { chromiumPath, launchBrowser, openPage, type WatchedPage } from "../helpers/browser.ts";
import { postList, weatherServer, withWeather, type WeatherRun } from "../helpers/weather.ts";

const executable = chromiumPath("console-weather-browser");

let run: WeatherRun;
let browser: Browser;
let watched: WatchedPage;
let page: Page;
let down = true;

async function until(what: string, check: () => unknown, timeoutMs = 15_000): Promise<void> {
  try {
    await page.waitForFunction(check, { timeout: timeoutMs, polling: 50 });
  } catch (error) {
    const body = await page.evaluate(() => document.body.innerText).catch(() => "");
    throw new Error(
      `${what}: ${(error as Error).message}\nerrors: ${JSON.stringify(watched.errors)}\npage: ${body.slice(0, 2000)}`,
    );
  }
}

if (executable) {
  test.before(async () => {
    run = await weatherServer(
      withWeather((call) => {
        if (down) return { status: 503, headers: { "retry-after": "3" } };
        // Crows write slowly, so the stream is seen before the answer lands.
        return call.system.includes("Do the owner's task")
          ? {
              content: `Streamed answer for ${call.prompt.length} characters of prompt, piece by piece.`,
              chunkDelayMs: 250,
            }
          : undefined;
      }),
      { CROWS_MODEL_CIRCUIT_FAILURES: "100" },
    );
    browser = await launchBrowser(executable);
    watched = await openPage(browser, [run.server.url]);
    page = watched.page;
    await page.setViewport({ width: 1360, height: 900 });
  });

  test.after(async () => {
    await browser?.close();
    await run?.close();
  });

  test("waiting items say so, with the seconds to the next try; then the answers arrive", async () => {
    const items = ["Buy milk", "Write the release notes"];
    const listId = await postList(run.server, items);
    await page.goto(`${run.server.url}/#lists/${listId}`, { waitUntil: "load" });
    await until("both items wait for the provider", () => document.querySelectorAll(".weather .waiting").length === 2);
    const lines = await page.$$eval(".weather .waiting", (els) => els.map((el) => el.textContent ?? ""));
    for (const line of lines)
      assert.match(
        line,
        /^Sentry is waiting for the provider: retry in [0-3] s · model provider answered HTTP 503 · gives up in \d+ s$/,
      );
    const perItem = await page.$$eval("li.item", (els) =>
      els.map((el) => (el.querySelector(".weather .waiting") ? 1 : 0)),
    );
    assert.equal(perItem, [1, 1], "each under its own item");

    down = false;
    // Approve each triage from the page as it comes; the answers stream in under their items.
    for (const item of items) {
      const card = `section.approvals li.card[aria-label="Triage of ${item}"]`;
      await page.waitForSelector(card, { timeout: 15_000 });
      await page.locator(`${card} ::-p-aria([name="Approve"][role="button"])`).click();
      await page.waitForSelector(card, { hidden: true, timeout: 10_000 });
    }
    await until("an answer streams in", () =>
      document.querySelector(".weather .streaming")?.textContent?.includes("Streamed answer"),
    );
    await until("the waits are gone", () => document.querySelectorAll(".weather .waiting").length === 0);
    await until("both answers shown", () => document.querySelectorAll("blockquote.answer").length === 2, 20_000);
    const answers = await page.$$eval("blockquote.answer", (els) => els.map((el) => el.firstChild?.textContent ?? ""));
    for (const answer of answers)
      assert.match(answer, /^Streamed answer for \d+ characters of prompt, piece by piece\.$/);
    assert.equal(
      await page.$$eval(".weather .streaming", (els) => els.length),
      0,
      "an answered item shows its answer, not the stream",
    );
    assert.equal(watched.offOrigin, []);
  });
}

test.run();

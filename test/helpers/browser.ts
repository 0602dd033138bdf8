// A real Chromium for the browser tests (Debian's package, driven by puppeteer-core; no browser is
// downloaded). Without one each browser test is registered as skipped, with the reason; CI installs it and sets
// CROWS_TEST_BROWSER_REQUIRED=1, so there a missing browser fails the run instead of skipping it.
// Every page opened through openPage() records console errors, page errors and any request that
// leaves the allowed origins, so a test can assert the page ran clean and offline.
import { existsSync } from "node:fs";
import { test, type Test } from "uvu";
import { gated } from "./gate.ts";
import puppeteer, { type Browser, type BrowserContext, type Page } from "puppeteer-core";

const CANDIDATES = [process.env.CROWS_TEST_CHROMIUM, "/usr/bin/chromium", "/usr/bin/chromium-browser"];

/** The browser binary, or null (then a failure is registered on `runner` on CI). */
export function chromiumPath(suite: string, runner: Test<any> = test): string | null {
  const found = CANDIDATES.find((p): p is string => !!p && existsSync(p));
  if (found) return found;
  const why = `${suite}: no Chromium at ${CANDIDATES.filter(Boolean).join(" or ")}`;
  if (process.env.CROWS_TEST_BROWSER_REQUIRED === "1") {
    runner(`${suite}: a real Chromium is required here`, () => {
      throw new Error(`${why}, and CROWS_TEST_BROWSER_REQUIRED=1 (CI)`);
    });
    return null;
  }
  console.warn(`\n!!! SKIPPED ${why}. Install it: apt-get install chromium\n`);
  return null;
}

/** The browser binary ("" when missing) and a runner whose tests are registered as skipped without it. */
export function browserTests<T = any>(
  suite: string,
  runner: Test<T> = test as Test<T>,
): { executable: string; it: Test<T> } {
  const executable = chromiumPath(suite, runner);
  return { executable: executable ?? "", it: gated(runner, executable ? null : "no Chromium") };
}

export async function launchBrowser(executablePath: string): Promise<Browser> {
  return puppeteer.launch({
    executablePath,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--no-default-browser-check"],
  });
}

export interface WatchedPage {
  page: Page;
  /** console.error lines and uncaught page errors, in order. */
  errors: string[];
  /** Requests to any origin outside `allowedOrigins`. */
  offOrigin: string[];
}

/** A new page (in the browser, or in one of its isolated contexts) that records errors and off-origin requests. */
export async function openPage(browser: Browser | BrowserContext, allowedOrigins: string[]): Promise<WatchedPage> {
  const page = await browser.newPage();
  const errors: string[] = [];
  const offOrigin: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(`console: ${message.text()}`);
  });
  page.on("pageerror", (error) => errors.push(`pageerror: ${(error as Error).message ?? String(error)}`));
  page.on("request", (request) => {
    const url = request.url();
    if (url.startsWith("data:") || url.startsWith("blob:") || url === "about:blank") return;
    try {
      if (!allowedOrigins.includes(new URL(url).origin)) offOrigin.push(url);
    } catch {
      offOrigin.push(url);
    }
  });
  return { page, errors, offOrigin };
}

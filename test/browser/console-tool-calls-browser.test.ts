// The console's tool-call card (docs/tools.md "The approval of a call", docs/console.md) in a real
// Chromium, on a desktop and on a 390 × 844 phone: a crow (a scripted OpenAI-compatible provider
// on loopback, streaming as hosted ones do) asks to write a file with the real filesystem MCP
// server on a temporary folder; the call waits as a card (the crow, the item's text, the server,
// the tool, its whole arguments in a bounded scrollable block, the time left), arriving live on the
// tab's one stream. Approved from the card: the file is written once and the card says who approved.
// Refused with a reason: not written, the card says who refused and why, and the crow is told.
import * as assert from "uvu/assert";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Browser, Page } from "puppeteer-core";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { browserTests, launchBrowser, openPage, type WatchedPage } from "../helpers/browser.ts";
import { ownerFollows } from "../helpers/owner.ts";
import {
  defaultScript,
  roleOfSystemPrompt,
  startFakeOpenAI,
  type FakeCall,
  type FakeOpenAI,
  type FakeScript,
} from "../helpers/fake-openai.ts";
import { startFilesystemCatalog, type TestCatalog } from "../helpers/mcp-catalog.ts";

const { executable, it } = browserTests("console-tool-calls-browser");

const VIEWPORTS = [
  { name: "desktop", width: 1360, height: 900 },
  { name: "phone", width: 390, height: 844 },
] as const;
const usage = { prompt_tokens: 40, completion_tokens: 10 };

/** What the crow's earlier calls returned, as the provider receives them (tool messages). */
const toolResults = (call: FakeCall): string[] =>
  (call.body.messages as Array<{ role: string; content: unknown }>)
    .filter((m) => m.role === "tool")
    .map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)));

/** The note an item names ("Save note alpha-desktop"): its file and its forty lines of content. */
const noteOf = (text: string) => {
  const name = /Save note ([\w-]+)/.exec(text)?.[1] ?? "none";
  return {
    file: `${name}.txt`,
    content: Array.from({ length: 40 }, (_, i) => `line ${i + 1} of ${name}`).join("\n"),
  };
};

/** A crow that asks to write its item's note, then answers with what the write said. */
const writeNote: FakeScript = (call, i) => {
  if (roleOfSystemPrompt(call.system) !== "crow") return defaultScript(call, i);
  const done = toolResults(call);
  if (done.length === 0) {
    const note = noteOf(call.prompt);
    const args = JSON.stringify({ path: note.file, content: note.content });
    return { toolCalls: [{ id: "call-write", name: "fs__write_file", arguments: args }], usage };
  }
  return { content: `done; the write said: ${done[0]}`, usage };
};

/** Screenshots land in test-output/screenshots/ (gitignored), to look at what the owner sees. */
const SHOTS = path.resolve("test-output", "screenshots");
async function shot(page: Page, name: string): Promise<void> {
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

let folder: string;
let catalog: TestCatalog;
let fake: FakeOpenAI;
let server: TestServer;
let browser: Browser;
let requesters = 0;

it.before(async () => {
  folder = mkdtempSync(path.join(os.tmpdir(), "crows-console-tools-"));
  catalog = await startFilesystemCatalog(folder);
  fake = await startFakeOpenAI(writeNote);
  server = await startTestServer({
    deps: { tools: catalog },
    env: {
      CROWS_MODEL: "openai-compatible:fake-model",
      CROWS_MODEL_BASE_URL: fake.url,
      CROWS_APPROVAL_WINDOW_MS: "120000",
    },
  });
  browser = await launchBrowser(executable);
});
it.after(async () => {
  await browser?.close();
  await server?.close();
  await fake?.close();
  await catalog?.close();
  rmSync(folder, { recursive: true, force: true });
});

async function until<T>(watched: WatchedPage, what: string, check: (...args: any[]) => T, ...args: unknown[]) {
  try {
    const handle = await watched.page.waitForFunction(check, { timeout: 60_000, polling: 50 }, ...args);
    return (await handle.jsonValue()) as T;
  } catch (error) {
    const body = await watched.page.evaluate(() => document.body.innerText).catch(() => "");
    throw new Error(`${what}: ${(error as Error).message}\nerrors: ${JSON.stringify(watched.errors)}\n${body}`);
  }
}

/** A list whose item writes a note; its triage and output are approved by a scripted owner. */
async function saveNote(name: string) {
  const text = `Save note ${name}`;
  const res = await server.post("/api/lists", { text, requester: `console-tools-${requesters++}` });
  assert.is(res.status, 202, res.text);
  const owner = await ownerFollows(server.url, res.body.list_id, {}, 120_000);
  const asked = await owner.sse.waitFor((m) => m.event === "tool.asked", 60_000);
  return { text, owner, asked, card: `li.card[aria-label="Tool call write_file for ${text}"]` };
}

/** What the card shows, its arguments block's bounds, and the page's layout on this viewport. */
async function readCard(page: Page, selector: string) {
  return page.evaluate((sel) => {
    const card = document.querySelector(sel) as HTMLElement;
    const args = card.querySelector("pre.args") as HTMLElement;
    const buttons = [...card.querySelectorAll(".actions button, .decided-line button")] as HTMLElement[];
    return {
      text: card.innerText,
      args: args.textContent ?? "",
      argsHeight: args.getBoundingClientRect().height,
      argsScrolls: args.scrollHeight > args.clientHeight && getComputedStyle(args).overflowY === "auto",
      small: buttons.map((b) => [b.innerText, b.getBoundingClientRect().height] as const).filter(([, h]) => h < 44),
      scrollWidth: document.documentElement.scrollWidth,
      innerWidth: window.innerWidth,
    };
  }, selector);
}

for (const viewport of VIEWPORTS) {
  it(`${viewport.name}: a tool call approved from its card is written once; one refused with a reason is not`, async () => {
    const watched = await openPage(browser, [server.url]);
    const { page } = watched;
    await page.setViewport({ width: viewport.width, height: viewport.height });
    await page.goto(`${server.url}/`, { waitUntil: "load" });
    await until(watched, "the streams are live", () =>
      document.querySelector(".connections")?.textContent?.startsWith("live"),
    );

    // Approved: the card arrives live, shows the whole call, and the file is written once.
    const yes = await saveNote(`yes-${viewport.name}`);
    const note = noteOf(yes.text);
    await page.waitForSelector(yes.card, { timeout: 60_000 });
    const shown = await readCard(page, yes.card);
    for (const fact of [yes.text, yes.asked.data.crow, "fs", "write_file", /\d+:\d\d left/])
      assert.match(shown.text, fact, `the card shows ${fact}`);
    assert.equal(JSON.parse(shown.args), { path: note.file, content: note.content }, "the arguments, whole");
    assert.ok(shown.argsHeight <= 240 && shown.argsScrolls, `bounded and scrollable: ${shown.argsHeight}px`);
    assert.ok(shown.scrollWidth <= shown.innerWidth, `no horizontal scroll (${shown.scrollWidth})`);
    assert.equal(shown.small, [], "targets of at least 44 px");
    assert.is(existsSync(path.join(folder, note.file)), false, "not written while it waits");
    await shot(page, `tool-call-waiting-${viewport.name}`);
    await page.locator(`${yes.card} button.approve`).click();
    await until(
      watched,
      "the card says who approved",
      (sel: string) => document.querySelector(`${sel} [role=status]`)?.textContent === "Approved by owner",
      yes.card,
    );
    await yes.owner.finished;
    yes.owner.sse.close();
    assert.is(readFileSync(path.join(folder, note.file), "utf8"), note.content);
    assert.is(catalog.calls.filter((c) => c.tool === "write_file" && c.args.path === note.file).length, 1, "once");

    // Refused with a reason: not written; the card says who refused and why; the crow is told.
    const no = await saveNote(`no-${viewport.name}`);
    await page.waitForSelector(no.card, { timeout: 60_000 });
    await page.locator(`${no.card} label.reason input`).fill("keep the folder clean");
    await page.locator(`${no.card} ::-p-aria([name="Refuse"][role="button"])`).click();
    const line = await until(
      watched,
      "the card says who refused and why",
      (sel: string) => document.querySelector(`${sel} [role=status]`)?.textContent ?? "",
      no.card,
    );
    assert.is(line, "Refused by owner: keep the folder clean");
    await shot(page, `tool-call-refused-${viewport.name}`);
    const events = await no.owner.finished;
    no.owner.sse.close();
    const decided = events.find((m) => m.event === "tool.decided")!.data;
    assert.equal(
      [decided.decision, decided.reason, decided.actor],
      ["refused", "keep the folder clean", { kind: "owner" }],
    );
    assert.is(existsSync(path.join(folder, noteOf(no.text).file)), false, "not written");
    assert.ok(
      fake.calls.some(
        (c) => c.prompt.includes(no.text) && toolResults(c).some((r) => r.includes("keep the folder clean")),
      ),
      "the crow's next model call carries the reason",
    );
    const after = await readCard(page, no.card);
    assert.ok(after.scrollWidth <= after.innerWidth, `no horizontal scroll after (${after.scrollWidth})`);
    assert.equal(after.small, []);

    // Dismissed, a decided card goes; nothing waits.
    await page.locator(`${no.card} ::-p-aria([name="Dismiss"][role="button"])`).click();
    await page.locator(`${yes.card} ::-p-aria([name="Dismiss"][role="button"])`).click();
    await until(watched, "nothing waits", () =>
      document.querySelector("section.approvals")?.textContent?.includes("Nothing waits on you."),
    );
    assert.equal(watched.errors, []);
    assert.equal(watched.offOrigin, []);
    await page.close();
  });
}

it("Always for this crow and task type: approved, a standing permission granted, and the card says so", async () => {
  const watched = await openPage(browser, [server.url]);
  const { page } = watched;
  await page.setViewport({ width: 390, height: 844 });
  await page.goto(`${server.url}/`, { waitUntil: "load" });
  const always = await saveNote("always-phone");
  await page.waitForSelector(always.card, { timeout: 60_000 });
  await page.locator(`${always.card} ::-p-aria([name="Always for this crow and task type"][role="button"])`).click();
  const { crow } = always.asked.data;
  const line = await until(
    watched,
    "the card says always",
    (sel: string) => document.querySelector(`${sel} [role=status]`)?.textContent ?? "",
    always.card,
  );
  const events = await always.owner.finished;
  always.owner.sse.close();
  const taskType = events.find((m) => m.event === "item.triaged")!.data.task_type;
  assert.is(line, `Approved by owner, always for ${crow} on ${taskType}`);
  const permissions = (await server.get("/api/tool-permissions")).body.permissions;
  assert.equal(
    permissions.map((p: { crow: string; task_type: string; tool: string }) => [p.crow, p.task_type, p.tool]),
    [[crow, taskType, "write_file"]],
  );
  assert.is(readFileSync(path.join(folder, noteOf(always.text).file), "utf8"), noteOf(always.text).content);
  assert.equal(watched.errors, []);
  await page.close();
});

it.run();

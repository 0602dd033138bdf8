// The must-respond loop keeps its promise across kill -9 (docs/nests-chat.md "Obligations"): a
// crow is mid-answer on a slow model (a loopback OpenAI-compatible endpoint that takes seconds)
// when its server dies. After a restart on the same data folder, or on the other instance of a
// PostgreSQL + Redis pair once the dead one's lease lapses, the harness nudges the crow once and
// the request gets exactly one deliver or decline, as the owner sees on the nest.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startFakeOpenAI, roleOfSystemPrompt, defaultScript, type FakeOpenAI } from "../helpers/fake-openai.ts";
import { crash, startServerProcess } from "../helpers/process.ts";
import { eventually, freshDatabase, serviceTests } from "../helpers/scale-services.ts";
import { json } from "../helpers/json-http.ts";

const CROW_DELAY_MS = 3000;

async function slowCrows(delayMs = CROW_DELAY_MS): Promise<FakeOpenAI> {
  return startFakeOpenAI((call, index) => {
    if (roleOfSystemPrompt(call.system) !== "crow") return defaultScript(call, index);
    return {
      ...(defaultScript(call, index) as object),
      content: `A warm note for the bakers (call ${index}).`,
      delayMs,
    };
  });
}

const modelEnv = (fake: FakeOpenAI) => ({
  CROWS_MODEL: "openai-compatible:fake-crow",
  CROWS_MODEL_BASE_URL: fake.url,
  CROWS_MODEL_API_KEY: "test-key",
});

const messages = async (url: string, nest: string): Promise<any[]> =>
  (await json(`${url}/api/nests/${nest}/messages`)).body;
const answersTo = (all: any[], requestId: string) =>
  all.filter((m) => m.refers_to === requestId && (m.kind === "deliver" || m.kind === "decline"));

/** Posts the owner's request to Pepper and waits until Pepper has claimed it and its model call is in flight. */
async function requestInFlight(url: string, fake: FakeOpenAI): Promise<string> {
  const nest = await json(`${url}/api/nests`, "POST", { name: "Bakery", crows: ["Pepper", "Sable"] });
  assert.is(nest.status, 201, JSON.stringify(nest.body));
  const posted = await json(`${url}/api/nests/bakery/messages`, "POST", {
    author: "owner",
    text: "@Pepper please write a short note thanking the bakers",
    kind: "request",
    to: "Pepper",
  });
  assert.is(posted.status, 201, JSON.stringify(posted.body));
  assert.is(posted.body.kind, "request");
  const requestId = posted.body.msg_id as string;
  await eventually(
    "Pepper's claim",
    async () =>
      (await messages(url, "bakery")).some((m) => m.kind === "claim" && m.author === "Pepper") ? true : undefined,
    10_000,
  );
  await eventually(
    "the crow's model call",
    async () => (fake.calls.some((c) => roleOfSystemPrompt(c.system) === "crow") ? true : undefined),
    10_000,
  );
  return requestId;
}

/**
 * Posts a marker request to Pepper and waits for its answer. The marker's model call starts after
 * every earlier one and takes as long, so once its answer is stored any late duplicate would have
 * shown: the quiet is proven by an event, not assumed after a sleep.
 */
async function markerAnswered(url: string, note: string): Promise<string> {
  const marker = await json(`${url}/api/nests/bakery/messages`, "POST", {
    author: "owner",
    text: `@Pepper ${note}`,
    kind: "request",
    to: "Pepper",
  });
  assert.is(marker.status, 201, JSON.stringify(marker.body));
  const markerId = marker.body.msg_id as string;
  await eventually(
    "the marker's answer",
    async () => (answersTo(await messages(url, "bakery"), markerId).length > 0 ? true : undefined),
    30_000,
    100,
  );
  return markerId;
}

/** The request ends with one deliver (or decline) by Pepper after one harness nudge, and nothing more. */
async function assertAnsweredOnce(url: string, requestId: string): Promise<void> {
  await eventually(
    "an answer to the request",
    async () => (answersTo(await messages(url, "bakery"), requestId).length > 0 ? true : undefined),
    20_000,
    100,
  );
  const markerId = await markerAnswered(url, "one more short note, for the florist");
  const all = (await messages(url, "bakery")).filter((m) => m.msg_id !== markerId && m.refers_to !== markerId);
  const answers = answersTo(all, requestId);
  assert.is(answers.length, 1, `exactly one deliver or decline: ${JSON.stringify(answers)}`);
  assert.is(answers[0].author, "Pepper");
  const nudges = all.filter((m) => m.kind === "nudge");
  assert.is(nudges.length, 1, "one nudge on the missed expectation");
  assert.equal(
    [nudges[0].author, nudges[0].to, nudges[0].refers_to, nudges[0].tagged_by],
    ["harness", "Pepper", requestId, "harness"],
  );
  assert.is(all.filter((m) => m.kind === "claim").length, 1, "the crow does not claim twice");
}

test("one server killed -9 mid-answer: after the restart the request is answered exactly once", async () => {
  const fake = await slowCrows();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "crows-crash-"));
  const env = { CROWS_PORT: "0", CROWS_DATA_DIR: dataDir, ...modelEnv(fake) };
  let proc = await startServerProcess(env);
  try {
    const requestId = await requestInFlight(proc.url, fake);
    await crash(proc);
    proc = await startServerProcess(env);
    await assertAnsweredOnce(proc.url, requestId);
  } finally {
    await crash(proc);
    await fake.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test("a restart with nothing open posts nothing", async () => {
  const fake = await slowCrows(0);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "crows-crash-"));
  const env = { CROWS_PORT: "0", CROWS_DATA_DIR: dataDir, ...modelEnv(fake) };
  let proc = await startServerProcess(env);
  try {
    await json(`${proc.url}/api/nests`, "POST", { name: "Bakery", crows: ["Pepper"] });
    const posted = await json(`${proc.url}/api/nests/bakery/messages`, "POST", {
      author: "owner",
      text: "Write a thank-you note",
      kind: "request",
      to: "Pepper",
    });
    await eventually(
      "the deliver",
      async () => (answersTo(await messages(proc.url, "bakery"), posted.body.msg_id).length === 1 ? true : undefined),
      10_000,
    );
    const before = (await messages(proc.url, "bakery")).length;
    await crash(proc);
    proc = await startServerProcess(env);
    // The start-up sweep of open obligations runs before the ready line: it took nothing up.
    assert.not.match(proc.output().stderr, /resuming obligation/);
    const markerId = await markerAnswered(proc.url, "a note for the florist");
    const others = (await messages(proc.url, "bakery")).filter(
      (m) => m.msg_id !== markerId && m.refers_to !== markerId,
    );
    assert.is(others.length, before, "an answered request is not resumed");
  } finally {
    await crash(proc);
    await fake.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

const { svc, it: scale } = serviceTests("loop-crash (PostgreSQL + Redis)");

scale(
  "two instances: A is killed -9 mid-answer, B takes the obligation over and it is answered exactly once",
  async () => {
    const fake = await slowCrows();
    const db = await freshDatabase(svc!.pgUrl);
    const dirs = [
      mkdtempSync(path.join(os.tmpdir(), "crows-crash-a-")),
      mkdtempSync(path.join(os.tmpdir(), "crows-crash-b-")),
    ];
    const shared = {
      CROWS_PORT: "0",
      DATABASE_URL: db.url,
      REDIS_URL: svc!.redisUrl,
      CROWS_LEASE_MS: "1500",
      ...modelEnv(fake),
    };
    const a = await startServerProcess({ ...shared, CROWS_DATA_DIR: dirs[0]! });
    const b = await startServerProcess({ ...shared, CROWS_DATA_DIR: dirs[1]! });
    try {
      const requestId = await requestInFlight(a.url, fake);
      await crash(a);
      await assertAnsweredOnce(b.url, requestId);
      assert.match(
        b.output().stderr,
        `resuming obligation ${requestId} (claimed, Pepper)`,
        "the survivor took it over",
      );
    } finally {
      await crash(a);
      await crash(b);
      await fake.close();
      await db.drop();
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    }
  },
);

test.run();

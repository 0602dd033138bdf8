// The nest loop's other timers and promises survive kill -9 of the server that started them
// (docs/nests-chat.md "Obligations"): a Boss order in flight is carried out once after the
// restart; an ask_owner left on the dead server still fails closed on time, its ask.expired logged
// by the restarted server (or is approved by an exact reply after the restart); the Sentry's inspection of a claim or deliver still happens, and
// a breach still ends in exactly one flag and one ask.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startFakeOpenAI, roleOfSystemPrompt, defaultScript } from "../helpers/fake-openai.ts";
import { startFakeSystemOne } from "../helpers/fake-systemone.ts";
import { OFF_TOPIC } from "../helpers/nest-kit.ts";
import { crash, startServerProcess, type ServerProcess } from "../helpers/process.ts";
import { eventually } from "../helpers/scale-services.ts";
import { json } from "../helpers/json-http.ts";

const messages = async (url: string, nest: string): Promise<any[]> =>
  (await json(`${url}/api/nests/${nest}/messages`)).body;

async function withDataDir(fn: (dataDir: string, procs: ServerProcess[]) => Promise<void>): Promise<void> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "crows-timers-"));
  const procs: ServerProcess[] = [];
  try {
    await fn(dataDir, procs);
  } finally {
    for (const proc of procs) await crash(proc);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

test("a Boss order in flight when the server dies is carried out once after the restart", () =>
  withDataDir(async (dataDir, procs) => {
    const fake = await startFakeOpenAI((call, index) =>
      roleOfSystemPrompt(call.system) === "boss"
        ? {
            content: `SPIN {"name": "${/Finch/.test(call.prompt) ? "Finch" : "Wren"}", "persona": "Pepper", "trust": "stranger"}`,
            delayMs: 2500,
            usage: null,
          }
        : defaultScript(call, index),
    );
    try {
      const env = {
        CROWS_PORT: "0",
        CROWS_DATA_DIR: dataDir,
        CROWS_MODEL: "openai-compatible:fake",
        CROWS_MODEL_BASE_URL: fake.url,
        CROWS_MODEL_API_KEY: "k",
      };
      const first = await startServerProcess(env);
      procs.push(first);
      const posted = await json(`${first.url}/api/nests/todo/messages`, "POST", {
        author: "owner",
        text: "Spin up a crow called Wren that works like Pepper",
        kind: "request",
        to: "Boss",
      });
      assert.is(posted.status, 201);
      await eventually(
        "Boss's model call",
        async () => (fake.calls.some((c) => roleOfSystemPrompt(c.system) === "boss") ? true : undefined),
        10_000,
      );
      await crash(first);
      const second = await startServerProcess(env);
      procs.push(second);
      const reply = await eventually(
        "Boss's reply",
        async () =>
          (await messages(second.url, "todo")).find((m) => m.author === "Boss" && m.refers_to === posted.body.msg_id),
        15_000,
      );
      assert.match(reply.text, /Spun up Wren/);
      // A marker: a second order, posted after the first was carried out. Its model call is as slow
      // as a second carrying-out of the first, which would have started sooner, so once the marker's
      // reply is in, a duplicate of the first would be too.
      const marker = await json(`${second.url}/api/nests/todo/messages`, "POST", {
        author: "owner",
        text: "Spin up a crow called Finch that works like Pepper",
        kind: "request",
        to: "Boss",
      });
      assert.is(marker.status, 201);
      const markerReply = await eventually(
        "Boss's reply to the marker",
        async () =>
          (await messages(second.url, "todo")).find((m) => m.author === "Boss" && m.refers_to === marker.body.msg_id),
        20_000,
      );
      assert.match(markerReply.text, /Spun up Finch/);
      const all = await messages(second.url, "todo");
      assert.is(
        all.filter((m) => m.author === "Boss" && m.refers_to !== marker.body.msg_id).length,
        1,
        "one reply from Boss",
      );
      const crows = (await json(`${second.url}/api/crows`)).body;
      const wrens = (Array.isArray(crows) ? crows : (crows.crows ?? [])).filter((c: any) => c.name === "Wren");
      assert.is(wrens.length, 1, "spun exactly once");
    } finally {
      await fake.close();
    }
  }));

const WINDOW_MS = 15_000;

test("an ask_owner survives kill -9: it still reads rejected once its window passes, and an exact reply after the restart approves another", () =>
  withDataDir(async (dataDir, procs) => {
    const env = { CROWS_PORT: "0", CROWS_DATA_DIR: dataDir, CROWS_APPROVAL_WINDOW_MS: String(WINDOW_MS) };
    const first = await startServerProcess(env);
    procs.push(first);
    const postedAt = Date.now(); // before either post: each window ends no sooner than this + WINDOW_MS
    const left = await json(`${first.url}/api/nests/todo/messages`, "POST", {
      author: "owner",
      text: "May the crows book the venue?",
      kind: "ask_owner",
      approval_phrase: "book it",
    });
    const answered = await json(`${first.url}/api/nests/todo/messages`, "POST", {
      author: "owner",
      text: "May the crows order the cake?",
      kind: "ask_owner",
      approval_phrase: "order it",
    });
    assert.equal([left.status, answered.status], [201, 201]);
    await crash(first);
    const second = await startServerProcess(env);
    procs.push(second);
    const reply = await json(`${second.url}/api/nests/todo/messages`, "POST", {
      author: "owner",
      text: "  Order It ",
      refers_to: answered.body.msg_id,
    });
    assert.is(reply.status, 201);
    const read = async (id: string) => (await messages(second.url, "todo")).find((m) => m.msg_id === id);
    const stillOpen = (await read(left.body.msg_id)).resolved;
    const readAt = Date.now();
    // The window is wide so that this check always runs; a restart slower than it fails loudly.
    assert.ok(
      readAt < postedAt + WINDOW_MS - 500,
      `the restart took ${readAt - postedAt} ms, past the ${WINDOW_MS} ms window: raise WINDOW_MS`,
    );
    assert.is(stillOpen, "", "still open inside its window");
    assert.is((await read(answered.body.msg_id)).resolved, "approved");
    const closed = await eventually(
      "the left ask to fail closed",
      async () => ((await read(left.body.msg_id)).resolved === "rejected" ? Date.now() : undefined),
      WINDOW_MS + 20_000,
      100,
    );
    assert.ok(closed >= postedAt + WINDOW_MS, "not before its window ended");
    assert.is((await read(answered.body.msg_id)).resolved, "approved");
    // The expiry is logged once, by the restarted server; the approved ask never expires.
    const expiries = async () => {
      const text = await (
        await fetch(`${second.url}/api/export/events?stream=${encodeURIComponent("watch:todo")}`)
      ).text();
      return text
        .split("\n")
        .filter((line) => line.trim() !== "")
        .map((line) => JSON.parse(line))
        .filter((e) => e.name === "ask.expired")
        .map((e) => e.payload.ask_id);
    };
    await eventually(
      "the left ask's ask.expired",
      async () => ((await expiries()).length > 0 ? true : undefined),
      20_000,
      100,
    );
    assert.equal(await expiries(), [left.body.msg_id]);
  }));

test("the Sentry's inspection in flight when the server dies happens after the restart: one flag, one ask", () =>
  withDataDir(async (dataDir, procs) => {
    const jev = await startFakeSystemOne({ apiKey: "k" });
    // Jev is unsure of kinds (the headers decide) and finds every watched message off-topic, slowly.
    jev.reply = (call) => ({ delayMs: Object.keys(call.body.questions ?? {}).includes("answers_request") ? 2500 : 0 });
    jev.answer = (id, question) =>
      question.type === "noul"
        ? { type: "noul", noul: OFF_TOPIC[id as keyof typeof OFF_TOPIC] }
        : { type: "unsure", reason: "unsure" };
    try {
      const env = {
        CROWS_PORT: "0",
        CROWS_DATA_DIR: dataDir,
        CROWS_JEV: "systemone",
        CROWS_JEV_BASE_URL: jev.url,
        CROWS_JEV_API_KEY: "k",
      };
      const first = await startServerProcess(env);
      procs.push(first);
      await json(`${first.url}/api/nests`, "POST", { name: "Ops", crows: ["Inky"] });
      const posted = await json(`${first.url}/api/nests/ops/messages`, "POST", {
        author: "owner",
        text: "Fix the flaky deploy script",
        kind: "request",
        to: "Inky",
      });
      assert.is(posted.status, 201);
      await eventually(
        "an inspection in flight",
        async () =>
          jev.calls.some((c) => Object.keys(c.body.questions ?? {}).includes("answers_request")) ? true : undefined,
        10_000,
      );
      await crash(first);
      const second = await startServerProcess(env);
      procs.push(second);
      const ask = await eventually(
        "the Sentry's ask",
        async () => (await messages(second.url, "ops")).find((m) => m.kind === "ask_owner"),
        20_000,
      );
      // A marker: another crow's answer in another nest, inspected as slowly and only now, so after
      // any second inspection of Inky's (which would have started at the restart). Once its ask is
      // in, a duplicate flag or ask for Inky would be too.
      await json(`${second.url}/api/nests`, "POST", { name: "Desk", crows: ["Rook"] });
      const marker = await json(`${second.url}/api/nests/desk/messages`, "POST", {
        author: "owner",
        text: "Fix the flaky backup script",
        kind: "request",
        to: "Rook",
      });
      assert.is(marker.status, 201);
      const markerAsk = await eventually(
        "the Sentry's ask on the marker",
        async () => (await messages(second.url, "desk")).find((m) => m.kind === "ask_owner"),
        30_000,
      );
      assert.is(markerAsk.approval_phrase, "reinstate Rook");
      const all = await messages(second.url, "ops");
      const flags = all.filter((m) => m.kind === "flag");
      assert.is(flags.length, 1, "one flag per crow per referent");
      assert.equal([flags[0].author, flags[0].to], ["Sentry", "Inky"]);
      assert.is(all.filter((m) => m.kind === "ask_owner").length, 1);
      assert.equal(
        [ask.author, ask.to, ask.refers_to, ask.approval_phrase],
        ["Sentry", "owner", flags[0].msg_id, "reinstate Inky"],
      );
    } finally {
      await jev.close();
    }
  }));

test.run();

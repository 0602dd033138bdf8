// A rework survives kill -9 (docs/rules.md "Rework"): the verdict that sends the output back, the
// item moved back to `working` and its stored note commit in one transaction. A server killed while
// the rework is in the air flies it again after the restart, once: one more item.answered, one
// rejection that asked for it, and the stream still reads as a valid story to an docs/contract.md client.
import { test } from "uvu";
import { LOST_FLIGHT_ERROR } from "../../src/flock/lost-flights.ts";
import * as assert from "uvu/assert";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startFakeOpenAI, defaultScript } from "../helpers/fake-openai.ts";
import { crash, startServerProcess } from "../helpers/process.ts";
import { openSse } from "../helpers/sse.ts";
import { ownerFollows } from "../helpers/owner.ts";
import { readStory } from "../helpers/contract-story.ts";

const isRework = (prompt: string) => /asked for another try/.test(prompt);

test("kill -9 with the rework in the air: after the restart it flies again and lands once", async () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "crows-rework-crash-"));
  let hold = true;
  const fake = await startFakeOpenAI((call, index) =>
    // The first server's rework never comes back: it is in the air when the server dies.
    isRework(call.prompt) && hold ? { content: "late", delayMs: 120_000 } : defaultScript(call, index),
  );
  const env = {
    CROWS_PORT: "0",
    CROWS_DATA_DIR: dataDir,
    CROWS_MODEL: "openai-compatible:fake",
    CROWS_MODEL_BASE_URL: fake.url,
    CROWS_MODEL_API_KEY: "k",
  };
  const procs: Array<Awaited<ReturnType<typeof startServerProcess>>> = [];
  try {
    const first = await startServerProcess(env);
    procs.push(first);
    const posted = await fetch(`${first.url}/api/lists`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ text: "Write a short toast for a wedding", requester: "crash" }),
    });
    const listId = ((await posted.json()) as { list_id: string }).list_id;
    const itemId = `${listId}-1`;
    const sse = await openSse(`${first.url}/api/events?list_id=${listId}`);
    const verdict = (target: string, body: object) =>
      fetch(`${first.url}/api/verdicts`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ item_id: itemId, target, ...body }),
      }).then((r) => r.status);
    await sse.waitFor((m) => m.event === "item.triaged", 60_000);
    assert.is(await verdict("triage", { approve: true }), 204);
    await sse.waitFor((m) => m.event === "item.answered", 60_000);
    assert.is(await verdict("output", { approve: false, rework: true, reason: "Less formal." }), 204);
    // The rework took off: its crow.flying is committed, and the provider holds the call.
    await sse.waitFor(
      (m) =>
        m.event === "crow.flying" &&
        sse.messages().findIndex((x) => x.event === "verdict" && x.data.target === "output") >= 0,
      60_000,
    );
    const waitForCall = async () => {
      for (let i = 0; i < 600 && !fake.calls.some((c) => isRework(c.prompt)); i++)
        await new Promise((r) => setTimeout(r, 50));
    };
    await waitForCall();
    assert.ok(
      fake.calls.some((c) => isRework(c.prompt)),
      "the rework reached the provider",
    );
    sse.close();
    await crash(first);

    hold = false;
    const second = await startServerProcess(env);
    procs.push(second);
    const owner = await ownerFollows(second.url, listId, { decide: () => true }, 120_000);
    const events = await owner.finished;
    owner.sse.close();

    const story = readStory(events);
    assert.equal(story.problems, [], story.problems.join("\n"));
    const of = (name: string) => events.filter((e) => e.event === name && e.data.item_id === itemId);
    assert.is(of("item.answered").length, 2, "the first answer and one rework");
    const outputVerdicts = of("verdict").filter((e) => e.data.target === "output");
    assert.equal(
      outputVerdicts.map((e) => [e.data.verdict, e.data.rework ?? null]),
      [
        ["rejected", true],
        ["approved", null],
      ],
    );
    // The cut flight never lands from the dead instance: the restart's owner lands it as lost
    // (docs/rules.md "One owner's story"), then flies the rework again, and that one lands.
    const afterVerdict = events.slice(events.indexOf(outputVerdicts[0]!) + 1).filter((e) => e.data.item_id === itemId);
    assert.equal(
      afterVerdict.map((e) => e.event).filter((n) => n !== "trust.changed"),
      ["crow.flying", "crow.landed", "crow.flying", "crow.landed", "item.answered", "verdict"],
    );
    const cut = afterVerdict.filter((e) => e.event === "crow.landed")[0]!;
    assert.equal([cut.data.ok, cut.data.error], [false, LOST_FLIGHT_ERROR], "the cut flight lands as lost");
    assert.ok(of("item.answered")[1]!.data.answer !== "late");
  } finally {
    for (const proc of procs) await crash(proc);
    await fake.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test.run();

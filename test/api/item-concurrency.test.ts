// At most CROWS_ITEM_CONCURRENCY items of a list are in flight at once (docs/configuration.md): a
// list of many items runs against a loopback provider whose every triage and crow call is held a
// moment, and the calls open at one time never exceed the setting, and do reach it. The provider gate
// (CROWS_MODEL_CONCURRENCY) is set above every cap here, so the item limit is the one observed.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer } from "../helpers/server.ts";
import { ownerFollows } from "../helpers/owner.ts";
import { defaultScript, roleOfSystemPrompt, startFakeOpenAI } from "../helpers/fake-openai.ts";

const ITEMS = Array.from({ length: 9 }, (_, i) => `Errand number ${i + 1}: pick up parcel ${i + 1}`);

for (const cap of [1, 2, 3, 5]) {
  test(`CROWS_ITEM_CONCURRENCY=${cap}: no more than ${cap} items are worked at once, and ${cap} are`, async () => {
    let open = 0;
    let most = 0;
    const itemsOpen = new Map<string, number>();
    const fake = await startFakeOpenAI(async (call, index) => {
      const role = roleOfSystemPrompt(call.system);
      if (role !== "sentry" && role !== "crow") return defaultScript(call, index);
      // One item has one triage or one solo crow call at a time: open calls are items in flight.
      const item = /Errand number (\d+)/.exec(call.prompt)?.[1] ?? "?";
      itemsOpen.set(item, (itemsOpen.get(item) ?? 0) + 1);
      open += 1;
      most = Math.max(most, open);
      await new Promise((resolve) => setTimeout(resolve, 150)); // held, so items overlap
      open -= 1;
      itemsOpen.set(item, itemsOpen.get(item)! - 1);
      return defaultScript(call, index);
    });
    const server = await startTestServer({
      env: {
        CROWS_MODEL: "openai-compatible:fake-model",
        CROWS_MODEL_BASE_URL: fake.url,
        CROWS_MODEL_API_KEY: "k",
        CROWS_ITEM_CONCURRENCY: String(cap),
        CROWS_MODEL_CONCURRENCY: "16",
      },
    });
    try {
      const res = await server.post("/api/lists", { text: ITEMS.join("\n"), requester: `cap-${cap}` });
      assert.is(res.status, 202);
      const owner = await ownerFollows(server.url, res.body.list_id, {}, 120_000);
      const events = await owner.finished;
      owner.sse.close();
      assert.is(events.filter((e) => e.event === "item.answered").length, ITEMS.length, "every item is answered");
      assert.is(events.filter((e) => e.event === "item.skipped").length, 0, "none is skipped");
      assert.ok(
        [...itemsOpen.keys()].every((k) => k !== "?"),
        "every call names its item",
      );
      assert.ok(most <= cap, `${most} items were in flight at once with CROWS_ITEM_CONCURRENCY=${cap}`);
      assert.is(most, cap, `the list used its ${cap} slots`);
    } finally {
      await server.close();
      await fake.close();
    }
  });
}

test.run();

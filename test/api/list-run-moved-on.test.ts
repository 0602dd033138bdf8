// An item leaves each stage once (src/storage/flock-state.ts moveItem). A run whose model call comes
// back after another writer moved the item on (an instance that took the list over while this one
// stalled past its lease) appends nothing for it and moves nothing back; the list's other items
// and its end go on as before.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { OfflineBrain } from "../../src/models/offline.ts";
import type { Model, ModelReply, ModelRequest } from "../../src/models/model.ts";
import { startTestServer } from "../helpers/server.ts";
import { ownerFollows } from "../helpers/owner.ts";
import { eventually } from "../helpers/scale-services.ts";

/** The offline brain, with one item's call of one role held until released; it answers even if aborted, as a reply already on the wire would. */
function holding(role: "sentry" | "crow", text: string): Model & { held: Promise<void>; release: () => void } {
  const brain = new OfflineBrain();
  let heldNow!: () => void;
  const held = new Promise<void>((resolve) => (heldNow = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  return {
    name: "offline-holding",
    held,
    release,
    async generate(request: ModelRequest): Promise<ModelReply> {
      const about =
        request.role === "sentry" ? request.input.item : request.role === "crow" ? request.input.task : undefined;
      if (request.role === role && about === text) {
        heldNow();
        await released;
      }
      return brain.generate({ ...request, signal: undefined });
    },
  };
}

const cases: Array<{
  role: "sentry" | "crow";
  heldAt: string;
  movedTo: "done" | "skipped" | "awaiting_output";
  list: string[];
}> = [
  { role: "sentry", heldAt: "pending", movedTo: "done", list: ["Buy milk", "Call mum", "Water the plants"] },
  { role: "sentry", heldAt: "pending", movedTo: "skipped", list: ["Call mum", "Buy milk"] },
  { role: "crow", heldAt: "working", movedTo: "done", list: ["Water the plants", "Buy milk"] },
  {
    role: "crow",
    heldAt: "working",
    movedTo: "awaiting_output",
    list: ["Buy milk", "Write a haiku about crows", "Call mum"],
  },
  { role: "crow", heldAt: "working", movedTo: "skipped", list: ["Buy milk"] },
];

for (const c of cases) {
  test(`a ${c.role} answer that lands after the item moved ${c.heldAt} -> ${c.movedTo} elsewhere appends nothing for it`, async () => {
    const target = c.list[c.list.length - 1]!;
    const model = holding(c.role, target);
    const lines: string[] = [];
    const server = await startTestServer({ deps: { model, logLine: (line) => lines.push(line) } });
    try {
      const posted = await server.post("/api/lists", { text: c.list.join("\n"), requester: "moved-on" });
      assert.is(posted.status, 202);
      const listId = posted.body.list_id as string;
      const owner = await ownerFollows(server.url, listId);
      const itemId = `${listId}-${c.list.length}`;
      await model.held;
      const item = await server.app.prisma.item.findUniqueOrThrow({ where: { id: itemId } });
      assert.is(item.stage, c.heldAt);
      // Another writer moves the item on while the call is out.
      await server.app.prisma.item.update({
        where: { id: itemId },
        data: { stage: c.movedTo, answer: "theirs", skipReason: c.movedTo === "skipped" ? "rejected" : null },
      });
      const before = (await server.app.log.read(`list:${listId}`))
        .filter((e) => JSON.parse(e.payload).item_id === itemId)
        .map((e) => e.name);
      model.release();
      if (c.movedTo !== "awaiting_output") {
        const messages = await owner.finished;
        assert.is(messages.at(-1)!.event, "list.finished");
      } else {
        // The item waits at awaiting_output for the other writer's approval; this run lets it go.
        owner.finished.catch(() => {}); // the list does not finish here: its stream is closed below
        await eventually("the run letting the item go", async () =>
          lines.some((l) => l.includes(`item ${itemId} left`)) ? true : undefined,
        );
      }
      owner.sse.close();
      const after = (await server.app.log.read(`list:${listId}`))
        .filter((e) => JSON.parse(e.payload).item_id === itemId)
        .map((e) => e.name);
      // The held flight did land (its crow.landed tells so); nothing about the item's stage follows.
      assert.equal(after.slice(0, before.length), before);
      assert.equal(after.slice(before.length), ["crow.landed"], "only the flight's landing after the item moved");
      const stored = await server.app.prisma.item.findUniqueOrThrow({ where: { id: itemId } });
      assert.equal([stored.stage, stored.answer], [c.movedTo, "theirs"]);
      assert.ok(
        lines.some((l) => l.includes(`item ${itemId} left ${c.heldAt}`)),
        lines.join("\n"),
      );
      // The other items went their usual way.
      const others = () => server.app.prisma.item.findMany({ where: { listId, NOT: { id: itemId } } });
      await eventually("the other items done", async () =>
        (await others()).every((o) => o.stage === "done") ? true : undefined,
      );
      assert.is((await others()).length, c.list.length - 1);
    } finally {
      model.release();
      await server.close();
    }
  });
}

test.run();

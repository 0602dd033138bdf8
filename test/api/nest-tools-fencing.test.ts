// A nest crow's tool calls are fenced by the epoch of the obligation it answers under (docs/tools.md
// "At most once", "Nest crows with tools"), as a list flight's are by its list's. In process: a
// real filesystem MCP server serving nest `bench` with `write_file` allowed, and a scripted
// provider whose crow asks for the write; while the crow's model call is in the air, the request's
// obligation is taken over as another instance's claim would (its epoch grows, its owner changes).
// The turn's call is refused in the transaction that would have started it: no row, no event, the
// file is never written, the model is never told a result, and the turn steps down with no reply.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { startKit, type Kit } from "../helpers/nest-kit.ts";
import { defaultScript, roleOfSystemPrompt, startFakeOpenAI, type FakeScript } from "../helpers/fake-openai.ts";
import { eventually } from "../helpers/scale-services.ts";
import { watchStream } from "../../src/base/streams.ts";

const require = createRequire(import.meta.url);
const FS_SERVER = require.resolve("@modelcontextprotocol/server-filesystem/dist/index.js");
const usage = { prompt_tokens: 40, completion_tokens: 10 };

test("a turn whose obligation another instance claimed has its call refused before it runs, and steps down", async () => {
  const folder = mkdtempSync(path.join(os.tmpdir(), "crows-nest-fence-"));
  const lines: string[] = [];
  let kit: Kit | undefined;
  // Another instance's claim of the request's obligation, as Ownership's claim writes it.
  const takeOver = async () => {
    const taken = await kit!.server.app.prisma.obligation.updateMany({
      where: { nestId: "bench", stage: { in: ["awaiting_claim", "claimed"] } },
      data: { ownerId: "another-instance", leaseUntil: new Date(Date.now() + 600_000), epoch: { increment: 1 } },
    });
    assert.is(taken.count, 1, "the request's obligation is taken over");
  };
  const script: FakeScript = async (call, i) => {
    if (roleOfSystemPrompt(call.system) !== "crow") return defaultScript(call, i);
    await takeOver();
    const args = JSON.stringify({ path: "out.txt", content: "written by a stale turn" });
    return { toolCalls: [{ id: "call-write", name: "fs__write_file", arguments: args }], usage };
  };
  const fake = await startFakeOpenAI(script);
  try {
    kit = await startKit({
      env: { CROWS_MODEL: "openai-compatible:fake-model", CROWS_MODEL_BASE_URL: fake.url },
      deps: { logLine: (line) => lines.push(line) },
    });
    assert.is((await kit.server.post("/api/nests", { name: "bench", crows: ["Hugin"] })).status, 201);
    const added = await kit.server.post("/api/tools/servers", {
      name: "fs",
      command: process.execPath,
      args: [FS_SERVER, folder],
      nests: ["bench"],
      policies: { write_file: "allow" },
    });
    assert.is(added.status, 201, JSON.stringify(added.body));
    const posted = await kit.post("bench", {
      author: "owner",
      kind: "request",
      to: "Hugin",
      text: "Pick an espresso machine and note it down",
    });
    assert.is(posted.status, 201);
    const requestId = posted.body.msg_id as string;
    await eventually(
      "the turn to step down from the obligation",
      async () => lines.some((l) => l.includes(`stepped down from obligation ${requestId}`)),
      30_000,
    );
    await kit.idle();

    assert.is(existsSync(path.join(folder, "out.txt")), false, "the call never ran");
    assert.is(await kit.server.app.prisma.toolCall.count(), 0, "its insert and start never committed");
    const events = await kit.server.app.log.read(watchStream("bench"), 0, 100_000);
    assert.equal(
      events.filter((e) => e.name.startsWith("tool.")),
      [],
      "no tool event on the nest's side log",
    );
    const crowCalls = fake.calls.filter((c) => roleOfSystemPrompt(c.system) === "crow");
    assert.is(crowCalls.length, 1, "the model was never told a result");
    const replies = (await kit.messages("bench")).filter((m: any) => m.refers_to === requestId && m.author === "Hugin");
    assert.equal(
      replies.map((m: any) => m.kind),
      ["claim"],
      "the stale turn posts no deliver or decline",
    );
    const obligation = await kit.server.app.prisma.obligation.findUniqueOrThrow({ where: { id: requestId } });
    assert.equal([obligation.stage, obligation.ownerId, obligation.epoch], ["claimed", "another-instance", 2]);
  } finally {
    await kit?.close();
    await fake.close();
    rmSync(folder, { recursive: true, force: true });
  }
});

test.run();

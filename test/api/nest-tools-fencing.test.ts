// A nest crow's tool calls are fenced by the epoch of the obligation it answers under (docs/tools.md
// "At most once", "Nest crows with tools"), as a list flight's are by its list's. In process: a
// real filesystem MCP server serving nest `bench` with `write_file` allowed, and a scripted
// provider whose crow asks for the write; while the crow's model call is in the air, the request's
// obligation is taken over as another instance's claim would (its epoch grows, its owner changes).
// The turn's call is refused in the transaction that would have started it: no row, no event, the
// file is never written, the model is never told a result, and the turn steps down with no reply.
// A turn waiting on the owner's approval stops as soon as the lease sweep sees the takeover.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { startKit, type Kit } from "../helpers/nest-kit.ts";
import {
  defaultScript,
  roleOfSystemPrompt,
  startFakeOpenAI,
  type FakeOpenAI,
  type FakeScript,
} from "../helpers/fake-openai.ts";
import { eventually } from "../helpers/scale-services.ts";
import { watchStream } from "../../src/base/streams.ts";

const require = createRequire(import.meta.url);
const FS_SERVER = require.resolve("@modelcontextprotocol/server-filesystem/dist/index.js");
const usage = { prompt_tokens: 40, completion_tokens: 10 };

interface Rig {
  kit: Kit;
  fake: FakeOpenAI;
  folder: string;
  lines: string[];
  close(): Promise<void>;
}

/** A server with nest `bench` (Hugin) served by the filesystem server; its log lines kept. */
async function rig(script: FakeScript, env: Record<string, string>, policies: object = {}): Promise<Rig> {
  const folder = mkdtempSync(path.join(os.tmpdir(), "crows-nest-fence-"));
  const lines: string[] = [];
  const fake = await startFakeOpenAI(script);
  const kit = await startKit({
    env: { CROWS_MODEL: "openai-compatible:fake-model", CROWS_MODEL_BASE_URL: fake.url, ...env },
    deps: { logLine: (line) => lines.push(line) },
  });
  const close = async () => {
    await kit.close();
    await fake.close();
    rmSync(folder, { recursive: true, force: true });
  };
  try {
    assert.is((await kit.server.post("/api/nests", { name: "bench", crows: ["Hugin"] })).status, 201);
    const added = await kit.server.post("/api/tools/servers", {
      name: "fs",
      command: process.execPath,
      args: [FS_SERVER, folder],
      nests: ["bench"],
      policies,
    });
    assert.is(added.status, 201, JSON.stringify(added.body));
  } catch (error) {
    await close();
    throw error;
  }
  return { kit, fake, folder, lines, close };
}

/** Another instance's claim of the request's obligation, as Ownership's claim writes it. */
async function takeOver(kit: Kit): Promise<void> {
  const taken = await kit.server.app.prisma.obligation.updateMany({
    where: { nestId: "bench", stage: { in: ["awaiting_claim", "claimed"] } },
    data: { ownerId: "another-instance", leaseUntil: new Date(Date.now() + 600_000), epoch: { increment: 1 } },
  });
  assert.is(taken.count, 1, "the request's obligation is taken over");
}

/** The crow asks for one write of out.txt; `before` runs first, while its model call is in the air. */
function writes(before: () => Promise<void> = async () => {}): FakeScript {
  return async (call, i) => {
    if (roleOfSystemPrompt(call.system) !== "crow") return defaultScript(call, i);
    await before();
    const args = JSON.stringify({ path: "out.txt", content: "written by a stale turn" });
    return { toolCalls: [{ id: "call-write", name: "fs__write_file", arguments: args }], usage };
  };
}

async function request(kit: Kit): Promise<string> {
  const posted = await kit.post("bench", {
    author: "owner",
    kind: "request",
    to: "Hugin",
    text: "Pick an espresso machine and note it down",
  });
  assert.is(posted.status, 201);
  return posted.body.msg_id as string;
}

async function steppedDown(r: Rig, requestId: string): Promise<void> {
  await eventually(
    "this instance to step down from the obligation",
    async () => r.lines.some((l) => l.includes(`stepped down from obligation ${requestId}`)),
    30_000,
  );
}

/** What the stale turn left: no reply but its claim, one model call, the obligation the other instance's. */
async function assertNoReply(r: Rig, requestId: string): Promise<void> {
  const crowCalls = r.fake.calls.filter((c) => roleOfSystemPrompt(c.system) === "crow");
  assert.is(crowCalls.length, 1, "the model was never told a result");
  const replies = (await r.kit.messages("bench")).filter((m: any) => m.refers_to === requestId && m.author === "Hugin");
  assert.equal(
    replies.map((m: any) => m.kind),
    ["claim"],
    "the stale turn posts no deliver or decline",
  );
  const obligation = await r.kit.server.app.prisma.obligation.findUniqueOrThrow({ where: { id: requestId } });
  assert.equal([obligation.stage, obligation.ownerId, obligation.epoch], ["claimed", "another-instance", 2]);
}

test("a turn whose obligation another instance claimed has its call refused before it runs, and steps down", async () => {
  let kit: Kit | undefined;
  const r = await rig(
    writes(() => takeOver(kit!)),
    {},
    { write_file: "allow" },
  );
  kit = r.kit;
  try {
    const requestId = await request(kit);
    await steppedDown(r, requestId);
    await kit.idle();
    assert.is(existsSync(path.join(r.folder, "out.txt")), false, "the call never ran");
    assert.is(await kit.server.app.prisma.toolCall.count(), 0, "its insert and start never committed");
    const events = await kit.server.app.log.read(watchStream("bench"), 0, 100_000);
    assert.equal(
      events.filter((e) => e.name.startsWith("tool.")),
      [],
      "no tool event on the nest's side log",
    );
    await assertNoReply(r, requestId);
  } finally {
    await r.close();
  }
});

test("a turn waiting on an approval stops when the lease sweep finds its obligation taken over", async () => {
  // A short lease, so the sweep (every third of it) soon sees the takeover; a long approval window.
  const r = await rig(writes(), { CROWS_LEASE_MS: "1500", CROWS_APPROVAL_WINDOW_MS: "120000" });
  try {
    const requestId = await request(r.kit);
    const asked = await eventually("the write call to ask", async () =>
      (await r.kit.server.app.prisma.toolCall.findMany()).find((c) => c.status === "asked"),
    );
    await takeOver(r.kit);
    await steppedDown(r, requestId);
    // The turn ended at the step-down, not at its call's deadline: the call still waits there.
    await r.kit.idle();
    const row = await r.kit.server.app.prisma.toolCall.findUniqueOrThrow({ where: { id: asked.id } });
    assert.is(row.status, "asked");
    assert.ok(row.deadline!.getTime() > Date.now(), "the turn stopped before the call's deadline");
    await assertNoReply(r, requestId);
  } finally {
    await r.close();
  }
});

test.run();

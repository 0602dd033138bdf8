// Windows that fit (docs/rules.md "Windows"): CROWS_APPROVAL_WINDOWS gives a task type or a nest
// a window of its own (the task type's first, then the nest's, then the contract's ten minutes),
// each from a minute to a day; the deadline every approval shows is its own window's.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer } from "../helpers/server.ts";
import { openSse } from "../helpers/sse.ts";
import { loadConfig } from "../../src/base/config.ts";

test("the windows' settings: bounds and syntax are startup errors that name the variable", () => {
  const load = (windows: string, base?: string) =>
    loadConfig({
      CROWS_APPROVAL_WINDOWS: windows,
      ...(base ? { CROWS_APPROVAL_WINDOW_MS: base } : {}),
    }).approvalWindows;
  assert.equal(load("task:errand=2m, nest:launch-copy=90m,task:research=1h"), {
    byNest: { "launch-copy": 5_400_000 },
    byTaskType: { errand: 120_000, research: 3_600_000 },
  });
  assert.equal(load(""), { byNest: {}, byTaskType: {} });
  assert.equal(load("task:errand=60s").byTaskType.errand, 60_000, "a minute exactly is allowed");
  for (const bad of [
    "task:errand=59s",
    "nest:todo=25h",
    "task:errand=0m",
    "errand=2m",
    "task:errand=2d",
    "task:errand=1.5m",
  ])
    assert.throws(() => load(bad), /CROWS_APPROVAL_WINDOWS/, bad);
  // A test that shortens the base window under a minute may shorten these as far.
  assert.is(load("task:errand=5s", "4000").byTaskType.errand, 5_000);
  assert.throws(() => load("task:errand=3s", "4000"), /a minute to a day/);
});

test("each approval's deadline is its task type's window, else its nest's, else ten minutes", async () => {
  const server = await startTestServer({
    env: { CROWS_APPROVAL_WINDOWS: "task:errand=2m,nest:launch-copy=30m" },
  });
  try {
    const nest = await server.post("/api/nests", { name: "Launch copy", crows: ["Pepper", "Inky"] });
    assert.is(nest.status, 201, nest.text);
    const cases = [
      { text: "Buy milk", nest_id: "todo" },
      { text: "Write a haiku about crows", nest_id: "launch-copy" },
      { text: "Write a haiku about rooks", nest_id: "todo" },
    ];
    for (const [n, c] of cases.entries()) {
      const res = await server.post("/api/lists", { text: c.text, requester: `windows-${n}`, nest_id: c.nest_id });
      assert.is(res.status, 202, res.text);
      const listId = res.body.list_id as string;
      const sse = await openSse(`${server.url}/api/events?list_id=${listId}`);
      const triaged = (await sse.waitFor((m) => m.event === "item.triaged", 60_000)).data;
      sse.close();
      const expected = triaged.task_type === "errand" ? 120_000 : c.nest_id === "launch-copy" ? 1_800_000 : 600_000;
      const row = await server.app.prisma.approval.findUniqueOrThrow({
        where: { itemId_target: { itemId: triaged.item_id, target: "triage" } },
      });
      const window = row.deadline.getTime() - row.createdAt.getTime();
      assert.ok(
        Math.abs(window - expected) < 1_000,
        `${c.text} (${triaged.task_type}, ${c.nest_id}): ${window} ms, expected ${expected}`,
      );
      // Shown on the approval as read.
      const gql = await server.post("/graphql", { query: "{ approvals(status: pending) { itemId deadline } }" });
      const shown = gql.body.data.approvals.find((a: any) => a.itemId === triaged.item_id);
      assert.is(shown.deadline, row.deadline.toISOString());
    }
    const errand = await server.app.prisma.item.findFirst({ where: { taskType: "errand" } });
    assert.ok(errand, "the offline brain called one item an errand, so the task type's window was tried");
  } finally {
    await server.close();
  }
});

test.run();

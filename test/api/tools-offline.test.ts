// The offline brain's tool rule (docs/tools.md "Without a key") against a real MCP server: the
// filesystem server as a child process on a temporary folder, through the MCP SDK's client.
// An item that names a file reads it (read-only: allow, runs at once); an item that asks to write
// one asks for the write, and the file is written only once the owner approves.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdtempSync, readFileSync, existsSync, writeFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startTestServer } from "../helpers/server.ts";
import { ownerFollows } from "../helpers/owner.ts";
import { startFilesystemCatalog } from "../helpers/mcp-catalog.ts";
import type { SseMessage } from "../helpers/sse.ts";

const of = (events: SseMessage[], name: string) => events.filter((e) => e.event === name);

test("offline: an item naming a file reads it with a read-only tool; the answer quotes it", async () => {
  const folder = mkdtempSync(path.join(os.tmpdir(), "crows-tools-"));
  writeFileSync(path.join(folder, "notes.txt"), "the espresso machine is the Gaggia");
  const catalog = await startFilesystemCatalog(folder);
  const server = await startTestServer({ deps: { tools: catalog }, env: { CROWS_APPROVAL_WINDOW_MS: "60000" } });
  try {
    const res = await server.post("/api/lists", { text: "read notes.txt", requester: "tools" });
    assert.is(res.status, 202);
    const owner = await ownerFollows(server.url, res.body.list_id);
    const events = await owner.finished;
    owner.sse.close();
    const called = of(events, "tool.called");
    assert.is(called.length, 1, "one call");
    assert.is(called[0]!.data.tool, "read_text_file");
    assert.is(called[0]!.data.allowed_by, "allow");
    assert.is(called[0]!.data.approved_by, null);
    const returned = of(events, "tool.returned");
    assert.is(returned[0]!.data.ok, true);
    assert.ok(returned[0]!.data.result.includes("Gaggia"));
    assert.ok(of(events, "item.answered")[0]!.data.answer.includes("Gaggia"), "the answer quotes the file");
    assert.is(of(events, "tool.asked").length, 0, "a read never asks");
    assert.equal(
      catalog.calls.map((c) => c.tool),
      ["read_text_file"],
    );
    // Order on the stream: the call sits inside its flight.
    const names = events.map((e) => e.event);
    const flying = names.lastIndexOf("crow.flying");
    assert.ok(
      flying < names.indexOf("tool.called") && names.indexOf("tool.returned") < names.lastIndexOf("crow.landed"),
    );
  } finally {
    await server.close();
    await catalog.close();
    rmSync(folder, { recursive: true, force: true });
  }
});

test("offline: an item that asks to write a file asks for the write; approved, the file is written once", async () => {
  const folder = mkdtempSync(path.join(os.tmpdir(), "crows-tools-"));
  const catalog = await startFilesystemCatalog(folder);
  const server = await startTestServer({ deps: { tools: catalog }, env: { CROWS_APPROVAL_WINDOW_MS: "60000" } });
  try {
    const res = await server.post("/api/lists", { text: "write hello to out.txt", requester: "tools" });
    const owner = await ownerFollows(server.url, res.body.list_id);
    const asked = await owner.sse.waitFor((m) => m.event === "tool.asked", 20_000);
    assert.is(existsSync(path.join(folder, "out.txt")), false, "nothing written while it waits");
    assert.is(asked.data.tool, "write_file");
    const pending = await server.get("/api/tool-calls");
    assert.is(pending.body.tool_calls.length, 1);
    assert.equal(pending.body.tool_calls[0].args, { path: "out.txt", content: "hello" }, "the whole arguments");
    const decided = await server.post(`/api/tool-calls/${asked.data.call_id}/decision`, { approve: true });
    assert.is(decided.status, 200);
    assert.equal(decided.body, { call_id: asked.data.call_id, decision: "approved" });
    const events = await owner.finished;
    owner.sse.close();
    assert.is(readFileSync(path.join(folder, "out.txt"), "utf8"), "hello");
    assert.equal(
      catalog.calls.map((c) => c.tool),
      ["write_file"],
      "written once",
    );
    const called = of(events, "tool.called")[0]!.data;
    assert.is(called.allowed_by, "approved");
    assert.equal(called.approved_by, { kind: "owner" });
    assert.is(of(events, "tool.decided")[0]!.data.decision, "approved");
    const again = await server.post(`/api/tool-calls/${asked.data.call_id}/decision`, { approve: true });
    assert.is(again.status, 404, "a second decision finds nothing waiting");
  } finally {
    await server.close();
    await catalog.close();
    rmSync(folder, { recursive: true, force: true });
  }
});

test.run();

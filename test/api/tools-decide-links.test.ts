// A tool call's approval as a webhook of its own (tool_call.requested, then tool_call.decided) and
// its decide links: a GET shows the call's server, tool and whole arguments and changes nothing;
// the POST decides that one call, once, with the link as the actor; the other link then finds it
// decided. The call runs only after that (docs/tools.md, docs/webhooks.md "Decide links").
import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startTestServer } from "../helpers/server.ts";
import { startReceiver } from "../helpers/webhook-receiver.ts";
import { ownerFollows } from "../helpers/owner.ts";
import { startFilesystemCatalog } from "../helpers/mcp-catalog.ts";

const open = (url: string) =>
  fetch(url, { headers: { accept: "text/html" } }).then(async (r) => ({ status: r.status, text: await r.text() }));
const press = (url: string) =>
  fetch(url, {
    method: "POST",
    headers: { origin: new URL(url).origin, "content-type": "application/x-www-form-urlencoded", accept: "text/html" },
  }).then(async (r) => ({ status: r.status, text: await r.text() }));

test("tool_call.requested carries decide links: GET shows the whole arguments, POST approves once as the link", async () => {
  const folder = mkdtempSync(path.join(os.tmpdir(), "crows-tools-"));
  const catalog = await startFilesystemCatalog(folder);
  const receiver = await startReceiver();
  const server = await startTestServer({
    deps: { tools: catalog },
    env: { CROWS_WEBHOOK_ALLOW_PRIVATE: "1", CROWS_WEBHOOK_POLL_S: "0.05", CROWS_APPROVAL_WINDOW_MS: "60000" },
  });
  try {
    const added = await server.post("/api/webhooks", {
      url: receiver.url,
      events: ["tool_call.requested", "tool_call.decided"],
    });
    assert.is(added.status, 201, added.text);
    receiver.secrets.push(added.body.secret);
    const res = await server.post("/api/lists", { text: "write hello to out.txt", requester: "links" });
    const owner = await ownerFollows(server.url, res.body.list_id);
    await receiver.waitFor((r) => r.some((d) => d.body.type === "tool_call.requested"));
    const delivery = receiver.received.find((d) => d.body.type === "tool_call.requested")!.body;
    assert.is(delivery.data.tool, "write_file");
    assert.ok(delivery.data.deadline);
    const shown = await open(delivery.data.approve_url);
    assert.is(shown.status, 200);
    assert.ok(shown.text.includes("write_file") && shown.text.includes("out.txt") && shown.text.includes("hello"));
    assert.is(existsSync(path.join(folder, "out.txt")), false, "a GET changes nothing");
    const pressed = await press(delivery.data.approve_url);
    assert.is(pressed.status, 200, pressed.text);
    assert.is((await press(delivery.data.approve_url)).status, 409, "used once");
    assert.is((await press(delivery.data.reject_url)).status, 409, "the other link finds it decided");
    const events = await owner.finished;
    owner.sse.close();
    const decided = events.find((e) => e.event === "tool.decided")!.data;
    assert.equal(decided.actor, { kind: "link", webhook_id: added.body.id });
    assert.is(readFileSync(path.join(folder, "out.txt"), "utf8"), "hello");
    assert.equal(
      catalog.calls.map((c) => c.tool),
      ["write_file"],
    );
    await receiver.waitFor((r) => r.some((d) => d.body.type === "tool_call.decided"));
    const decidedDelivery = receiver.received.find((d) => d.body.type === "tool_call.decided")!.body;
    assert.is(decidedDelivery.data.decision, "approved");
  } finally {
    await server.close();
    await receiver.close();
    await catalog.close();
    rmSync(folder, { recursive: true, force: true });
  }
});

test.run();

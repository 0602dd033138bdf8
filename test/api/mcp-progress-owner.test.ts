// submit_list's progress names each approval its events leave waiting (docs/integrations.md "MCP",
// `_meta["crows/waits"]`, a list per notification), so one MCP client is the owner through its own
// session: it decides each with decide_approval beside the submit_list call still running, and
// follows nothing else.
// Driven by the official SDK's Client over Streamable HTTP only.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { bearer } from "../helpers/tokens.ts";
import { listStream } from "../../src/base/streams.ts";

const OWNER = "owner-token-for-mcp-progress-owner";
let server: TestServer;

test.before(async () => {
  server = await startTestServer({ env: { CROWS_TOKEN: OWNER, CROWS_APPROVAL_WINDOW_MS: "600000" } });
});
test.after(async () => {
  await server.close();
});

test("each approval the list's events leave waiting is named by one progress notification; the same session decides them all, to the list's end", async () => {
  const client = new Client({ name: "crows-test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: bearer(OWNER) } }),
  );
  try {
    const named: string[] = [];
    const lines: string[] = [];
    const decisions: Array<Promise<unknown>> = [];
    const result = await client.callTool(
      { name: "submit_list", arguments: { text: "Buy milk\nWrite a haiku about crows", requester: "mcp-owner" } },
      CallToolResultSchema,
      {
        timeout: 120_000,
        resetTimeoutOnProgress: true,
        onprogress: (p) => {
          lines.push(p.message ?? "");
          // The SDK hands the params over whole; its Progress type names only progress, total, message.
          const waits = (p as { _meta?: Record<string, any> })._meta?.["crows/waits"];
          if (waits === undefined) return;
          assert.ok(Array.isArray(waits) && waits.length > 0, JSON.stringify(waits));
          for (const w of waits as Array<{ item_id: string; target: string }>) {
            named.push(`${w.item_id}/${w.target}`);
            assert.match(p.message ?? "", new RegExp(`${w.item_id} [^;]*waits for an? ${w.target} verdict`));
            decisions.push(
              client.callTool({ name: "decide_approval", arguments: { ...w, approve: true } }).then((r) => {
                assert.not.ok(r.isError, JSON.stringify(r.content));
              }),
            );
          }
        },
      },
    );
    await Promise.all(decisions);
    assert.not.ok(result.isError, JSON.stringify(result.content));
    const list = (result as CallToolResult).structuredContent as { list_id: string; status: string };
    assert.is(list.status, "finished");
    const events = await server.app.log.read(listStream(list.list_id));
    const asked = events
      .filter((e) => (e.name === "item.triaged" || e.name === "item.answered") && JSON.parse(e.payload).needs_approval)
      .map((e) => `${JSON.parse(e.payload).item_id}/${e.name === "item.triaged" ? "triage" : "output"}`);
    assert.ok(asked.length > 0, "the list asked for approvals");
    assert.equal(named, asked, "each approval asked was named once, in the order asked");
    const verdicts = events.filter((e) => e.name === "verdict").map((e) => JSON.parse(e.payload));
    assert.equal(
      verdicts.filter((v) => v.verdict === "approved").length,
      asked.length,
      "every one was decided by this client",
    );
    assert.is(
      lines.flatMap((l) => l.match(/ waits for an? (triage|output) verdict/g) ?? []).length,
      asked.length,
      "no other notification names one",
    );
  } finally {
    await client.close();
  }
});

test.run();

// The nest loop's own log lines keep to the log's rule (docs/operations.md, "The log"): an error is
// logged by its shape (class, code, place), never its message, which can quote what caused it (a
// database error can carry the query's arguments, a refusal can quote the text it refused).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer } from "../helpers/server.ts";

const MARKER = "OTTER-MARKER-4411";

test("a failed obligation sweep is logged without the error's message", async () => {
  const lines: string[] = [];
  const server = await startTestServer({
    env: { CROWS_LEASE_MS: "300" },
    deps: { logLine: (line: string) => lines.push(line) },
  });
  try {
    const delegate = server.app.prisma.obligation as unknown as { findMany: (...args: unknown[]) => Promise<unknown> };
    const original = delegate.findMany;
    delegate.findMany = () => Promise.reject(new Error(`could not read the row holding ${MARKER}`));
    const deadline = Date.now() + 5_000;
    while (!lines.some((line) => line.includes("obligation sweep failed")) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    delegate.findMany = original;
    const failed = lines.filter((line) => line.includes("obligation sweep failed"));
    assert.ok(failed.length > 0, `the failure is logged: ${JSON.stringify(lines)}`);
    for (const line of failed) {
      assert.not.match(line, MARKER);
      assert.match(line, /Error at /);
    }
  } finally {
    await server.close();
  }
});

test.run();

// The committed schema/schema.graphql is the schema the server builds, so every schema change shows
// in review as SDL lines.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync } from "node:fs";
import { printedSchema, SCHEMA_FILE } from "../../schema/print.ts";

test("schema/schema.graphql is the built schema, sorted", () => {
  const committed = readFileSync(SCHEMA_FILE, "utf8");
  const built = printedSchema();
  assert.ok(
    built.includes("type Query") && built.includes("type Subscription"),
    "the printed schema lacks its root types",
  );
  if (committed !== built) {
    const committedLines = committed.split("\n");
    const first = built.split("\n").findIndex((line, n) => line !== committedLines[n]);
    assert.unreachable(
      `schema/schema.graphql is stale (first difference at line ${first + 1}): run npm run schema:print and commit it`,
    );
  }
});

test.run();

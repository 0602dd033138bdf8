// `crows config` as an owner runs it: on a fresh machine every setting at its default; a value from
// the environment and one from an old name say so; secrets never printed; a bad value is the
// server's own line and exit 3; --table for a person; usage errors exit 2.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync } from "node:fs";
import path from "node:path";
import { baseEnv, crows, oneJsonLine, removeDir, tempDataDir } from "../helpers/crows-cli.ts";
import { SETTINGS } from "../../src/base/settings/index.ts";

const OWNER = "0123456789abcdef0123456789abcdef";
const KEY = "sk-test-never-printed-4242";

test("fresh: every setting, each at its default, one JSON line", async () => {
  const dir = tempDataDir();
  try {
    // A key in the shell running the tests must not count: set blank, it is unset.
    const result = await crows(["config"], baseEnv(dir, { CROWS_PORT: "", OPENAI_API_KEY: "", ANTHROPIC_API_KEY: "" }));
    assert.is(result.code, 0, result.stderr);
    assert.is(result.stderr, "");
    const { settings, warnings } = oneJsonLine(result.stdout);
    assert.equal(warnings, []);
    assert.equal(
      Object.keys(settings),
      SETTINGS.map(({ setting }) => setting.env),
    );
    assert.equal(settings.CROWS_DATA_DIR, { value: dir, source: "environment" });
    for (const [name, entry] of Object.entries<{ source: string }>(settings))
      if (name !== "CROWS_DATA_DIR") assert.is(entry.source, "default", name);
    assert.equal(settings.CROWS_PORT, { value: "7717", source: "default" });
    assert.equal(settings.CROWS_TOKEN, { value: null, source: "default" });
    assert.equal(settings.DATABASE_URL, { value: `file:${dir}/crows.db`, source: "default" });
    assert.equal(settings.CROWS_WEBHOOK_RETRY_SCHEDULE_MS, {
      value: "0,5000,300000,1800000,7200000,18000000,36000000",
      source: "default",
    });
  } finally {
    removeDir(dir);
  }
});

test("secrets masked, sources named, an old name converted with its warning", async () => {
  const dir = tempDataDir();
  try {
    const env = baseEnv(dir, {
      CROWS_TOKEN: OWNER,
      CROWS_MODEL: "openai:gpt-4o-mini",
      OPENAI_API_KEY: KEY,
      DATABASE_URL: `postgresql://crows:${KEY}@db.example:5432/crows`,
      REDIS_URL: "redis://127.0.0.1:6379",
      CROWS_WEBHOOK_POLL_S: "0.25",
    });
    const result = await crows(["config"], env);
    assert.is(result.code, 0, result.stderr);
    assert.not.ok(result.stdout.includes(OWNER) || result.stdout.includes(KEY), result.stdout);
    const { settings, warnings } = oneJsonLine(result.stdout);
    assert.equal(settings.CROWS_TOKEN, { value: "********", source: "environment" });
    assert.equal(settings.OPENAI_API_KEY, { value: "********", source: "environment" });
    assert.equal(settings.DATABASE_URL, {
      value: "postgresql://crows:********@db.example:5432/crows",
      source: "environment",
    });
    assert.equal(settings.REDIS_URL, { value: "redis://127.0.0.1:6379", source: "environment" });
    assert.equal(settings.CROWS_MODEL, { value: "openai:gpt-4o-mini", source: "environment" });
    assert.equal(settings.CROWS_WEBHOOK_POLL_MS, { value: "250", source: "deprecated CROWS_WEBHOOK_POLL_S" });
    assert.equal(warnings, [
      "CROWS_WEBHOOK_POLL_S is deprecated and goes in the next release; read as CROWS_WEBHOOK_POLL_MS=250",
    ]);

    const table = await crows(["config", "--table"], env);
    assert.is(table.code, 0, table.stderr);
    assert.not.ok(table.stdout.includes(OWNER) || table.stdout.includes(KEY));
    assert.match(table.stdout, /^server +CROWS_HOST +127\.0\.0\.1 +default$/m);
    assert.match(table.stdout, /^webhooks +CROWS_WEBHOOK_POLL_MS +250 +deprecated CROWS_WEBHOOK_POLL_S$/m);
    assert.match(table.stdout, /^warning: CROWS_WEBHOOK_POLL_S is deprecated/m);
  } finally {
    removeDir(dir);
  }
});

test("a bad value: the server's own line, exit 3, nothing on stdout; usage errors exit 2", async () => {
  const dir = tempDataDir();
  try {
    const bad = await crows(["config"], baseEnv(dir, { CROWS_PORT: "seventy" }));
    assert.is(bad.code, 3);
    assert.is(bad.stdout, "");
    assert.equal(oneJsonLine(bad.stderr), {
      error: "config",
      message: 'CROWS_PORT must be a whole number from 0 to 65535, got "seventy"',
    });
    const token = await crows(["config"], baseEnv(dir, { CROWS_TOKEN: "not a token at all" }));
    assert.is(token.code, 3);
    assert.not.ok(token.stderr.includes("not a token at all"), "a bad secret is not repeated either");
    for (const args of [
      ["config", "--json"],
      ["config", "extra"],
      ["config", "--table=yes"],
    ]) {
      const usage = await crows(args, baseEnv(dir));
      assert.is(usage.code, 2, args.join(" "));
      assert.is(oneJsonLine(usage.stderr).error, "usage");
    }
  } finally {
    removeDir(dir);
  }
});

test("a server started with an old name logs one line naming the new one, and runs on the converted value", async () => {
  const dir = tempDataDir();
  const env = baseEnv(dir, { CROWS_WEBHOOK_POLL_S: "0.5" });
  try {
    const up = await crows(["up"], env);
    assert.is(up.code, 0, up.stderr);
    assert.is(oneJsonLine(up.stdout).state, "live");
    const lines = readFileSync(path.join(dir, "server.log"), "utf8")
      .split("\n")
      .filter((line) => line.includes("CROWS_WEBHOOK_POLL_S"));
    assert.is(lines.length, 1, lines.join("\n"));
    assert.match(
      lines[0]!,
      / config: CROWS_WEBHOOK_POLL_S is deprecated and goes in the next release; read as CROWS_WEBHOOK_POLL_MS=500$/,
    );
  } finally {
    await crows(["stop"], env);
    removeDir(dir);
  }
});

test.run();

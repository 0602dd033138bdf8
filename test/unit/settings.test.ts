// The settings' one declaration (src/base/settings/): every kind of value takes what it should and
// refuses the rest with one line naming the variable; the old `_S` names still read, converted,
// with a warning; the declarations themselves hold together (unique names, defaults inside their
// own bounds, one-line descriptions).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ConfigError, loadConfig, readSettings } from "../../src/base/config.ts";
import { GROUPS, SETTINGS } from "../../src/base/settings/index.ts";

const OWNER = "0123456789abcdef0123456789abcdef";

/** The one line a bad environment stops with. */
function refusal(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (error) {
    assert.instance(error, ConfigError, JSON.stringify(env));
    const message = (error as Error).message;
    assert.not.ok(message.includes("\n"), message);
    return message;
  }
  throw new Error(`expected a ConfigError for ${JSON.stringify(env)}`);
}

test("whole numbers and durations: good, out of bounds, wrong type, blank", () => {
  assert.is(loadConfig({ CROWS_PORT: "8080" }).port, 8080);
  assert.is(loadConfig({ CROWS_PORT: " 0 " }).port, 0);
  assert.is(loadConfig({ CROWS_PORT: "" }).port, 7717, "blank is unset");
  assert.is(loadConfig({ CROWS_LEASE_MS: "100" }).leaseMs, 100, "the lower bound is in");
  assert.is(loadConfig({ CROWS_MURDER_SIZE: "8" }).murderSize, 8, "the upper bound is in");
  for (const [env, line] of [
    [{ CROWS_PORT: "seventy" }, 'CROWS_PORT must be a whole number from 0 to 65535, got "seventy"'],
    [{ CROWS_PORT: "70000" }, 'CROWS_PORT must be a whole number from 0 to 65535, got "70000"'],
    [{ CROWS_PORT: "80.5" }, 'CROWS_PORT must be a whole number from 0 to 65535, got "80.5"'],
    [{ CROWS_LEASE_MS: "99" }, 'CROWS_LEASE_MS must be a whole number from 100 to 9007199254740991, got "99"'],
    [{ CROWS_MURDER_SIZE: "9" }, 'CROWS_MURDER_SIZE must be a whole number from 2 to 8, got "9"'],
    [{ CROWS_ITEM_CONCURRENCY: "-1" }, 'CROWS_ITEM_CONCURRENCY must be a whole number from 1 to 50, got "-1"'],
    [
      { CROWS_WEBHOOK_POLL_MS: "5" },
      'CROWS_WEBHOOK_POLL_MS must be a whole number from 10 to 9007199254740991, got "5"',
    ],
    [
      { CROWS_WEBHOOK_YIELD_MS: "0.5" },
      'CROWS_WEBHOOK_YIELD_MS must be a whole number from 0 to 9007199254740991, got "0.5"',
    ],
  ] as const)
    assert.is(refusal(env), line);
});

test("optional numbers, fractions and words", () => {
  assert.is(loadConfig({}).maxStreams, undefined);
  assert.is(loadConfig({ CROWS_MAX_STREAMS: "64" }).maxStreams, 64);
  assert.match(refusal({ CROWS_MAX_STREAMS: "0" }), /^CROWS_MAX_STREAMS must be a whole number from 1 to /);
  assert.is(loadConfig({ CROWS_JEV_THRESHOLD: "0.9" }).jevThreshold, 0.9);
  for (const bad of ["0.5", "1", "x", "Infinity"])
    assert.is(
      refusal({ CROWS_JEV_THRESHOLD: bad }),
      `CROWS_JEV_THRESHOLD must be a number above 0.5 and below 1, got ${JSON.stringify(bad)}`,
    );
  assert.is(loadConfig({ CROWS_JEV: " systemone " }).jev, "systemone");
  assert.is(refusal({ CROWS_JEV: "psychic" }), 'CROWS_JEV must be "offline" or "systemone", got "psychic"');
  assert.is(loadConfig({ CROWS_SQLITE_CHECKPOINTS: "inline" }).sqliteCheckpoints, "inline");
  assert.is(
    refusal({ CROWS_SQLITE_CHECKPOINTS: "often" }),
    'CROWS_SQLITE_CHECKPOINTS must be thread or inline, got "often"',
  );
  assert.is(loadConfig({ CROWS_WEBHOOK_SENDER: "server" }).webhooks.senderThread, false);
  assert.is(refusal({ CROWS_WEBHOOK_SENDER: "fork" }), 'CROWS_WEBHOOK_SENDER must be thread or server, got "fork"');
  assert.is(loadConfig({ CROWS_WEBHOOK_ALLOW_PRIVATE: "1" }).webhooks.allowPrivate, true);
  assert.is(refusal({ CROWS_WEBHOOK_ALLOW_PRIVATE: "yes" }), 'CROWS_WEBHOOK_ALLOW_PRIVATE must be 0 or 1, got "yes"');
});

test("tokens, origins, host names and URLs: the kind's own line, never a secret in it", () => {
  assert.is(loadConfig({ CROWS_TOKEN: ` ${OWNER} ` }).token, OWNER);
  const line = refusal({ CROWS_TOKEN: "too short" });
  assert.match(line, /^CROWS_TOKEN must be 16 to 512 characters/);
  assert.not.ok(line.includes("too short"));
  assert.match(refusal({ CROWS_TOKEN: OWNER, CROWS_READ_TOKENS: "x" }), /^CROWS_READ_TOKENS must be 16 to 512/);
  assert.is(
    refusal({ CROWS_CORS_ORIGINS: "http://a.example, localhost:5173" }),
    'CROWS_CORS_ORIGINS lists origins like http://localhost:5173 (scheme, host, optional port; no path), got "localhost:5173"',
  );
  assert.equal(loadConfig({ CROWS_PUBLIC_HOSTS: "Crows.Example.org, [::1]" }).publicHosts, [
    "crows.example.org",
    "[::1]",
  ]);
  assert.is(
    refusal({ CROWS_PUBLIC_HOSTS: "ok.example, https://x" }),
    'CROWS_PUBLIC_HOSTS lists host names without scheme or port, got "https://x"',
  );
  assert.is(
    loadConfig({ CROWS_PUBLIC_URL: "https://crows.example.com/" }).webhooks.publicUrl,
    "https://crows.example.com",
  );
  assert.match(refusal({ CROWS_PUBLIC_URL: "https://x/?q=1" }), /^CROWS_PUBLIC_URL is the http\(s\) address/);
});

test("rules across settings, and derived defaults", () => {
  assert.match(refusal({ CROWS_HOST: "0.0.0.0" }), /^CROWS_HOST=0\.0\.0\.0 is reachable from other machines/);
  assert.match(refusal({ CROWS_READ_TOKENS: OWNER }), /^CROWS_READ_TOKENS needs CROWS_TOKEN too/);
  assert.is(
    refusal({ CROWS_TOKEN: OWNER, CROWS_READ_TOKENS: OWNER }),
    "CROWS_READ_TOKENS must not contain CROWS_TOKEN",
  );
  const config = loadConfig({ CROWS_DATA_DIR: "/srv/crows", CROWS_APPROVAL_WINDOW_MS: "5000" });
  assert.is(config.databaseUrl, "file:/srv/crows/crows.db");
  assert.is(config.modelPatienceMs, 5000, "the patience follows the approval window");
  assert.is(loadConfig({ CROWS_APPROVAL_WINDOW_MS: "5000", CROWS_MODEL_PATIENCE_MS: "0" }).modelPatienceMs, 0);
});

test("old _S names: read, converted to ms, one warning each; the new name wins", () => {
  const read = readSettings({
    CROWS_WEBHOOK_POLL_S: "0.05",
    CROWS_WEBHOOK_TIMEOUT_S: "2",
    CROWS_WEBHOOK_RETRY_SCHEDULE: "0, 1,2.5",
  });
  assert.is(read.config.webhooks.pollMs, 50);
  assert.is(read.config.webhooks.timeoutMs, 2000);
  assert.equal(read.config.webhooks.retryScheduleS, [0, 1, 2.5]);
  assert.equal(read.warnings, [
    "CROWS_WEBHOOK_RETRY_SCHEDULE is deprecated and goes in the next release; read as CROWS_WEBHOOK_RETRY_SCHEDULE_MS=0,1000,2500",
    "CROWS_WEBHOOK_TIMEOUT_S is deprecated and goes in the next release; read as CROWS_WEBHOOK_TIMEOUT_MS=2000",
    "CROWS_WEBHOOK_POLL_S is deprecated and goes in the next release; read as CROWS_WEBHOOK_POLL_MS=50",
  ]);
  assert.is(
    read.read.find((r) => r.setting.env === "CROWS_WEBHOOK_POLL_MS")?.source,
    "deprecated CROWS_WEBHOOK_POLL_S",
  );
  assert.is(loadConfig({ CROWS_WEBHOOK_POLL_S: "0" }).webhooks.pollMs, 10, "kept above the new floor, as before");
  const both = readSettings({ CROWS_WEBHOOK_YIELD_S: "3", CROWS_WEBHOOK_YIELD_MS: "250" });
  assert.is(both.config.webhooks.yieldMs, 250);
  assert.equal(both.warnings, [
    "CROWS_WEBHOOK_YIELD_S is ignored: CROWS_WEBHOOK_YIELD_MS is set (CROWS_WEBHOOK_YIELD_S goes in the next release)",
  ]);
  assert.equal(readSettings({ CROWS_WEBHOOK_RETRY_SCHEDULE_MS: "0,50" }).config.webhooks.retryScheduleS, [0, 0.05]);
  assert.is(
    refusal({ CROWS_WEBHOOK_YIELD_S: "1s" }),
    'CROWS_WEBHOOK_YIELD_S must be a number of seconds, 0 or more, got "1s"',
  );
  assert.match(
    refusal({ CROWS_WEBHOOK_RETRY_SCHEDULE_MS: "0,0.5" }),
    /^CROWS_WEBHOOK_RETRY_SCHEDULE_MS is comma-separated milliseconds/,
  );
  assert.equal(readSettings({}).warnings, []);
});

test("the declarations hold together", () => {
  const names = SETTINGS.flatMap(({ setting }) => [
    setting.env,
    ...(setting.deprecated ? [setting.deprecated.env] : []),
  ]);
  assert.is(new Set(names).size, names.length, "each variable declared once");
  const fresh = readSettings({});
  for (const { setting, value } of fresh.read) {
    assert.ok(GROUPS.includes(setting.group), setting.env);
    assert.ok(setting.describe.length > 10 && !setting.describe.includes("\n"), `${setting.env}: one line`);
    if (setting.env.endsWith("_MS"))
      assert.ok(setting.kind.type === "ms" || setting.kind.type === "list of ms", setting.env);
    assert.not.ok(/_S$/.test(setting.env), `${setting.env}: durations are ms`);
    // A default spelled as its variable reads back as itself: every default is inside its own bounds.
    if (value !== undefined && !(Array.isArray(value) && value.length === 0)) {
      const again = readSettings({ [setting.env]: setting.kind.show(value) }).read.find((r) => r.setting === setting);
      assert.equal(again?.value, value, setting.env);
    }
  }
  const owner = SETTINGS.filter(({ setting }) => setting.audience === "owner").length;
  assert.ok(owner >= 10 && owner <= 20, `${owner} owner settings: a handful, the rest are knobs`);
});

test.run();

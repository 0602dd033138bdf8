// `crows webhooks add|list|remove` against a real server started by `crows up`, with and without
// CROWS_TOKEN: the secret printed once by add, never by list; usage errors exit 2; --format.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { rmSync } from "node:fs";
import { baseEnv, crows, tempDataDir } from "../helpers/crows-cli.ts";

for (const token of [undefined, "cli-webhooks-token-0123456789"]) {
  test(`webhooks add, list, remove ${token ? "with" : "without"} CROWS_TOKEN`, async () => {
    const dir = tempDataDir();
    const env = baseEnv(dir, { CROWS_WEBHOOK_ALLOW_PRIVATE: "1", ...(token ? { CROWS_TOKEN: token } : {}) });
    try {
      const up = await crows(["up"], env);
      assert.is(up.code, 0, up.stderr);
      const added = await crows(
        [
          "webhooks",
          "add",
          "--url",
          "http://127.0.0.1:9/hook",
          "--events",
          "approval.requested, list.finished",
          "--description",
          "phone",
        ],
        env,
      );
      assert.is(added.code, 0, added.stderr);
      assert.match(added.json.secret, /^whsec_/);
      assert.equal(
        [added.json.url, added.json.events, added.json.description],
        ["http://127.0.0.1:9/hook", ["approval.requested", "list.finished"], "phone"],
      );
      const listed = await crows(["webhooks", "list"], env);
      assert.is(listed.code, 0);
      assert.equal(
        listed.json.webhooks.map((w: any) => w.id),
        [added.json.id],
      );
      assert.ok(!listed.stdout.includes(added.json.secret.slice(6)));
      // A body shaped for a chat service (docs/webhooks.md "Formats"); a format it does not know is refused.
      const slack = await crows(["webhooks", "add", "--url", "http://127.0.0.1:9/slack", "--format", "slack"], env);
      assert.is(slack.code, 0, slack.stderr);
      assert.is(slack.json.format, "slack");
      const teams = await crows(["webhooks", "add", "--url", "http://127.0.0.1:9/teams", "--format", "teams"], env);
      assert.is(teams.code, 1);
      assert.match(teams.json.message, /400: .*format/);
      assert.is((await crows(["webhooks", "remove", "--id", slack.json.id], env)).code, 0);
      const refused = await crows(["webhooks", "add", "--url", "http://169.254.169.254/"], env);
      assert.is(refused.code, 1);
      assert.match(refused.json.message, /400: .*link-local/);
      for (const args of [
        ["webhooks"],
        ["webhooks", "add"],
        ["webhooks", "remove"],
        ["webhooks", "list", "--x", "1"],
        ["webhooks", "shout"],
      ]) {
        assert.is((await crows(args, env)).code, 2, args.join(" "));
      }
      if (token) {
        const without = await crows(["webhooks", "list"], { ...env, CROWS_TOKEN: "" });
        assert.is(without.code, 1);
        assert.match(without.json.message, /401/);
      }
      const removed = await crows(["webhooks", "remove", "--id", added.json.id], env);
      assert.is(removed.code, 0, removed.stderr);
      assert.equal(removed.json, { removed: added.json.id });
      assert.is((await crows(["webhooks", "remove", "--id", added.json.id], env)).code, 1);
      assert.equal((await crows(["webhooks", "list"], env)).json.webhooks, []);
    } finally {
      await crows(["stop"], env);
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

test("webhooks with no server running: a clear failure", async () => {
  const dir = tempDataDir();
  try {
    const listed = await crows(["webhooks", "list"], baseEnv(dir));
    assert.is(listed.code, 1);
    assert.match(listed.json.message, /no server is running/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();

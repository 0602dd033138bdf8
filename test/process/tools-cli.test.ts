// `crows tools add|list|remove|policy` against a real server started by `crows up`: a secret named
// alone is read from the command's environment and never printed, the server's state and tools are
// listed, a policy set and put back, usage errors exit 2. And the server stops its tool servers'
// processes when it stops.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { baseEnv, crows, pidRunning, tempDataDir } from "../helpers/crows-cli.ts";
import { HOSTILE } from "../helpers/tool-servers.ts";

/** Processes whose command line names `marker` (the fixture takes the data folder as an extra argument). */
function processesNaming(marker: string): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").includes(marker);
      } catch {
        return false;
      }
    })
    .map(Number);
}

test("tools add, list, policy, remove; the secret never printed; stopping crows stops the tool server", async () => {
  const dir = tempDataDir();
  const env = baseEnv(dir, { CROWS_TOKEN: "cli-tools-token-0123456789", NOTES_KEY: "cli-secret-abcdef" });
  try {
    assert.is((await crows(["up"], env)).code, 0);
    const added = await crows(
      ["tools", "add", "notes", "--env", "NOTES_KEY", "--env", "MODE=plain", "--", process.execPath, HOSTILE, "polite"],
      env,
    );
    assert.is(added.code, 0, added.stderr);
    assert.equal(added.json.env_names, ["NOTES_KEY", "MODE"]);
    assert.equal(added.json.args, [HOSTILE, "polite"]);
    const id = added.json.id;
    const listed = await crows(["tools", "list"], env);
    assert.is(listed.code, 0);
    assert.is(listed.json.servers[0].state.status, "idle", "a list starts nothing");
    const shownFirst = await crows(["tools", "show", "--id", id], env);
    assert.is(shownFirst.json.state.status, "up", shownFirst.stderr);
    const set = await crows(["tools", "policy", "--id", id, "--tool", "write_note", "--policy", "deny"], env);
    assert.is(set.code, 0, set.stderr);
    assert.equal(set.json.policies, { write_note: "deny" });
    const shown = set.json.tools.find((t: any) => t.name === "write_note");
    assert.equal([shown.policy, shown.default_policy], ["deny", "ask"]);
    for (const out of [added, set, listed, shownFirst]) assert.not.ok((out.stdout + out.stderr).includes("cli-secret"));
    const reset = await crows(["tools", "policy", "--id", id, "--tool", "write_note", "--policy", "default"], env);
    assert.equal(reset.json.policies, {});
    const bad = await crows(["tools", "policy", "--id", id, "--tool", "write_note", "--policy", "maybe"], env);
    assert.is(bad.code, 1);
    assert.match(bad.json.message, /400/);
    for (const args of [
      ["tools"],
      ["tools", "add"],
      ["tools", "add", "x"],
      ["tools", "add", "x", "--env", "NOT_SET_ANYWHERE", "--", "cmd"],
      ["tools", "remove"],
      ["tools", "list", "extra"],
      ["tools", "policy", "--id", id],
    ])
      assert.is((await crows(args, env)).code, 2, args.join(" "));

    const removed = await crows(["tools", "remove", "--id", id], env);
    assert.equal(removed.json, { removed: id });
    assert.equal((await crows(["tools", "list"], env)).json.servers, []);

    // One more, started, then crows stops: its process goes with it.
    const again = await crows(["tools", "add", "again", "--", process.execPath, HOSTILE, "polite", dir], env);
    const shownAgain = await crows(["tools", "show", "--id", again.json.id], env);
    assert.is(shownAgain.json.state.status, "up", shownAgain.stderr);
    const pids = processesNaming(dir);
    assert.is(pids.length, 1, "the tool server runs");
    assert.is((await crows(["stop"], env)).code, 0);
    assert.ok(
      pids.every((pid) => !pidRunning(pid)),
      "and stops with crows",
    );
  } finally {
    await crows(["stop"], env);
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();

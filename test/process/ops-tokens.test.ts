// `crows token create | list | revoke` as a user drives them: one JSON line each, the secret only
// in create's line; a token made on the database with the server down works once it is up; with
// the server up the commands go through it, so a revocation holds on the next request and cuts the
// token's open stream within a heartbeat. The secret is in no file of the data folder, server.log
// included.
import { readFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { baseEnv, crows, filesUnder, oneJsonLine, removeDir, tempDataDir } from "../helpers/crows-cli.ts";
import { openSse } from "../helpers/sse.ts";

const OWNER = "owner-token-for-the-cli-0123456789";
const HEARTBEAT_MS = 300;

test("create (server down) prints the secret once; it works once the server is up; list never shows it; revoke holds at once and cuts its stream", async () => {
  const dir = tempDataDir();
  const env = baseEnv(dir, { CROWS_TOKEN: OWNER, CROWS_HEARTBEAT_MS: String(HEARTBEAT_MS) });
  try {
    const created = await crows(["token", "create", "--name", "ci", "--scope", "read,decide", "--expires", "30d"], env);
    assert.is(created.code, 0, created.stderr);
    const token = oneJsonLine(created.stdout);
    assert.equal(Object.keys(token), ["id", "name", "scopes", "secret", "prefix", "created_at", "expires_at"]);
    assert.equal(token.scopes, ["read", "decide"]);
    assert.match(token.secret, /^crows_[A-Za-z0-9]{40}$/);
    assert.is(Date.parse(token.expires_at) - Date.parse(token.created_at), 30 * 86_400_000);

    const up = await crows(["up"], env);
    assert.is(up.code, 0, up.stderr);
    const url: string = oneJsonLine(up.stdout).url;
    const auth = { authorization: `Bearer ${token.secret}` };
    assert.is((await fetch(`${url}/api/nests`, { headers: auth })).status, 200);
    const write = await fetch(`${url}/api/lists`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ text: "x", requester: "ci" }),
    });
    assert.is(write.status, 403);
    assert.match((await write.json()).message, /"write" scope/);
    const sse = await openSse(`${url}/api/events?nest_id=todo`, { headers: auth });
    assert.is(sse.status, 200);

    const list = await crows(["token", "list"], env);
    assert.is(list.code, 0, list.stderr);
    const listed = oneJsonLine(list.stdout).tokens;
    assert.equal(
      listed.map((t: any) => [t.id, t.name, t.prefix]),
      [[token.id, "ci", token.secret.slice(0, 10)]],
    );
    assert.not.ok(list.stdout.includes(token.secret));

    const revoked = await crows(["token", "revoke", token.id], env);
    assert.is(revoked.code, 0, revoked.stderr);
    assert.is(oneJsonLine(revoked.stdout).id, token.id);
    const cutAt = Date.now();
    assert.is((await fetch(`${url}/api/nests`, { headers: auth })).status, 401, "refused on the next request");
    while (!sse.ended()) {
      assert.ok(Date.now() - cutAt < HEARTBEAT_MS, "the stream is cut within a heartbeat");
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.is((await fetch(`${url}/api/nests`, { headers: { authorization: `Bearer ${OWNER}` } })).status, 200);
    // Made through the live server, with the owner's token from the environment; without it, refused.
    const second = await crows(["token", "create", "--name", "second", "--scope", "metrics"], env);
    assert.is(second.code, 0, second.stderr);
    const metrics = oneJsonLine(second.stdout);
    assert.is((await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${metrics.secret}` } })).status, 200);
    const tokenless = await crows(["token", "list"], { ...env, CROWS_TOKEN: "" });
    assert.is(tokenless.code, 1);
    assert.is(oneJsonLine(tokenless.stderr).error, "forbidden");

    const stopped = await crows(["stop"], env);
    assert.is(stopped.code, 0, stopped.stderr);
    const files = filesUnder(dir);
    assert.ok(files.some((f) => f.endsWith("server.log")));
    for (const file of files) {
      const text = readFileSync(file).toString("latin1");
      assert.not.ok(text.includes(token.secret) || text.includes(metrics.secret), `a secret is in ${file}`);
    }
  } finally {
    await crows(["stop"], env);
    removeDir(dir);
  }
});

test("token usage errors exit 2 and an unknown id exits 1, each one JSON line on stderr", async () => {
  const dir = tempDataDir();
  const env = baseEnv(dir);
  try {
    for (const args of [
      ["token"],
      ["token", "rotate"],
      ["token", "create"],
      ["token", "create", "--name", "x"],
      ["token", "create", "--scope", "read"],
      ["token", "create", "--name", "x", "--scope", "root"],
      ["token", "create", "--name", "x", "--scope", ""],
      ["token", "create", "--name", "x", "--scope", "read", "--expires", "3w"],
      ["token", "create", "--name", "x", "--scope", "read", "--expires", "-1d"],
      ["token", "create", "--name", "", "--scope", "read"],
      ["token", "create", "--name", "x", "--scope", "read", "--bogus", "1"],
      ["token", "revoke"],
      ["token", "list", "--all", "1"],
    ]) {
      const result = await crows(args, env);
      assert.is(result.code, 2, `${args.join(" ")}: ${result.stderr}`);
      const error = oneJsonLine(result.stderr);
      assert.type(error.message, "string");
      assert.is(result.stdout, "");
    }
    const unknown = await crows(["token", "revoke", "tok_ffffffffffffffff"], env);
    assert.is(unknown.code, 1);
    assert.is(oneJsonLine(unknown.stderr).error, "not_found");
  } finally {
    removeDir(dir);
  }
});

test.run();

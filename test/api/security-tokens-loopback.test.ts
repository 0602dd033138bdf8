// With no CROWS_TOKEN, loopback is the owner exactly as before: no token is asked, an unknown one
// is ignored, and every write's actor is the owner (the offline console included). A named token a
// client chooses to send still says who it is: its scopes and its name apply to that request.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { bearer, makeToken } from "../helpers/tokens.ts";

let server: TestServer;
test.before(async () => {
  server = await startTestServer({ env: { CROWS_BANTER_WAIT_MS: "0" } });
});
test.after(async () => {
  await server.close();
});

const startedActor = async (listId: string) =>
  JSON.parse((await server.app.log.read(`list:${listId}`)).find((e) => e.name === "list.started")!.payload).actor;

test("no header, a wrong header or an unknown token: the owner, with every scope", async () => {
  for (const [i, headers] of [
    {},
    bearer("crows_" + "Z".repeat(40)),
    bearer("not-a-token"),
    { cookie: "crows_token=nope" },
  ].entries()) {
    const posted = await server.request(
      "POST",
      "/api/lists",
      { text: "Buy milk", requester: `loop-${i}` },
      headers as Record<string, string>,
    );
    assert.is(posted.status, 202, JSON.stringify(headers));
    assert.equal(await startedActor(posted.body.list_id), { kind: "owner" });
    assert.is((await server.request("GET", "/api/tokens", undefined, headers as Record<string, string>)).status, 200);
    assert.is((await server.request("GET", "/metrics", undefined, headers as Record<string, string>)).status, 200);
  }
  const viaGraphql = await server.request("POST", "/graphql", {
    query:
      'mutation { submitList(text: "Water the plants", requester: "console") { ... on SubmittedList { listId } } }',
  });
  assert.equal(
    await startedActor(viaGraphql.body.data.submitList.listId),
    { kind: "owner" },
    "the offline console is the owner",
  );
});

test("a named token sent anyway keeps its scopes and its name; once revoked the request is the owner's again", async () => {
  const reader = await makeToken(server, "loopback-reader", ["read"], {});
  const writer = await makeToken(server, "loopback-writer", ["write"], {});
  const refused = await server.request(
    "POST",
    "/api/lists",
    { text: "Buy milk", requester: "named" },
    bearer(reader.secret),
  );
  assert.is(refused.status, 403);
  assert.match(refused.body.message, /"write" scope/);
  const posted = await server.request(
    "POST",
    "/api/lists",
    { text: "Buy milk", requester: "named-2" },
    bearer(writer.secret),
  );
  assert.is(posted.status, 202);
  assert.equal(await startedActor(posted.body.list_id), {
    kind: "token",
    token_id: writer.id,
    token_name: "loopback-writer",
  });
  assert.is((await server.request("DELETE", `/api/tokens/${reader.id}`)).status, 204);
  assert.is(
    (await server.request("POST", "/api/lists", { text: "Buy milk", requester: "named-3" }, bearer(reader.secret)))
      .status,
    202,
  );
});

test.run();

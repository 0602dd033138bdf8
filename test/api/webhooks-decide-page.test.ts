// The decide link's page as an owner meets it (issue 33): the approve link's page also offers
// "Reject instead" (the reject link of the same pair, exactly the reject_url delivered beside it),
// a reject link's page offers no approval; the deadline reads as time left and as a <time> a tiny
// hashed script shows in the reader's zone; a link leads back to the console. GET still changes
// nothing (webhooks-decide.test.ts holds the rest of the rules).
import { createHash } from "node:crypto";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer } from "../helpers/server.ts";
import { startReceiver } from "../helpers/webhook-receiver.ts";

const ENV = { CROWS_WEBHOOK_ALLOW_PRIVATE: "1", CROWS_WEBHOOK_POLL_S: "0.05", CROWS_APPROVAL_WINDOW_MS: "600000" };

test("the approve page can reject, shows time left and local time, and links to the console", async () => {
  const receiver = await startReceiver();
  const server = await startTestServer({ env: ENV });
  try {
    const added = await server.request("POST", "/api/webhooks", { url: receiver.url });
    assert.is(added.status, 201, added.text);
    receiver.secrets.push(added.body.secret);
    const list = await server.request("POST", "/api/lists", { text: "Mend the fence", requester: "links" });
    assert.is(list.status, 202, list.text);
    await receiver.waitFor((r) => r.some((d) => d.body.type === "approval.requested"));
    const { approve_url, reject_url, item } = receiver.received.find((d) => d.body.type === "approval.requested")!.body
      .data;
    const page = await fetch(approve_url).then(async (r) => ({
      status: r.status,
      text: await r.text(),
      headers: r.headers,
    }));
    assert.is(page.status, 200);
    assert.match(page.text, /Mend the fence/);
    const rejectPath = new URL(reject_url).pathname;
    assert.ok(
      page.text.includes(
        `<form method="post" action="${rejectPath}"><button type="submit" class="instead">Reject instead</button></form>`,
      ),
      page.text,
    );
    assert.match(page.text, /\d+ min \d+ s left/);
    assert.match(page.text, /<time datetime="\d{4}-\d\d-\d\dT[\d:.]+Z">/);
    assert.match(page.text, /<a href="\/">Open the crows console<\/a>/);
    // The one script is allowed by its hash and nothing else runs.
    const script = /<script>([^<]*)<\/script>/.exec(page.text)![1]!;
    const hash = createHash("sha256").update(script).digest("base64");
    assert.match(
      page.headers.get("content-security-policy") ?? "",
      new RegExp(`script-src 'sha256-${hash.replace(/[+/]/g, "\\$&")}'`),
    );
    // The reject link's page offers no approval.
    const rejectPage = await fetch(reject_url).then((r) => r.text());
    assert.not.match(rejectPage, /Approve instead|class="instead"/);
    assert.is((await server.app.log.state.approval(item, "triage"))?.status, "pending", "opening changed nothing");
    // Pressing "Reject instead" rejects, through the reject link.
    const pressed = await fetch(new URL(rejectPath, approve_url), {
      method: "POST",
      headers: { origin: new URL(approve_url).origin, "content-type": "application/x-www-form-urlencoded" },
    });
    assert.is(pressed.status, 200);
    assert.is((await server.app.log.state.approval(item, "triage"))?.status, "rejected");
  } finally {
    await server.close();
    await receiver.close();
  }
});

test.run();
